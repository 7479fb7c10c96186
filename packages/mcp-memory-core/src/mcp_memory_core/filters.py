"""Search and list filters as the caller gives them, turned into the store's MemoryFilter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from .errors import InvalidInputError
from .models import MemoryFilter, MemoryType
from .validation import (
    validate_datetime,
    validate_metadata_filter,
    validate_tags,
    validate_thread,
    validate_types,
)


@dataclass(frozen=True)
class Filters:
    """User-facing filters: memory types (any of), tags (``any`` or ``all`` of them), a creation time
    range (``created_after`` inclusive, ``created_before`` exclusive), the same for when the memory
    happened (``occurred_after`` / ``occurred_before``), one conversation (``thread``) and metadata
    key = value pairs."""

    types: frozenset[MemoryType] | None = None
    tags: tuple[str, ...] | None = None
    tags_match: Literal["any", "all"] = "any"
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: tuple[tuple[str, Any], ...] = ()
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None
    thread: str | None = None

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
    ) -> Filters:
        if tags_match not in ("any", "all"):
            raise InvalidInputError(f"tags_match must be 'any' or 'all'; got {tags_match!r}.")
        after = validate_datetime(created_after, "created_after")
        before = validate_datetime(created_before, "created_before")
        if after is not None and before is not None and after >= before:
            raise InvalidInputError("created_after must be earlier than created_before.")
        occurred_from = validate_datetime(occurred_after, "occurred_after")
        occurred_to = validate_datetime(occurred_before, "occurred_before")
        if occurred_from is not None and occurred_to is not None and occurred_from >= occurred_to:
            raise InvalidInputError("occurred_after must be earlier than occurred_before.")
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
        )


NO_FILTERS = Filters()
