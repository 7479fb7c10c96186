"""Moving memories in and out: the mcp-memory export format, and importers for other tools' data.

**mcp-memory JSON Lines v1** (``export_memories`` / ``read_mcp_memory_jsonl``): UTF-8, one JSON object
per line. The first line is a header ``{"count": N, "exported_at": ISO, "format": "mcp-memory",
"version": 1}``; every following line is one memory with every field of :class:`~.models.Memory`
(chains, tombstones, pins and access statistics included). Keys are sorted, datetimes are ISO 8601
in UTC with microseconds, memories are ordered by (namespace, created_at, id): exporting the same
memories with the same ``now`` gives the same bytes.

**With vectors** (``export_memories(..., vectors=True)``; format version 2, otherwise the same): the
header adds ``"embedder": {"model": ID, "dimensions": D}`` and every memory a ``"vectors"`` list, its
whole text's vector then its passages', each the base64 of D little-endian float32. An import into a
store bound to the same model reuses them (no embedding: much faster, and the same search results);
into another model's store it embeds again. Version 1 files (no vectors) are read as before.

Importers for other tools produce memories with deterministic ids (uuid5 of the source's own ids and
the target namespace), so importing the same file twice inserts nothing the second time:

- a ChatGPT data export (``conversations.json``, or the ``.zip`` that contains it): one memory per
  user message (semantic by default: imported history is older than the episodic lifetime;
  ``include_assistant`` adds the assistant's replies), dated when it was sent, its thread the
  conversation (``chatgpt:<conversation id>``). ``conversations.json`` is read one conversation at a
  time (:mod:`.json_stream`); inside a zip it may inflate to at most ``MAX_CHATGPT_JSON_BYTES``;
- the official MCP memory server's knowledge graph (``memory.jsonl`` of
  ``@modelcontextprotocol/server-memory``): one semantic memory per observation and per relation.

Only regular files are read (a device or a pipe may never end). Everything is validated before it
is returned: a bad input raises :class:`InvalidInputError` that says
where (line number, conversation) and what is wrong. A reader returns an :class:`ImportFile`, which
remembers where each memory came from, so the engine's own refusals (another owner, a date in year
9999, a chain into another namespace) name the line too. Every reader accepts a UTF-8 byte order mark,
and replaces lone UTF-16 surrogates (an emoji cut in half) with U+FFFD, counting them
(:mod:`.surrogates`).
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, TextIO

import numpy as np
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from . import json_stream, surrogates
from .errors import ImportRecordError, InvalidInputError, StorageError
from .models import (
    DEFAULT_NAMESPACE,
    LOCAL_USER,
    ImportOutcome,
    Memory,
    MemoryType,
    PrivacyScope,
    derived_id,
    utcnow,
)
from .protocols import StoredVectors, Vector
from .scope import Scope, validate_principal
from .validation import (
    DEFAULT_LIMITS,
    MAX_THREAD_CHARS,
    Limits,
    utf8_size,
    validate_content,
    validate_id,
    validate_metadata,
    validate_namespace,
    validate_tags,
    validate_thread,
)

if TYPE_CHECKING:
    from .engine import MemoryEngine

FORMAT_NAME = "mcp-memory"
FORMAT_VERSION = 1
VECTORS_FORMAT_VERSION = 2  # version 1 plus the embedder in the header and each memory's vectors
FORMATS = ("mcp-memory", "chatgpt", "mcp-knowledge-graph")
Format = Literal["mcp-memory", "chatgpt", "mcp-knowledge-graph"]

# A memory's vectors in an export: its whole text plus at most this many passages (far above what
# split_passages makes of the largest content), and how many memories' vectors are read at a time.
MAX_VECTOR_ROWS = 1024
_VECTOR_BATCH = 256

# A ChatGPT export's conversations.json is read one conversation at a time; inside a zip it may not
# inflate past this (a zip bomb: a few megabytes that inflate to gigabytes), and no conversation may
# be longer than this (a conversation that never ends is not one).
MAX_CHATGPT_JSON_BYTES = 512 << 20
MAX_CONVERSATION_CHARS = 64 << 20
NOT_A_LIST = "A ChatGPT export's conversations.json holds a JSON list of conversations; this is not a list."

DETECT_LINE_CHARS = 1 << 20  # of the first line, read to guess a file's format

TRUNCATION_MARK = " …[truncated]"
BOM = "\ufeff"
# A file's text encoding: UTF-8, with or without a byte order mark (Windows editors write one).
ENCODING = "utf-8-sig"


@dataclass(frozen=True)
class ImportFile(Sequence[Memory]):
    """The memories read from one file, in order, with where each came from (``origins``: memory id →
    ``"line 7"`` or ``"conversation 3 ('Trip'), message m2"``), how many lone surrogates the
    reader replaced with U+FFFD (``repaired``), and the vectors the file carried (``vectors``)."""

    memories: list[Memory]
    origins: dict[str, str] = field(default_factory=dict)
    repaired: int = 0
    vectors: StoredVectors | None = None  # an export's own vectors, when it carries them

    def __len__(self) -> int:
        return len(self.memories)

    def __iter__(self) -> Iterator[Memory]:
        return iter(self.memories)

    def __getitem__(self, index: Any) -> Any:
        return self.memories[index]

    def where(self, memory_id: str) -> str:
        return self.origins.get(memory_id, f"memory {memory_id}")


# -- the mcp-memory format -------------------------------------------------------------------------
def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


def format_datetime(value: datetime | None) -> str | None:
    """ISO 8601, UTC, always with microseconds (``2026-01-31T09:00:00.000000+00:00``)."""
    if value is None:
        return None
    if value.tzinfo is None:  # the engine only stores aware datetimes; be safe with naive ones
        value = value.replace(tzinfo=UTC)
    return _utc(value).isoformat(timespec="microseconds")


class ExportEmbedder(BaseModel):
    """The model that made an export's vectors."""

    model_config = ConfigDict(extra="ignore", strict=True)

    model: str = Field(min_length=1, max_length=500)
    dimensions: int = Field(ge=1, le=65536)


