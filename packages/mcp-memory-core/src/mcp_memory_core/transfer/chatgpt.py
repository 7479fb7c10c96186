"""A ChatGPT data export (``conversations.json``, or the ``.zip`` that contains it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError
from ..models import USER_NAMESPACE, Memory, MemoryType, derived_id
from ..validation import DEFAULT_LIMITS, MAX_THREAD_CHARS, Limits, validate_thread
from .chat_archive import not_a_list, read_conversations
from .chat_messages import ChatConversation, ChatReading, titled
from .import_file import ImportFile

CHATGPT_EXPORT = "A ChatGPT export"
NOT_A_LIST = not_a_list(CHATGPT_EXPORT)

CHATGPT_TEXT_TYPES = frozenset({"text", "multimodal_text"})


def _epoch(value: Any) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        return None
    try:
        return datetime.fromtimestamp(float(value), UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, Mapping) or content.get("content_type") not in CHATGPT_TEXT_TYPES:
        return ""
    parts = content.get("parts")
    if not isinstance(parts, list):
        return ""
    return "\n".join(p for p in parts if isinstance(p, str) and p.strip()).strip()


def parse_chatgpt_conversations(
    conversations: Any,
    *,
    namespace: str = USER_NAMESPACE,
    include_assistant: bool = False,
    memory_type: MemoryType = MemoryType.SEMANTIC,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportFile:
    """One memory per user message with text (and per assistant reply if asked), from the
    parsed ``conversations.json`` of a ChatGPT data export, in ``namespace`` (default ``user``: what a
    person told an assistant is about them, not about a project). System and tool messages, hidden
    messages and non-text parts (images, code runs) are skipped; chit-chat ("hi", "thanks!",
    :func:`~..junk.is_chit_chat`) is left out and counted (``ImportFile.chit_chat``). Ids are uuid5 of
    (namespace, conversation id, message node id): re-importing is a no-op. A message longer than
    ``limits`` allows is cut."""
    if not isinstance(conversations, list):
        raise InvalidInputError(NOT_A_LIST)
    return _chatgpt_memories(
        conversations,
        namespace=namespace,
        include_assistant=include_assistant,
        memory_type=memory_type,
        limits=limits,
    )


def _chatgpt_memories(
    conversations: Iterable[Any],
    *,
    namespace: str,
    include_assistant: bool,
    memory_type: MemoryType,
    limits: Limits,
) -> ImportFile:
    """The memories of :func:`parse_chatgpt_conversations`, from conversations one at a time."""
    roles = frozenset({"user", "assistant"} if include_assistant else {"user"})
    reading = ChatReading("chatgpt", namespace, roles, memory_type, limits)
    for index, conversation in enumerate(conversations, start=1):
        _read_conversation(reading, index, conversation)
    return reading.result()


def _conversation(
    index: int, conversation: Any
) -> tuple[ChatConversation, Mapping[Any, Any], datetime | None]:
    """The conversation's fields, its ``mapping`` of message nodes and its time, or InvalidInputError
    naming it. A conversation without an id gets one derived from its title and time."""
    conversation, title, where = titled(index, conversation, "title")
    mapping = conversation.get("mapping")
    if not isinstance(mapping, Mapping):
        raise InvalidInputError(f"{where}: no 'mapping' of messages.")
    conversation_id = conversation.get("conversation_id") or conversation.get("id")
    if not isinstance(conversation_id, str) or not conversation_id:
        conversation_id = derived_id("chatgpt-conversation", title, repr(conversation.get("create_time")))
    thread = validate_thread(f"chatgpt:{conversation_id}"[:MAX_THREAD_CHARS])
    return (
        ChatConversation(conversation_id, title, thread, where),
        mapping,
        _epoch(conversation.get("create_time")),
    )


def _read_conversation(reading: ChatReading, index: int, conversation: Any) -> None:
    """The conversation's messages to import added to ``reading``, in the order they were sent."""
    checked, mapping, conversation_time = _conversation(index, conversation)
    found: list[tuple[tuple[datetime, str], str, Memory]] = []
    for node_id, node in mapping.items():
        message = node.get("message") if isinstance(node, Mapping) else None
        if not isinstance(message, Mapping):
            continue
        author = message.get("author")
        role = author.get("role") if isinstance(author, Mapping) else None
        if role not in reading.roles:
            continue
        meta = message.get("metadata")
        if isinstance(meta, Mapping) and meta.get("is_visually_hidden_from_conversation"):
            continue
        text = _message_text(message)
        if not text or reading.is_chit_chat(checked, str(node_id), text):
            continue
        created = _epoch(message.get("create_time")) or conversation_time
        if created is None:
            raise InvalidInputError(
                f"{checked.where}, message {node_id}: no create_time on the message or the conversation."
            )
        memory = reading.memory(checked, str(node_id), str(role), text, created)
        found.append(((created, str(node_id)), str(node_id), memory))
    reading.keep(checked, found)


def read_chatgpt(
    path: Path, *, namespace: str, include_assistant: bool, memory_type: MemoryType, limits: Limits
) -> ImportFile:
    """The memories of a ChatGPT export (``conversations.json`` or its ``.zip``), read one conversation
    at a time, counting the lone surrogates replaced with U+FFFD (ChatGPT exports hold emoji cut in half)."""

    def build(conversations: Iterable[Any]) -> ImportFile:
        return _chatgpt_memories(
            conversations,
            namespace=namespace,
            include_assistant=include_assistant,
            memory_type=memory_type,
            limits=limits,
        )

    return read_conversations(path, build, export=CHATGPT_EXPORT)
