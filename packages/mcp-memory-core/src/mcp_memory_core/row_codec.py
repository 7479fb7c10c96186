"""A memory as one row of a SQL table, and back: the column order and the conversions every SQL store
shares. A store's subclass says how its dialect keeps a time, a JSON object and a list of tags
(SQLite: integer microseconds and JSON text; PostgreSQL: ``timestamptz``, ``jsonb`` and ``text[]``).

Rows are trusted (the store wrote them from validated memories), so decoding skips validation: a
search decodes every candidate of both channels (~80 rows at 1k memories), and validating them would
cost more than the rest of the search.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from .models import Memory, MemoryType, PrivacyScope

#: the memory columns, in the order :meth:`RowCodec.encode` writes and :meth:`RowCodec.decode` reads
COLUMNS: tuple[str, ...] = (
    "id",
    "content",
    "metadata",
    "created_at",
    "updated_at",
    "superseded_by",
    "deleted_at",
    "namespace",
    "type",
    "tags",
    "importance",
    "pinned",
    "access_count",
    "last_accessed",
    "owner",
    "privacy_scope",
    "occurred_at",
    "thread",
)

_TYPES = {t.value: t for t in MemoryType}
_SCOPES = {p.value: p for p in PrivacyScope}
_FIELDS = frozenset(Memory.model_fields)
# A direct construction equals ``model_construct`` for a model without aliases, extra fields or a
# post-init hook, given every field (tests/test_row_codec.py checks that the two agree).


def trusted_memory(fields: dict[str, Any]) -> Memory:
    """A ``Memory`` from every one of its fields, already valid (a row the store wrote): what
    ``Memory.model_construct(**fields)`` builds, without its per-field alias and default handling,
    which costs five times the construction itself."""
    if fields.keys() != _FIELDS:
        raise ValueError(f"a stored memory needs exactly the fields {sorted(_FIELDS)}")
    memory = Memory.__new__(Memory)
    object.__setattr__(memory, "__dict__", fields)
    object.__setattr__(memory, "__pydantic_fields_set__", set(_FIELDS))
    object.__setattr__(memory, "__pydantic_extra__", None)
    object.__setattr__(memory, "__pydantic_private__", None)
    return memory


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def utc(value: datetime) -> datetime:
    """``value`` as an aware datetime: naive datetimes are taken as UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def to_micros(value: datetime) -> int:
    """Integer microseconds since the epoch, UTC. Naive datetimes are taken as UTC."""
    return (utc(value) - EPOCH) // _MICRO


def from_micros(value: int) -> datetime:
    return EPOCH + timedelta(microseconds=value)


class RowCodec:
    """Encodes memories as rows of :data:`COLUMNS` and decodes them; override the ``*_out`` /
    ``*_in`` pairs for a dialect. The defaults keep times as aware datetimes, JSON and tags as
    Python objects (what a driver with native types wants)."""

    def time_out(self, value: datetime) -> Any:
        return utc(value)

    def time_in(self, value: Any) -> datetime:
        assert isinstance(value, datetime)
        return value.astimezone(UTC)

    def json_out(self, value: dict[str, Any]) -> Any:
        return value

    def json_in(self, value: Any) -> dict[str, Any]:
        return dict(value)

    def tags_out(self, tags: Sequence[str]) -> Any:
        return list(tags)

    def tags_in(self, value: Any) -> tuple[str, ...]:
        return tuple(value)

    def encode(self, m: Memory) -> tuple[Any, ...]:
        optional = self._optional_time_out
        return (
            m.id,
            m.content,
            self.json_out(m.metadata),
            self.time_out(m.created_at),
            self.time_out(m.updated_at),
            m.superseded_by,
            optional(m.deleted_at),
            m.namespace,
            MemoryType(m.type).value,
            self.tags_out(m.tags),
            float(m.importance),
            self.bool_out(m.pinned),
            int(m.access_count),
            optional(m.last_accessed),
            m.owner,
            PrivacyScope(m.privacy_scope).value,
            self.time_out(m.occurred_at),
            m.thread,
        )

    def decode(self, row: Sequence[Any]) -> Memory:
        optional = self._optional_time_in
        return trusted_memory(
            {
                "id": row[0],
                "content": row[1],
                "metadata": self.json_in(row[2]),
                "created_at": self.time_in(row[3]),
                "updated_at": self.time_in(row[4]),
                "superseded_by": row[5],
                "deleted_at": optional(row[6]),
                "namespace": row[7],
                "type": _TYPES[row[8]],
                "tags": self.tags_in(row[9]),
                "importance": float(row[10]),
                "pinned": bool(row[11]),
                "access_count": int(row[12]),
                "last_accessed": optional(row[13]),
                "owner": row[14],
                "privacy_scope": _SCOPES[row[15]],
                "occurred_at": self.time_in(row[16]),
                "thread": row[17],
            }
        )

    def bool_out(self, value: bool) -> Any:
        return value

    def _optional_time_out(self, value: datetime | None) -> Any:
        return None if value is None else self.time_out(value)

    def _optional_time_in(self, value: Any) -> datetime | None:
        return None if value is None else self.time_in(value)


class JsonTextRowCodec(RowCodec):
    """Times as integer microseconds since the epoch (UTC), metadata and tags as JSON text, booleans
    as 0/1: for engines without those types (SQLite)."""

    def time_out(self, value: datetime) -> int:
        return to_micros(value)

    def time_in(self, value: Any) -> datetime:
        return from_micros(value)

    def json_out(self, value: dict[str, Any]) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def json_in(self, value: Any) -> dict[str, Any]:
        if value == "{}":
            return {}
        out: dict[str, Any] = json.loads(value)
        return out

    def tags_out(self, tags: Sequence[str]) -> str:
        return json.dumps(list(tags), ensure_ascii=False)

    def tags_in(self, value: Any) -> tuple[str, ...]:
        return () if value == "[]" else tuple(json.loads(value))

    def bool_out(self, value: bool) -> int:
        return int(value)