class ExportHeader(BaseModel):
    """The first line of an export."""

    model_config = ConfigDict(extra="ignore")

    format: str
    version: int
    exported_at: AwareDatetime | None = None
    count: int | None = Field(default=None, ge=0)
    embedder: ExportEmbedder | None = None  # version 2: the model of the memories' vectors


class ExportRecord(BaseModel):
    """One memory as a line of an export: the edge validation of :class:`~.models.Memory`.

    Mirrors every Memory field (a test keeps them in step). Strict: no string-to-number coercion, no
    unknown keys, timezone-aware datetimes only. A NUL character in content, metadata or tags passes
    (a store that took one wrote it): the engine refuses that memory by id and imports the rest.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: AwareDatetime
    updated_at: AwareDatetime
    superseded_by: str | None = None
    deleted_at: AwareDatetime | None = None
    namespace: str = Field(min_length=1)
    type: MemoryType = MemoryType.SEMANTIC
    tags: list[str] = Field(default_factory=list)
    importance: float = Field(default=0.5, ge=0.0, le=1.0, allow_inf_nan=False)
    pinned: bool = False
    access_count: int = Field(default=0, ge=0)
    last_accessed: AwareDatetime | None = None
    owner: str | None = None  # absent in exports older than owners: the importing user's
    privacy_scope: PrivacyScope = PrivacyScope.PRIVATE
    occurred_at: AwareDatetime | None = None  # absent in older exports: the memory's created_at
    thread: str | None = None
    vectors: list[str] | None = Field(default=None, min_length=1, max_length=MAX_VECTOR_ROWS)  # version 2

    @field_validator("id", "superseded_by")
    @classmethod
    def _uuid(cls, value: str | None) -> str | None:
        return None if value is None else validate_id(value)

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str) -> str:
        return validate_namespace(value)

    @field_validator("owner")
    @classmethod
    def _owner(cls, value: str | None) -> str | None:
        return None if value is None else validate_principal(value)

    @field_validator("content")
    @classmethod
    def _content(cls, value: str, info: ValidationInfo) -> str:
        return validate_content(value, _limits(info).content_bytes, nul_ok=True)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        return validate_metadata(value, _limits(info).metadata_bytes, nul_ok=True)

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str]) -> list[str]:
        return list(validate_tags(value, nul_ok=True) or ())

    @field_validator("thread")
    @classmethod
    def _thread(cls, value: str | None) -> str | None:
        return None if value is None else validate_thread(value)

    @field_validator("created_at", "updated_at", "deleted_at", "last_accessed", "occurred_at")
    @classmethod
    def _as_utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _utc(value)

    @classmethod
    def from_memory(cls, memory: Memory) -> dict[str, Any]:
        """The JSON object of one memory (plain types, ready for ``json.dumps``)."""
        return {
            "id": memory.id,
            "content": memory.content,
            "metadata": memory.metadata,
            "created_at": format_datetime(memory.created_at),
            "updated_at": format_datetime(memory.updated_at),
            "superseded_by": memory.superseded_by,
            "deleted_at": format_datetime(memory.deleted_at),
            "namespace": memory.namespace,
            "type": MemoryType(memory.type).value,
            "tags": list(memory.tags),
            "importance": float(memory.importance),
            "pinned": bool(memory.pinned),
            "access_count": int(memory.access_count),
            "last_accessed": format_datetime(memory.last_accessed),
            "owner": memory.owner,
            "privacy_scope": PrivacyScope(memory.privacy_scope).value,
            "occurred_at": format_datetime(memory.occurred_at),
            "thread": memory.thread,
        }

    def to_memory(self, owner: str = LOCAL_USER) -> Memory:
        """The memory; ``owner`` is used when the record names none (an export older than owners)."""
        fields = self.model_dump(exclude={"vectors"})
        return Memory(**{**fields, "tags": tuple(self.tags), "owner": self.owner or owner})


def encode_vectors(rows: Vector) -> list[str]:
    """Each row as the base64 of its little-endian float32 values."""
    array = np.ascontiguousarray(rows, dtype="<f4")
    return [base64.b64encode(row.tobytes()).decode("ascii") for row in array]


def decode_vectors(encoded: Sequence[str], dimensions: int) -> Vector:
    """The (rows, dimensions) float32 array of :func:`encode_vectors`' output; ValueError if a row is
    not base64 of ``dimensions`` finite float32 values."""
    size = 4 * dimensions
    raw = []
    for index, text in enumerate(encoded):
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"vector {index + 1} is not base64") from None
        if len(data) != size:
            raise ValueError(
                f"vector {index + 1} holds {len(data) // 4} numbers, the header's embedder {dimensions}"
            )
        raw.append(data)
    array = np.frombuffer(b"".join(raw), dtype="<f4").reshape(len(raw), dimensions).astype(np.float32)
    if not np.isfinite(array).all():
        raise ValueError("a vector holds a number that is not finite")
    return array


def _dumps(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def export_memories(
    engine: MemoryEngine,
    out: TextIO,
    *,
    namespace: str | None = None,
    now: datetime | None = None,
    scope: Scope | None = None,
    vectors: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write every memory the scope's principal owns (of ``namespace``, or of every namespace when
    ``None``) to ``out`` as mcp-memory JSON Lines (version 1; version 2 with ``vectors``, carrying
    each memory's stored vectors); return how many were written. ``now`` fixes ``exported_at`` (for
    reproducible output); it defaults to the current time. ``progress(written, total)`` is called
    once the memories are read (0 written) and after every batch written (progress bars)."""
    memories = list(engine.iter_memories(namespace or "*", scope=scope))
    memories.sort(key=lambda m: (m.namespace, _utc(m.created_at), m.id))
    header: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": VECTORS_FORMAT_VERSION if vectors else FORMAT_VERSION,
        "exported_at": format_datetime(now if now is not None else utcnow()),
        "count": len(memories),
    }
    if vectors:
        model = engine.memory_vectors([], scope=scope)  # fails here, before a line is written
        header["embedder"] = {"model": model.model_id, "dimensions": model.dimensions}
    out.write(_dumps(header) + "\n")
    if progress is not None:
        progress(0, len(memories))
    for start in range(0, len(memories), _VECTOR_BATCH):
        batch = memories[start : start + _VECTOR_BATCH]
        rows = engine.memory_vectors([m.id for m in batch], scope=scope).rows if vectors else {}
        for memory in batch:
            record = ExportRecord.from_memory(memory)
            if vectors:
                if memory.id not in rows:
                    raise StorageError(f"Memory {memory.id} has no stored vector: the store is damaged.")
                record["vectors"] = encode_vectors(rows[memory.id])
            out.write(_dumps(record) + "\n")
        if progress is not None:
            progress(start + len(batch), len(memories))
    return len(memories)


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(p) for p in item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines; a byte order mark before the first is dropped."""
    for number, line in enumerate(lines, start=1):
        if number == 1:
            line = line.removeprefix(BOM)
        if line.strip():
            yield number, line


def _limits(info: ValidationInfo) -> Limits:
    """The limits an ExportRecord is validated against: the importing engine's, passed as context."""
    context = info.context if isinstance(info.context, Mapping) else {}
    limits = context.get("limits")
    return limits if isinstance(limits, Limits) else DEFAULT_LIMITS


