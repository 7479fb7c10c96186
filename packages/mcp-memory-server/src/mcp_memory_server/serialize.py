"""Engine results → JSON-able dicts: what the MCP tools and ``mcp-memory --json`` return."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type hints only: importing this module must not import the core (numpy …)
    from mcp_memory_core.lifecycle import TTLPolicy
    from mcp_memory_core.models import Memory, MemoryView, Page, SearchHit, SearchResults, StoreOutcome


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def memory_to_dict(
    memory: Memory, ttl: TTLPolicy | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """A memory as clients see it. ``deleted`` is the tombstone flag, ``deleted_at`` when it was set.
    With a TTL policy and ``now``: ``age`` (human) and ``expires_at`` (null = never)."""
    data = {
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
        "namespace": memory.namespace,
        "pinned": memory.pinned,
        "owner": memory.owner,
        "privacy_scope": str(memory.privacy_scope),
        "occurred_at": iso(memory.occurred_at),
        "thread": memory.thread,
    }
    if ttl is not None and now is not None:
        from mcp_memory_core.recall import humanize_age

        data["age"] = humanize_age(memory.created_at, now)
        data["expires_at"] = iso(ttl.expires_at(memory))
    return data


def view_to_dict(
    view: MemoryView, ttl: TTLPolicy | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """``get_memory``: the version asked for, as it is, plus its status and the head of its chain;
    with history, every version oldest first, the current one marked."""
    data = {**memory_to_dict(view.memory, ttl, now), "status": view.status, "head_id": view.head_id}
    if view.history is not None:
        data["history"] = [
            {**memory_to_dict(m, ttl, now), "current": m.id == view.head_id and m.is_current}
            for m in view.history
        ]
    return data


def store_outcome_to_dict(
    outcome: StoreOutcome, ttl: TTLPolicy | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """What store_memory did, said out loud: stored / duplicate / superseded, and near-duplicates."""
    data: dict[str, Any] = {
        "id": outcome.memory.id,
        "status": outcome.status,
        "memory": memory_to_dict(outcome.memory, ttl, now),
        "similar": [
            {
                "id": s.memory.id,
                "similarity": s.similarity,
                "relation": s.relation,
                "content": s.memory.content,
            }
            for s in outcome.similar
        ],
    }
    if outcome.superseded is not None:
        data["superseded"] = outcome.superseded.id
    return data


def hit_to_dict(
    hit: SearchHit, *, explain: bool = False, ttl: TTLPolicy | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """One search result: the current version (chain head) and how it matched.

    ``matched_id`` names the older version whose wording matched, or is ``None`` when the result
    matched with its own wording (or by keywords only). ``explain`` adds ``score_parts``: the ranker's
    named parts of the score.
    """
    data = memory_to_dict(hit.memory, ttl, now)
    data["score"] = hit.score
    data["similarity"] = hit.similarity
    data["matched_id"] = hit.matched_id if hit.matched_id != hit.memory.id else None
    if explain:
        data["score_parts"] = dict(hit.parts)
    return data


def floor_report(found: SearchResults, *, explain: bool = False) -> dict[str, Any]:
    """What a search result says about the relevance floor: ``held_back`` (how many of the best
    ranked memories did not clear it) and, when nothing did, a ``note`` saying so; with ``explain``
    the floor itself (its thresholds and this query's background similarity)."""
    data: dict[str, Any] = {}
    if explain and found.floor is not None:
        data["floor"] = dict(found.floor)
    if found.below_floor:
        data["held_back"] = found.below_floor
        if not found.hits:
            data["note"] = (
                f"No stored memory is relevant enough to this query: the {found.below_floor} closest "
                "were held back below the relevance floor."
            )
    return data


def page_to_dict(page: Page, ttl: TTLPolicy | None = None, now: datetime | None = None) -> dict[str, Any]:
    return {
        "memories": [memory_to_dict(m, ttl, now) for m in page.memories],
        "next_cursor": page.next_cursor,
        "total": page.total,
    }


def next_page_hint(page: Page, page_bytes: int) -> str:
    """What a ``list_memories`` page with a ``next_cursor`` says about the rest."""
    hint = "More memories remain: call list_memories again with cursor = next_cursor (and the same filters)."
    if page.capped:
        hint = (
            f"This page holds {len(page.memories)} memories: the most that fit in {page_bytes:,} bytes "
            f"(MCP_MEMORY_MAX_PAGE_BYTES). {hint}"
        )
    return hint
