"""A Claude.ai data export (``conversations.json``, or the ``.zip`` Claude.ai mails, which holds it).

``conversations.json`` is a list of conversations, each with a ``uuid``, a ``name``, ``created_at``
and ``chat_messages``: messages with a ``uuid``, a ``sender`` (``human`` or ``assistant``), the
rendered ``text``, its ``content`` blocks (``text``, and ``tool_use``, ``tool_result``, ``thinking``
...), ``created_at`` (ISO 8601), and the ``attachments`` and ``files`` the person added.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from ..models import USER_NAMESPACE, Memory, MemoryType
from ..validation import (
    DEFAULT_LIMITS,
    MAX_THREAD_CHARS,
    Limits,
    validate_thread,
)
from .chat_archive import CONVERSATIONS, not_a_list, read_conversations
from .chat_messages import ChatConversation, ChatReading, titled
from .import_file import ImportFile

CLAUDE_EXPORT = "A Claude.ai export"
ROLES = {"human": "user", "assistant": "assistant"}  # the export's sender → the role we record


def parse_claude_conversations(
    conversations: Any,
    *,
    namespace: str = USER_NAMESPACE,
    include_assistant: bool = False,
    memory_type: MemoryType = MemoryType.SEMANTIC,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportFile:
    """One memory per message of the person (``sender: human``) with text, and per assistant reply
    if asked, from the parsed ``conversations.json`` of a Claude.ai export, in ``namespace`` (default
    ``user``). A message's text is its ``text`` blocks (tool calls, their results and thinking are
    left out); a message without content blocks gives its ``text``. Attachments are named in the
    metadata, their content is not imported. Chit-chat is left out and counted
    (``ImportFile.chit_chat``). Ids are uuid5 of (namespace, conversation uuid, message uuid):
    re-importing is a no-op. Everything is checked before a memory is returned: a bad conversation
    raises InvalidInputError naming it. A message longer than ``limits`` allows is cut."""
    if not isinstance(conversations, list):
        raise InvalidInputError(not_a_list(CLAUDE_EXPORT))
    return _claude_memories(
        conversations,
        namespace=namespace,
        include_assistant=include_assistant,
        memory_type=memory_type,
        limits=limits,
    )


def read_claude(
    path: Path, *, namespace: str, include_assistant: bool, memory_type: MemoryType, limits: Limits
) -> ImportFile:
    """The memories of a Claude.ai export (``conversations.json`` or its ``.zip``), read one
    conversation at a time, counting the lone surrogates replaced with U+FFFD."""

    def build(conversations: Iterable[Any]) -> ImportFile:
        return _claude_memories(
            conversations,
            namespace=namespace,
            include_assistant=include_assistant,
            memory_type=memory_type,
            limits=limits,
        )

    return read_conversations(path, build, export=CLAUDE_EXPORT)


def _claude_memories(
    conversations: Iterable[Any],
    *,
    namespace: str,
    include_assistant: bool,
    memory_type: MemoryType,
    limits: Limits,
) -> ImportFile:
    """The memories of :func:`parse_claude_conversations`, from conversations one at a time."""
    senders = frozenset({"human", "assistant"} if include_assistant else {"human"})
    reading = ChatReading("claude", namespace, senders, memory_type, limits)
    for index, conversation in enumerate(conversations, start=1):
        _read_conversation(reading, index, conversation)
    return reading.result()


def _conversation(index: int, conversation: Any) -> tuple[ChatConversation, list[Any], datetime | None]:
    """The conversation's fields, its messages and when it started (the time of a message without
    one), or InvalidInputError naming it."""
    conversation, name, where = titled(index, conversation, "name")
    uuid = conversation.get("uuid")
    if not isinstance(uuid, str) or not uuid.strip():
        raise InvalidInputError(f"{where}: no 'uuid'; is this a Claude.ai export's {CONVERSATIONS}?")
    messages = conversation.get("chat_messages")
    if not isinstance(messages, list):
        raise InvalidInputError(f"{where}: 'chat_messages' is not a list of messages.")
    thread = validate_thread(f"claude:{uuid}"[:MAX_THREAD_CHARS])
    started = _time(conversation.get("created_at"), where)
    return ChatConversation(uuid, name, thread, where), messages, started


def _checked_message(
    conversation: ChatConversation, started: datetime | None, position: int, message: Any
) -> tuple[str, datetime]:
    """A message's uuid and time (the conversation's when it has none), or InvalidInputError naming it."""
    where = f"{conversation.where}, message {position}"
    if not isinstance(message, Mapping):
        raise InvalidInputError(f"{where}: expected an object, got {type(message).__name__}.")
    message_id = message.get("uuid")
    if not isinstance(message_id, str) or not message_id.strip():
        raise InvalidInputError(f"{where}: no 'uuid'; is this a Claude.ai export's {CONVERSATIONS}?")
    where = f"{conversation.where}, message {message_id}"
    created = _time(message.get("created_at"), where) or started
    if created is None:
        raise InvalidInputError(f"{where}: no created_at on the message or the conversation.")
    return message_id, created


def _read_conversation(reading: ChatReading, index: int, conversation: Any) -> None:
    """Every message of the conversation checked; the ones to import added to ``reading`` in the
    order they were sent."""
    checked, messages, started = _conversation(index, conversation)
    found: list[tuple[tuple[datetime, int], str, Memory]] = []
    for position, message in enumerate(messages, start=1):
        message_id, created = _checked_message(checked, started, position, message)
        sender = message.get("sender")
        if not isinstance(sender, str) or sender not in reading.roles:
            continue
        text = _message_text(message)
        if not text or reading.is_chit_chat(checked, message_id, text):
            continue
        attachments = _attachment_names(message)
        memory = reading.memory(
            checked,
            message_id,
            ROLES[sender],
            text,
            created,
            **({"attachments": attachments} if attachments else {}),
        )
        found.append(((created, position), message_id, memory))
    reading.keep(checked, found)


def _time(value: Any, where: str) -> datetime | None:
    """An ISO 8601 time of the export, in UTC (one without an offset is taken as UTC); None if absent."""
    if value is None or value == "":
        return None
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise InvalidInputError(f"{where}: created_at {value!r} is not an ISO 8601 time.")
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _message_text(message: Mapping[str, Any]) -> str:
    """The message's ``text`` blocks, joined; its ``text`` when it has no content blocks. A message
    whose blocks hold no text (a tool call alone) has none: its ``text`` is then only a placeholder."""
    content = message.get("content")
    if isinstance(content, list) and content:
        texts = [b.get("text") for b in content if isinstance(b, Mapping) and b.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str) and t.strip()).strip()
    text = message.get("text")
    return text.strip() if isinstance(text, str) else ""


def _attachment_names(message: Mapping[str, Any]) -> list[str]:
    """The names of the files the person attached (``attachments``: pasted or uploaded text;
    ``files``: images and other files), each once."""
    names: dict[str, None] = {}
    for key in ("attachments", "files"):
        items = message.get(key)
        for item in items if isinstance(items, list) else ():
            name = item.get("file_name") if isinstance(item, Mapping) else None
            if isinstance(name, str) and name.strip():
                names[name] = None
    return list(names)