def read_mcp_memory_jsonl(
    lines: Iterable[str], *, owner: str = LOCAL_USER, limits: Limits = DEFAULT_LIMITS
) -> ImportFile:
    """Parse and validate a whole mcp-memory export (records without an owner get ``owner``; content
    and metadata within ``limits``: pass the importing engine's).

    Raises :class:`InvalidInputError` naming the line for a missing or foreign header, a line that is
    not JSON or not a valid memory, a duplicate id, or a record count that disagrees with the header
    (a truncated file).
    """
    numbered = _numbered(lines)
    first = next(numbered, None)
    if first is None:
        raise InvalidInputError("The file is empty: an mcp-memory export starts with a header line.")
    number, text = first
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"line {number}: not JSON ({exc.msg}); expected the export header.") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_NAME:
        raise InvalidInputError(
            f'line {number}: not an mcp-memory export header (expected {{"format": "mcp-memory", '
            f'"version": 1, …}}). Pick the right --format for this file.'
        )
    try:
        header = ExportHeader.model_validate(raw)
    except ValidationError as exc:
        raise InvalidInputError(f"line {number}: invalid export header: {_describe(exc)}") from None
    if header.version not in (FORMAT_VERSION, VECTORS_FORMAT_VERSION):
        newer = (
            " (written by a newer mcp-memory: upgrade to read it)"
            if header.version > VECTORS_FORMAT_VERSION
            else ""
        )
        raise InvalidInputError(
            f"line {number}: unsupported export version {header.version}{newer}; "
            f"this mcp-memory reads versions {FORMAT_VERSION} and {VECTORS_FORMAT_VERSION}."
        )
    embedder = header.embedder
    seen: dict[str, int] = {}
    memories: list[Memory] = []
    vectors: dict[str, Vector] = {}
    repaired = 0
    for number, text in numbered:
        text, count = surrogates.repair_json(text)
        repaired += count
        try:
            record = ExportRecord.model_validate_json(text, context={"limits": limits})
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":
                raise InvalidInputError(f"line {number}: not valid JSON ({_describe(exc)}).") from None
            raise InvalidInputError(f"line {number}: invalid memory: {_describe(exc)}") from None
        if record.id in seen:
            raise InvalidInputError(
                f"line {number}: duplicate memory id {record.id} (also on line {seen[record.id]})."
            )
        seen[record.id] = number
        if record.vectors is not None:
            if embedder is None:
                raise InvalidInputError(
                    f"line {number}: this memory carries vectors but the header names no embedder "
                    '(version 2 headers have "embedder": {"model": …, "dimensions": …}).'
                )
            try:
                vectors[record.id] = decode_vectors(record.vectors, embedder.dimensions)
            except ValueError as exc:
                raise InvalidInputError(f"line {number}: invalid vectors: {exc}.") from None
        memories.append(record.to_memory(owner))
    if header.count is not None and header.count != len(seen):
        raise InvalidInputError(
            f"The header says {header.count} memories but the file holds {len(seen)}: "
            "it was truncated or edited. Export it again."
        )
    carried = StoredVectors(embedder.model, embedder.dimensions, vectors) if embedder and vectors else None
    return ImportFile(memories, {memory_id: f"line {n}" for memory_id, n in seen.items()}, repaired, carried)


