"""The filters of a search or a listing, parsed once for every surface.

A surface turns its input (tool arguments, a web form) into a :class:`FilterRequest`; :meth:`~FilterRequest.parse`
gives the engine's ``Filters``, refusing a bad value in the engine's words (``InvalidInputError``). Values
stay loosely typed here on purpose: the engine's validation says what is wrong with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from mcp_memory_core.filters import Filters


class FilterRequest(BaseModel):
    """Which memories a search or a listing covers (every field empty: all of them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    types: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    tags_match: str = "any"
    created_after: str | None = None
    created_before: str | None = None
    occurred_after: str | None = None
    occurred_before: str | None = None
    thread: str | None = None
    metadata: dict[str, Any] | None = None
    pinned: bool | None = None

    def parse(self) -> Filters:
        """The engine's Filters (the core is imported here, once warm)."""
        from mcp_memory_core.filters import Filters

        return Filters.parse(**self.model_dump())


def day_after(day: str) -> str:
    """The day after an ISO date (a form's "to" date includes its whole day); any other text as it is,
    for the engine to refuse in its own words."""
    try:
        return (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    except ValueError:
        return day
