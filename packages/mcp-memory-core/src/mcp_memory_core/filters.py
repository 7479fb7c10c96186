"""Search and list filters as the caller gives them, turned into the store's MemoryFilter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .errors import InvalidInputError
from .models import MemoryFilter, MemoryType
from .validation import (
    validate_datetime,
    validate_flag,
    validate_metadata_filter,
    validate_tags,
    validate_thread,
    validate_types,
)
from .vocabulary import TagsMatch


@dataclass(frozen=True)
class Filters:
    """User-facing filters: memory types (any of), tags (``any`` or ``all`` of them), a creation time
    range (``created_after`` inclusive, ``created_before`` exclusive), the same for when the memory
    happened (``occurred_after`` / ``occurred_before``), one conversation (``thread``), metadata
    key = value pairs and whether the memory is pinned (``pinned``; ``None``: either)."""

    types: frozenset[MemoryType] | None = None
    tags: tuple[str, ...] | None = None
    tags_match: TagsMatch = "any"
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: tuple[tuple[str, Any], ...] = ()
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None
    thread: str | None = None
    pinned: bool | None = None

    @classmethod
    def parse(
        cls,
        *,
        types: Iterable[str | MemoryType] | str | None = None,
        tags: Iterable[str] | str | None = None,
        tags_match: str = "any",
        created_after: datetime | str | None = None,
        created_before: datetime | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        occurred_after: datetime | str | None = None,
        occurred_before: datetime | str | None = None,
        thread: str | None = None,
        pinned: bool | None = None,
    ) -> Filters:
        if tags_match not in ("any", "all"):
            raise InvalidInputError(f"tags_match must be 'any' or 'all'; got {tags_match!r}.")
        after, before = _time_range("created", created_after, created_before)
        occurred_from, occurred_to = _time_range("occurred", occurred_after, occurred_before)
        return cls(
            types=validate_types(types),
            tags=validate_tags(tags) or None,
            tags_match="all" if tags_match == "all" else "any",
            created_after=after,
            created_before=before,
            metadata=validate_metadata_filter(metadata),
            occurred_after=occurred_from,
            occurred_before=occurred_to,
            thread=None if thread is None else validate_thread(thread),
            pinned=None if pinned is None else validate_flag(pinned, "pinned"),
        )

    def where(self, namespace: str | None, *, include_superseded: bool) -> MemoryFilter:
        tags = frozenset(self.tags) if self.tags else None
        return MemoryFilter(
            namespace=namespace,
            include_superseded=include_superseded,
            types=self.types,
            tags_any=tags if self.tags_match == "any" else None,
            tags_all=tags if self.tags_match == "all" else None,
            created_after=self.created_after,
            created_before=self.created_before,
            metadata=self.metadata,
            occurred_after=self.occurred_after,
            occurred_before=self.occurred_before,
            threads=None if self.thread is None else frozenset({self.thread}),
            pinned=self.pinned,
        )


def _time_range(
    field: str, after: datetime | str | None, before: datetime | str | None
) -> tuple[datetime | None, datetime | None]:
    """``{field}_after`` (inclusive) and ``{field}_before`` (exclusive), parsed; an empty range is an error."""
    start = validate_datetime(after, f"{field}_after")
    end = validate_datetime(before, f"{field}_before")
    if start is not None and end is not None and start >= end:
        raise InvalidInputError(f"{field}_after must be earlier than {field}_before.")
    return start, end


NO_FILTERS = Filters()