# -- importing -------------------------------------------------------------------------------------
@contextmanager
def _located(memories: Iterable[Memory]) -> Iterator[None]:
    """An engine refusal of one memory of an :class:`ImportFile`, told by its line or conversation."""
    try:
        yield
    except ImportRecordError as exc:
        if isinstance(memories, ImportFile):
            raise InvalidInputError(f"{memories.where(exc.memory_id)}: {exc.reason}") from None
        raise


def check_records(engine: MemoryEngine, memories: Sequence[Memory], *, scope: Scope | None = None) -> None:
    """Refuse, naming its line (for an :class:`ImportFile`), the first memory ``import_records`` would
    refuse; nothing is written."""
    with _located(memories):
        engine.check_import(memories, scope=scope)


def import_records(
    engine: MemoryEngine,
    memories: Iterable[Memory],
    *,
    batch_size: int = 64,
    on_batch: Callable[[int], None] | None = None,
    scope: Scope | None = None,
) -> ImportOutcome:
    """Insert whole memories as they are (ids, namespaces, chains, tombstones), embedding each one
    (superseded versions too, so their wording still finds the head) unless the file carries its
    vectors from the same model (then they are reused). Ids already present are
    skipped: importing the same records twice inserts nothing the second time. The engine checks
    every memory before it writes any (see ``MemoryEngine.import_memories``); given an
    :class:`ImportFile`, its refusal names the line or conversation, and the outcome counts the
    lone surrogates the reader repaired."""
    carried = memories.vectors if isinstance(memories, ImportFile) else None
    with _located(memories):
        outcome = engine.import_memories(
            memories, batch_size=batch_size, on_batch=on_batch, scope=scope, vectors=carried
        )
    if isinstance(memories, ImportFile) and memories.repaired:
        return replace(outcome, repaired=memories.repaired)
    return outcome


