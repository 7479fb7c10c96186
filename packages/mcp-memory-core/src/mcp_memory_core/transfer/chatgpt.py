"""A ChatGPT data export (``conversations.json``, or the ``.zip`` that contains it)."""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TextIO

from .. import json_stream
from ..errors import InvalidInputError
from ..junk import is_chit_chat
from ..models import (
    USER_NAMESPACE,
    Memory,
    MemoryType,
    derived_id,
)
from ..validation import (
    DEFAULT_LIMITS,
    MAX_THREAD_CHARS,
    Limits,
    validate_namespace,
    validate_thread,
)
from .import_file import ENCODING, ImportFile, clip

# A ChatGPT export's conversations.json is read one conversation at a time; inside a zip it may not
# inflate past this (a zip bomb: a few megabytes that inflate to gigabytes), and no conversation may
# be longer than this (a conversation that never ends is not one).
MAX_CHATGPT_JSON_BYTES = 512 << 20
MAX_CONVERSATION_CHARS = 64 << 20
NOT_A_LIST = "A ChatGPT export's conversations.json holds a JSON list of conversations; this is not a list."

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
    namespace = validate_namespace(namespace)
    roles = {"user", "assistant"} if include_assistant else {"user"}
    memories: dict[str, Memory] = {}
    origins: dict[str, str] = {}
    chit_chat: set[tuple[str, str]] = (
        set()
    )  # (conversation id, message id): a conversation listed twice counts once
    for index, conversation in enumerate(conversations, start=1):
        if not isinstance(conversation, Mapping):
            raise InvalidInputError(
                f"conversation {index}: expected an object, got {type(conversation).__name__}."
            )
        title = conversation.get("title")
        title = title if isinstance(title, str) and title.strip() else "Untitled"
        mapping = conversation.get("mapping")
        if not isinstance(mapping, Mapping):
            raise InvalidInputError(f"conversation {index} ({title!r}): no 'mapping' of messages.")
        conversation_time = _epoch(conversation.get("create_time"))
        conversation_id = conversation.get("conversation_id") or conversation.get("id")
        if not isinstance(conversation_id, str) or not conversation_id:
            conversation_id = derived_id("chatgpt-conversation", title, repr(conversation.get("create_time")))
        thread = validate_thread(f"chatgpt:{conversation_id}"[:MAX_THREAD_CHARS])
        found: list[tuple[datetime, str, Memory]] = []
        for node_id, node in mapping.items():
            message = node.get("message") if isinstance(node, Mapping) else None
            if not isinstance(message, Mapping):
                continue
            author = message.get("author")
            role = author.get("role") if isinstance(author, Mapping) else None
            if role not in roles:
                continue
            meta = message.get("metadata")
            if isinstance(meta, Mapping) and meta.get("is_visually_hidden_from_conversation"):
                continue
            text = _message_text(message)
            if not text:
                continue
            if is_chit_chat(text):
                chit_chat.add((conversation_id, str(node_id)))
                continue
            created = _epoch(message.get("create_time")) or conversation_time
            if created is None:
                raise InvalidInputError(
                    f"conversation {index} ({title!r}), message {node_id}: no create_time on the message "
                    "or the conversation."
                )
            content, clipped = clip(text, limits.content_bytes)
            memory = Memory(
                id=derived_id("chatgpt", namespace, conversation_id, str(node_id)),
                content=content,
                metadata={
                    "source": "chatgpt",
                    "conversation": title,
                    "conversation_id": conversation_id,
                    "message_id": str(node_id),
                    "role": role,
                    **clipped,
                },
                created_at=created,
                updated_at=created,
                occurred_at=created,
                thread=thread,
                namespace=namespace,
                type=memory_type,
                tags=("chatgpt",),
            )
            found.append((created, str(node_id), memory))
        for _, node, memory in sorted(found, key=lambda item: (item[0], item[1])):
            if memory.id not in memories:  # a conversation listed twice imports once
                memories[memory.id] = memory
                origins[memory.id] = f"conversation {index} ({title!r}), message {node}"
    return ImportFile(list(memories.values()), origins, chit_chat=len(chit_chat))


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


class Inflated(io.RawIOBase):
    """A zip member's bytes, counted as they are read: past ``limit``, InvalidInputError(``refusal``)
    (a zip's header may understate what its member inflates to)."""

    def __init__(self, raw: IO[bytes], *, limit: int, refusal: str) -> None:
        self.raw, self.limit, self.refusal, self.count = raw, limit, refusal, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        self.count += len(data)
        if self.count > self.limit:
            raise InvalidInputError(self.refusal)
        memoryview(buffer)[: len(data)] = data
        return len(data)


@contextmanager
def _chatgpt_text(path: Path) -> Iterator[TextIO]:
    """The text of ``conversations.json``: the file itself, or the member of the export's ``.zip``
    (refused, unread, when its header says it inflates past MAX_CHATGPT_JSON_BYTES; stopped there
    whatever the header says)."""
    if not zipfile.is_zipfile(path):
        with path.open(encoding=ENCODING) as handle:
            yield handle
        return
    with zipfile.ZipFile(path) as archive:
        found = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == "conversations.json"]
        if not found:
            raise InvalidInputError(f"{path} is a zip without a conversations.json.")
        member = min(found, key=lambda info: len(info.filename))
        limit = MAX_CHATGPT_JSON_BYTES

        def refusal(size: str) -> str:
            return (
                f"{path}: its conversations.json inflates to {size}, more than the {_mib(limit)} an import "
                "reads from a zip; unzip it and import the conversations.json file itself."
            )

        if member.file_size > limit:
            raise InvalidInputError(refusal(_mib(member.file_size)))
        with archive.open(member) as raw:
            inflated = Inflated(raw, limit=limit, refusal=refusal(f"more than {_mib(limit)}"))
            with io.TextIOWrapper(io.BufferedReader(inflated), encoding=ENCODING) as text:
                yield text


def read_chatgpt(
    path: Path, *, namespace: str, include_assistant: bool, memory_type: MemoryType, limits: Limits
) -> ImportFile:
    """The memories of a ChatGPT export (``conversations.json`` or its ``.zip``), read one conversation
    at a time, counting the lone surrogates replaced with U+FFFD (ChatGPT exports hold emoji cut in half)."""
    repaired = 0

    def conversations(text: TextIO) -> Iterator[Any]:
        nonlocal repaired
        for conversation, count in json_stream.iter_array(text, max_element_chars=MAX_CONVERSATION_CHARS):
            repaired += count
            yield conversation

    try:
        with _chatgpt_text(path) as text:
            parsed = _chatgpt_memories(
                conversations(text),
                namespace=namespace,
                include_assistant=include_assistant,
                memory_type=memory_type,
                limits=limits,
            )
    except json_stream.NotAnArray:
        raise InvalidInputError(NOT_A_LIST) from None
    except json_stream.ElementTooLarge as exc:
        raise InvalidInputError(
            f"{path}: conversation {exc.index} is larger than {MAX_CONVERSATION_CHARS:,} characters; "
            "is this a ChatGPT export's conversations.json?"
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path}: not JSON (line {exc.lineno}: {exc.msg}).") from None
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise InvalidInputError(f"{path}: the zip is damaged ({exc}); download the export again.") from None
    return replace(parsed, repaired=repaired)
