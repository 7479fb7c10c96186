"""Engine results → JSON-able dicts: what the MCP tools and ``mcp-memory --json`` return."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type hints only: importing this module must not import the core (numpy …)
    from mcp_memory_core.models import Memory, MemoryView, Page, SearchHit


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def memory_to_dict(memory: Memory) -> dict[str, Any]:
    """A memory as clients see it. ``deleted`` is the tombstone flag, ``deleted_at`` when it was set."""
    return {
        "id": memory.id,
        "content": memory.content,
        "metadata": dict(memory.metadata),
        "created_at": iso(memory.created_at),
        "updated_at": iso(memory.updated_at),
        "type": str(memory.type),
        "tags": list(memory.tags),
        "importance": memory.importance,
        "access_count": memory.access_count,
        "last_accessed": iso(memory.last_accessed),
        "superseded_by": memory.superseded_by,
        "deleted": memory.is_deleted,
        "deleted_at": iso(memory.deleted_at),
    }


def view_to_dict(view: MemoryView) -> dict[str, Any]:
    """``get_memory``: the version asked for, as it is, plus its status and the head of its chain."""
    return {**memory_to_dict(view.memory), "status": view.status, "head_id": view.head_id}


def hit_to_dict(hit: SearchHit, *, explain: bool = False) -> dict[str, Any]:
    """One search result: the current version (chain head) and how it matched.

    ``matched_id`` names the older version whose wording matched, or is ``None`` when the result
    matched with its own wording (or by keywords only). ``explain`` adds ``score_parts``: the ranker's
    named parts of the score.
    """
    data = memory_to_dict(hit.memory)
    data["score"] = hit.score
    data["similarity"] = hit.similarity
    data["matched_id"] = hit.matched_id if hit.matched_id != hit.memory.id else None
    if explain:
        data["score_parts"] = dict(hit.parts)
    return data


def page_to_dict(page: Page) -> dict[str, Any]:
    return {
        "memories": [memory_to_dict(m) for m in page.memories],
        "next_cursor": page.next_cursor,
        "total": page.total,
    }