def refused_records(memories: Sequence[Memory], outcome: ImportOutcome) -> list[dict[str, str]]:
    """Each memory the import refused (``outcome.refused``), in file order: its id, where it came
    from (``"line 7"`` for an :class:`ImportFile`) and why."""
    where = memories.where if isinstance(memories, ImportFile) else (lambda memory_id: f"memory {memory_id}")
    return [
        {"id": m.id, "where": where(m.id), "reason": outcome.refused[m.id]}
        for m in memories
        if m.id in outcome.refused
    ]


def _clip(text: str, max_bytes: int) -> tuple[str, dict[str, Any]]:
    """Content within the engine's byte limit; a longer text is cut (on a character boundary) and says
    so in its metadata."""
    if utf8_size(text) <= max_bytes:
        return text, {}
    room = max(0, max_bytes - utf8_size(TRUNCATION_MARK))
    cut = text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore") + TRUNCATION_MARK
    return cut, {"truncated": True, "original_chars": len(text)}


def _tag(value: str) -> tuple[str, ...]:
    tag = " ".join(value.split())[:64]
    return (tag,) if tag else ()


# -- ChatGPT data export ---------------------------------------------------------------------------
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
    namespace: str = DEFAULT_NAMESPACE,
    include_assistant: bool = False,
    memory_type: MemoryType = MemoryType.SEMANTIC,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportFile:
    """One memory per user message with text (and per assistant reply if asked), from the
    parsed ``conversations.json`` of a ChatGPT data export. System and tool messages, hidden messages
    and non-text parts (images, code runs) are skipped. Ids are uuid5 of (namespace, conversation id,
    message node id): re-importing is a no-op. A message longer than ``limits`` allows is cut."""
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
            created = _epoch(message.get("create_time")) or conversation_time
            if created is None:
                raise InvalidInputError(
                    f"conversation {index} ({title!r}), message {node_id}: no create_time on the message "
                    "or the conversation."
                )
            content, clipped = _clip(text, limits.content_bytes)
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
    return ImportFile(list(memories.values()), origins)


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


