"""Input validation and paging cursors: every check on what a caller passes in, in one place.

Each failure raises :class:`InvalidInputError` with a message that says what is accepted.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from .context import NAMESPACE_PATTERN
from .errors import InvalidInputError
from .limits import MAX_CHAIN_LENGTH as MAX_CHAIN_LENGTH
from .limits import MAX_KNN_K as MAX_KNN_K
from .limits import MAX_LIST_LIMIT as MAX_LIST_LIMIT
from .limits import MAX_SEARCH_LIMIT as MAX_SEARCH_LIMIT
from .list_order import NEWEST, ListOrder, SortKey, sort_key
from .models import Memory, MemoryType, PrivacyScope


def validate_id(memory_id: str) -> str:
    try:
        return str(uuid.UUID(str(memory_id).strip()))
    except (ValueError, AttributeError, TypeError):
        raise InvalidInputError(f"{memory_id!r} is not a memory id (expected a UUID).") from None


@dataclass(frozen=True)
class Limits:
    """Sizes in bytes (settings ``MCP_MEMORY_MAX_CONTENT_BYTES`` / ``_METADATA_BYTES`` /
    ``_PAGE_BYTES``): a memory's content as UTF-8, its metadata as compact JSON, and the memories of
    one ``list_memories`` page together as JSON."""

    content_bytes: int = 32_768
    metadata_bytes: int = 16_384
    page_bytes: int = 262_144


DEFAULT_LIMITS = Limits()


def utf8_size(text: str) -> int:
    """Bytes of ``text`` as UTF-8 (a lone surrogate, which JSON can carry, counts 3 bytes, not a crash)."""
    return len(text.encode("utf-8", "surrogatepass"))


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON: the measure of every byte limit."""
    return utf8_size(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def holds_nul(value: Any) -> bool:
    """Whether U+0000 is in ``value``: a string, or any key or value of nested JSON."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(holds_nul(key) or holds_nul(item) for key, item in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return any(holds_nul(item) for item in value)
    return False


def refuse_nul(value: Any, what: str) -> None:
    """NUL's one fate in every store: PostgreSQL's text and jsonb cannot hold it, so nothing
    mcp-memory stores or filters on carries one (SQLite could, but a memory must move between stores)."""
    if holds_nul(value):
        raise InvalidInputError(nul_refusal(what))


def nul_refusal(what: str) -> str:
    return f"{what} contains a NUL character (U+0000), which mcp-memory does not store; remove it."


def validate_content(
    content: str, max_bytes: int = DEFAULT_LIMITS.content_bytes, *, nul_ok: bool = False
) -> str:
    """``nul_ok``: let a NUL through (an import's reader: the engine refuses that memory by id)."""
    if not isinstance(content, str) or not content.strip():
        raise InvalidInputError("content must be a non-empty string.")
    if not nul_ok:
        refuse_nul(content, "content")
    size = utf8_size(content)
    if size > max_bytes:
        raise InvalidInputError(
            f"content is {size:,} bytes; the limit is {max_bytes:,} (MCP_MEMORY_MAX_CONTENT_BYTES). "
            "Split it into several memories."
        )
    return content


def validate_metadata(
    metadata: Mapping[str, Any] | None,
    max_bytes: int = DEFAULT_LIMITS.metadata_bytes,
    *,
    nul_ok: bool = False,
) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInputError("metadata must be an object of key/value pairs.")
    if not all(isinstance(key, str) for key in metadata):
        raise InvalidInputError("metadata keys must be strings.")
    try:
        text = json.dumps(dict(metadata), allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be JSON-serializable: {exc}") from None
    size = utf8_size(text)
    if size > max_bytes:
        raise InvalidInputError(
            f"metadata is {size:,} bytes as JSON; the limit is {max_bytes:,} (MCP_MEMORY_MAX_METADATA_BYTES). "
            "Keep metadata to short labels: the text belongs in content."
        )
    checked = dict(json.loads(text))
    if not nul_ok:
        refuse_nul(checked, "metadata")
    return checked


def validate_flag(value: bool, name: str) -> bool:
    """A true/false argument: a real bool, never a string or number coerced into one."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be true or false; got {value!r}.")
    return value


def validate_privacy_scope(value: str | None) -> PrivacyScope | None:
    if value is None:
        return None
    try:
        return PrivacyScope(str(value).strip().lower()) if isinstance(value, str) else PrivacyScope(value)
    except ValueError:
        choices = ", ".join(p.value for p in PrivacyScope)
        raise InvalidInputError(f"privacy_scope must be one of {choices}; got {value!r}.") from None


def validate_limit(limit: int, maximum: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInputError(f"limit must be an integer from 1 to {maximum}; got {limit!r}.")
    return limit


def encode_cursor(memory: Memory, order: ListOrder = NEWEST) -> str:
    """The cursor after ``memory`` in a list in ``order``: its sort key (a newest-first cursor has
    no order name, as before orders existed)."""
    values = [v.isoformat() if isinstance(v, datetime) else v for v in sort_key(memory, order)]
    raw = json.dumps(values if order == NEWEST else [order, *values]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, order: ListOrder = NEWEST) -> SortKey:
    """The sort key in ``cursor``; a cursor of a list in another order is not valid."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if order != NEWEST:
            if not isinstance(values, list) or not values or values[0] != order:
                raise ValueError(cursor)
            values = values[1:]
        if order == "importance":
            importance, created, memory_id = values
            if isinstance(importance, bool) or not isinstance(importance, int | float):
                raise ValueError(cursor)
            return float(importance), datetime.fromisoformat(created), validate_id(memory_id)
        created, memory_id = values
        return datetime.fromisoformat(created), validate_id(memory_id)
    except (ValueError, TypeError, RecursionError, binascii.Error, InvalidInputError):
        # RecursionError: a cursor of JSON nested too deep for the json module (never one of ours)
        raise InvalidInputError(
            "cursor is not valid: pass the next_cursor of a previous list_memories result."
        ) from None


MAX_TAGS = 32
MAX_TAG_CHARS = 64


def validate_type(value: str | MemoryType | None) -> MemoryType | None:
    if value is None:
        return None
    try:
        return MemoryType(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(t.value for t in MemoryType)
        raise InvalidInputError(f"type must be one of: {choices}; got {value!r}.") from None


def validate_types(values: Iterable[str | MemoryType] | str | None) -> frozenset[MemoryType] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    types = frozenset(t for t in (validate_type(v) for v in values) if t is not None)
    return types or None


def validate_tags(tags: Iterable[str] | str | None, *, nul_ok: bool = False) -> tuple[str, ...] | None:
    """Tags are trimmed, case-preserving strings of 1-64 characters; duplicates collapse; at most 32."""
    if tags is None:
        return None
    if isinstance(tags, str):
        tags = [tags]
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip():
            raise InvalidInputError("tags must be non-empty strings.")
        tag = tag.strip()
        if not nul_ok:
            refuse_nul(tag, "tags")
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInputError(f"tag {tag[:20]!r}… is longer than {MAX_TAG_CHARS} characters.")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise InvalidInputError(f"at most {MAX_TAGS} tags per memory; got {len(out)}.")
    return tuple(out)


def validate_importance(value: float | None) -> float | None:
    if value is None:
        return None
    number = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
    if not number or not 0.0 <= float(value) <= 1.0:  # the very sentence the MCP tools' schema check says
        raise InvalidInputError(f"importance must be a number from 0 to 1; got {value!r}.")
    return float(value)


def validate_datetime(value: datetime | str | None, name: str) -> datetime | None:
    """ISO 8601 (a date alone means its midnight); naive times are taken as UTC."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInputError(
                f"{name} must be an ISO 8601 date or time (e.g. 2026-01-31 or 2026-01-31T09:00:00Z); got {value!r}."
            ) from None
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{name} must be an ISO 8601 date or time.")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


# The times a stored memory may carry. The Unix epoch is older than any memory; a day of slack allows
# for a machine whose clock runs a little ahead. Year 0001 or 9999 means a broken file.
EARLIEST_TIME = datetime(1970, 1, 1, tzinfo=UTC)
CLOCK_SLACK = timedelta(days=1)
MEMORY_TIMES = ("created_at", "updated_at", "deleted_at", "last_accessed")
NUL_FIELDS = ("content", "metadata", "tags", "thread", "namespace", "owner")  # a memory's free text


MAX_THREAD_CHARS = 200
# When a remembered thing may have happened: from 1900 (old letters, family history imported as
# conversations) to a day from now (clock slack); a date in the future is a plan, not a memory's time.
EARLIEST_OCCURRED = datetime(1900, 1, 1, tzinfo=UTC)


def validate_thread(thread: str) -> str:
    """A conversation id: 1-200 characters, no control characters (surrounding spaces dropped)."""
    if not isinstance(thread, str) or not thread.strip():
        raise InvalidInputError("thread must be a non-empty string (an id for one conversation).")
    thread = thread.strip()
    refuse_nul(thread, "thread")
    if len(thread) > MAX_THREAD_CHARS or any(ord(c) < 32 or ord(c) == 127 for c in thread):
        raise InvalidInputError(
            f"thread must be at most {MAX_THREAD_CHARS} characters without control characters; "
            f"got {thread[:40]!r}{'…' if len(thread) > 40 else ''}."
        )
    return thread


def validate_occurred_at(value: datetime | str | None, now: datetime) -> datetime | None:
    """When the remembered thing happened: ISO 8601 (a date alone means its midnight, UTC), from
    1900 to a day after ``now``."""
    when = validate_datetime(value, "occurred_at")
    if when is None:
        return None
    latest = now + CLOCK_SLACK
    if not EARLIEST_OCCURRED <= when <= latest:
        raise InvalidInputError(
            f"occurred_at {when.isoformat()} is outside the accepted range (1900-01-01 to a day from "
            f"now, {latest:%Y-%m-%d}): it says when the remembered thing happened or was said."
        )
    return when


def validate_memory_times(memory: Memory, now: datetime) -> None:
    """Every time a memory carries (created, updated, deleted, last accessed) falls between 1970 and
    one day after ``now``; when it happened (``occurred_at``), between 1900 and the same bound."""
    latest = now + CLOCK_SLACK
    for name in MEMORY_TIMES:
        value: datetime | None = getattr(memory, name)
        if value is None:
            continue
        value = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        if not EARLIEST_TIME <= value <= latest:
            raise InvalidInputError(
                f"{name} {value.isoformat()} is outside the accepted range (1970-01-01 to a day from now, "
                f"{latest:%Y-%m-%d}): correct the date and import again."
            )
    if memory.occurred_at is not None:
        validate_occurred_at(memory.occurred_at, now)


def nul_refusals(memories: Sequence[Memory]) -> dict[str, str]:
    """The memories of an import that hold a NUL (see :func:`refuse_nul`), by id, each with why it is
    refused; and every older version of a refused one (its chain would point at nothing)."""
    refused: dict[str, str] = {}
    for memory in memories:
        field = next((name for name in NUL_FIELDS if holds_nul(getattr(memory, name))), None)
        if field is not None:
            refused[memory.id] = nul_refusal(field)
    return with_older_versions(memories, refused)


def with_older_versions(memories: Sequence[Memory], refused: dict[str, str]) -> dict[str, str]:
    """``refused`` (id → why) with every older version of a refused memory among ``memories`` added:
    its chain would point at nothing."""
    while older := [m for m in memories if m.superseded_by in refused and m.id not in refused]:
        for memory in older:
            refused[memory.id] = (
                f"its newer version {memory.superseded_by} is refused: import the whole chain once that "
                "one is fixed."
            )
    return refused


def validate_metadata_filter(metadata: Mapping[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    if not metadata:
        return ()
    if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
        raise InvalidInputError("the metadata filter must be an object of key/value pairs.")
    refuse_nul(metadata, "the metadata filter")
    for key, value in metadata.items():
        if value is not None and not isinstance(value, str | int | float | bool):
            raise InvalidInputError(
                f"metadata filter values must be strings, numbers, booleans or null; {key!r} is not."
            )
    return tuple(sorted(metadata.items()))


def validate_namespace(name: str) -> str:
    if not isinstance(name, str) or not NAMESPACE_PATTERN.match(name.strip()):
        raise InvalidInputError(
            f"namespace {name!r} is not valid: use 1-64 lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    return name.strip()
