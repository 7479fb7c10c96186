"""The mcp-memory JSON Lines format: its header, its records, its vectors, and its reader."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

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

from .. import surrogates
from ..errors import InvalidInputError
from ..models import (
    LOCAL_USER,
    Memory,
    MemoryType,
    PrivacyScope,
)
from ..protocols import StoredVectors, Vector
from ..scope import validate_principal
from ..validation import (
    DEFAULT_LIMITS,
    Limits,
    validate_content,
    validate_id,
    validate_metadata,
    validate_namespace,
    validate_tags,
    validate_thread,
)
from .import_file import ImportFile, numbered_lines

FORMAT_NAME = "mcp-memory"
FORMAT_VERSION = 1
VECTORS_FORMAT_VERSION = 2  # version 1 plus the embedder in the header and each memory's vectors

# A memory's vectors in an export: its whole text plus at most this many passages (far above what
# split_passages makes of the largest content), and how many memories' vectors are read at a time.
MAX_VECTOR_ROWS = 1024
VECTOR_BATCH = 256


def utc(value: datetime) -> datetime:
    return value.astimezone(UTC)


def format_datetime(value: datetime | None) -> str | None:
    """ISO 8601, UTC, always with microseconds (``2026-01-31T09:00:00.000000+00:00``)."""
    if value is None:
        return None
    if value.tzinfo is None:  # the engine only stores aware datetimes; be safe with naive ones
        value = value.replace(tzinfo=UTC)
    return utc(value).isoformat(timespec="microseconds")


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
        return None if value is None else utc(value)

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


def dumps(data: Mapping[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(p) for p in item["loc"])
        message = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


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
    numbered = numbered_lines(lines)
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