def _read_chatgpt(
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


# -- MCP knowledge graph (@modelcontextprotocol/server-memory) --------------------------------------
def _string(data: Mapping[str, Any], key: str, number: int, kind: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"line {number}: the {kind} needs a non-empty string {key!r}.")
    return value.strip()


def parse_knowledge_graph(
    lines: Iterable[str],
    *,
    namespace: str = DEFAULT_NAMESPACE,
    now: datetime | None = None,
    memory_type: MemoryType = MemoryType.SEMANTIC,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportFile:
    """Memories from the official MCP memory server's ``memory.jsonl``: one semantic memory per
    entity observation (``"{name}: {observation}"``, tagged with the entity type) and one per relation
    (``"{from} {relation type} {to}"``, underscores read as spaces). The graph has no timestamps: every
    memory gets ``now``. Ids are uuid5 of (namespace, the entity and observation / the relation)."""
    namespace = validate_namespace(namespace)
    when = now if now is not None else utcnow()
    memories: dict[str, Memory] = {}
    origins: dict[str, str] = {}
    repaired = 0
    number = 0

    def add(memory: Memory) -> None:
        if memory.id not in memories:
            memories[memory.id] = memory
            origins[memory.id] = f"line {number}"

    for number, text in _numbered(lines):
        try:
            data, count = surrogates.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"line {number}: not JSON ({exc.msg}).") from None
        repaired += count
        if not isinstance(data, Mapping):
            raise InvalidInputError(f"line {number}: expected a JSON object.")
        kind = data.get("type")
        if kind == "entity":
            name = _string(data, "name", number, "entity")
            entity_type = data.get("entityType")
            entity_type = entity_type.strip() if isinstance(entity_type, str) else ""
            observations = data.get("observations", [])
            if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
                raise InvalidInputError(
                    f"line {number}: the entity's 'observations' must be a list of strings."
                )
            for observation in observations:
                if not observation.strip():
                    continue
                content, clipped = _clip(f"{name}: {observation.strip()}", limits.content_bytes)
                add(
                    Memory(
                        id=derived_id("mcp-knowledge-graph", namespace, "entity", name, observation.strip()),
                        content=content,
                        metadata={
                            "source": "mcp-knowledge-graph",
                            "entity": name,
                            "entity_type": entity_type,
                            **clipped,
                        },
                        created_at=when,
                        updated_at=when,
                        namespace=namespace,
                        type=memory_type,
                        tags=_tag(entity_type),
                    )
                )
        elif kind == "relation":
            source = _string(data, "from", number, "relation")
            target = _string(data, "to", number, "relation")
            relation = _string(data, "relationType", number, "relation")
            content, clipped = _clip(
                f"{source} {' '.join(relation.replace('_', ' ').split())} {target}", limits.content_bytes
            )
            add(
                Memory(
                    id=derived_id("mcp-knowledge-graph", namespace, "relation", source, relation, target),
                    content=content,
                    metadata={
                        "source": "mcp-knowledge-graph",
                        "from": source,
                        "relation_type": relation,
                        "to": target,
                        **clipped,
                    },
                    created_at=when,
                    updated_at=when,
                    namespace=namespace,
                    type=memory_type,
                    tags=("relation",),
                )
            )
        else:
            raise InvalidInputError(
                f"line {number}: unknown record type {kind!r}; a knowledge graph line has "
                '"type": "entity" or "relation".'
            )
    return ImportFile(list(memories.values()), origins, repaired)


# -- files -----------------------------------------------------------------------------------------
def _require_regular_file(path: Path) -> None:
    """Only a regular file is read: a device or a pipe (``/dev/zero``) may never end."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # opening it reports what is wrong
    if not stat.S_ISREG(mode):
        raise InvalidInputError(
            f"{path} is not a regular file: save what you want to import to a file and import that."
        )


def _first_line(handle: TextIO) -> str:
    """The first line that is not blank, cut at DETECT_LINE_CHARS (a file of one huge line is not
    read whole to guess its format)."""
    while line := handle.readline(DETECT_LINE_CHARS):
        if line.strip():
            return line
    return ""


def detect_format(path: Path) -> Format:
    """Guess a file's format from its first bytes: a zip or a JSON list is a ChatGPT export; JSON
    Lines with an mcp-memory header is ours; ``"type": "entity"|"relation"`` lines are a knowledge graph."""
    _require_regular_file(path)
    if zipfile.is_zipfile(path):
        return "chatgpt"
    with path.open(encoding=ENCODING, errors="replace") as handle:
        head = handle.read(4096).lstrip()
        handle.seek(0)
        first = _first_line(handle)
    if head.startswith("["):
        return "chatgpt"
    try:
        data = json.loads(first)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        if data.get("format") == FORMAT_NAME:
            return "mcp-memory"
        if data.get("type") in ("entity", "relation"):
            return "mcp-knowledge-graph"
    raise InvalidInputError(f"Cannot tell the format of {path}; pass --format ({', '.join(FORMATS)}).")


def read_memories(
    path: Path,
    format: Format,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    now: datetime | None = None,
    include_assistant: bool = False,
    memory_type: MemoryType | None = None,
    owner: str = LOCAL_USER,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportFile:
    """Read and validate a whole file before anything is written (a bad line late in a file must not
    leave half an import behind; pass the importing engine's ``limits``). ``namespace`` is the target of the chatgpt and knowledge-graph
    formats; mcp-memory records keep their own, and ``memory_type`` (default: semantic — imported
    history is usually older than the episodic lifetime and would expire at once) applies to those
    two formats only. ``owner`` owns what the file does not give an owner (every memory of the
    chatgpt and knowledge-graph formats)."""
    _require_regular_file(path)
    read = _read_memories(path, format, namespace, now, include_assistant, memory_type, owner, limits)
    if format == "mcp-memory":
        return read
    owned = [m if m.owner == owner else m.model_copy(update={"owner": owner}) for m in read]
    return replace(read, memories=owned)


def _read_memories(
    path: Path,
    format: Format,
    namespace: str,
    now: datetime | None,
    include_assistant: bool,
    memory_type: MemoryType | None,
    owner: str,
    limits: Limits,
) -> ImportFile:
    if format == "chatgpt":
        return _read_chatgpt(
            path,
            namespace=namespace,
            include_assistant=include_assistant,
            memory_type=memory_type or MemoryType.SEMANTIC,
            limits=limits,
        )
    try:
        with path.open(encoding=ENCODING) as handle:
            if format == "mcp-memory":
                return read_mcp_memory_jsonl(handle, owner=owner, limits=limits)
            if format == "mcp-knowledge-graph":
                return parse_knowledge_graph(
                    handle,
                    namespace=namespace,
                    now=now,
                    memory_type=memory_type or MemoryType.SEMANTIC,
                    limits=limits,
                )
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    raise InvalidInputError(f"Unknown import format {format!r}; choose one of: {', '.join(FORMATS)}.")


def import_chatgpt(
    engine: MemoryEngine,
    conversations: Any,
    *,
    namespace: str | None = None,
    include_assistant: bool = False,
    batch_size: int = 64,
    on_batch: Callable[[int], None] | None = None,
) -> ImportOutcome:
    """Parse a ChatGPT export (the parsed ``conversations.json``; lone surrogates are repaired and
    counted) and import it into ``namespace`` (default: the engine's)."""
    conversations, repaired = surrogates.repair(conversations)
    memories = parse_chatgpt_conversations(
        conversations,
        namespace=namespace or engine.namespace,
        include_assistant=include_assistant,
        limits=engine.limits,
    )
    return import_records(
        engine, replace(memories, repaired=repaired), batch_size=batch_size, on_batch=on_batch
    )


def import_knowledge_graph(
    engine: MemoryEngine,
    lines: Iterable[str],
    *,
    namespace: str | None = None,
    batch_size: int = 64,
    on_batch: Callable[[int], None] | None = None,
) -> ImportOutcome:
    """Parse an MCP knowledge graph and import it into ``namespace`` (default: the engine's)."""
    memories = parse_knowledge_graph(
        lines, namespace=namespace or engine.namespace, now=engine.clock(), limits=engine.limits
    )
    return import_records(engine, memories, batch_size=batch_size, on_batch=on_batch)


__all__ = [
    "FORMATS",
    "ExportHeader",
    "ExportRecord",
    "ImportFile",
    "check_records",
    "detect_format",
    "export_memories",
    "import_chatgpt",
    "import_knowledge_graph",
    "import_records",
    "parse_chatgpt_conversations",
    "parse_knowledge_graph",
    "read_mcp_memory_jsonl",
    "read_memories",
]
