"""Engine results → JSON-able dicts: what the MCP tools and ``mcp-memory --json`` return.

Two shapes of a memory. The full one (:func:`memory_to_dict`: every field, with ``age`` and
``expires_at``) is what ``get_memory``, the ``memory://`` resource, ``verbose=true`` and the CLI
return. The compact one (:func:`compact_memory`) is what search and list return by default: a model
reading results needs what a memory says, its id, its namespace and when it happened; the rest
(metadata, owner, access statistics, thread …) made a 20-token memory a ~390-token hit (~110 now)
and are one ``get_memory`` away. Sizes measured: README "Results an LLM can afford" and
docs/benchmarks.md "Result size" (benchmarks/result_size.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type hints only: importing this module must not import the core (numpy …)
    from mcp_memory_core.lifecycle import TTLPolicy
    from mcp_memory_core.models import (
        DeleteOutcome,
        Memory,
        MemoryView,
        Page,
        SearchHit,
        SearchResults,
        SimilarMemory,
        StoreOutcome,
        UpdateOutcome,
    )


SCORE_DIGITS = 3  # compact results round scores: 0.822 says what 0.8216966500434275 does


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def short_time(value: datetime) -> str:
    """ISO 8601 in UTC to the second: ``2023-05-08T13:56:00Z`` (20 characters, not 32)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def compact_memory(memory: Memory) -> dict[str, Any]:
    """A memory as search and list return it by default: ``id``, ``content``, ``namespace``,
    ``occurred_at`` (when it happened, to the second) and ``tags`` when it has any (the client's own
    labels; an empty list is left out)."""
    data: dict[str, Any] = {
        "id": memory.id,
        "content": memory.content,
        "namespace": memory.namespace,
        "occurred_at": short_time(memory.occurred_at),
    }
    if memory.tags:
        data["tags"] = list(memory.tags)
    return data


def _matched_id(hit: SearchHit) -> str | None:
    return hit.matched_id if hit.matched_id != hit.memory.id else None


def compact_hit(hit: SearchHit, *, explain: bool = False) -> dict[str, Any]:
    """One search result by default: the compact memory and its ``score`` (3 decimals), then
    ``matched_id`` only when an older version's wording matched, and with ``explain`` the ranker's
    ``score_parts`` (name → float, 3 decimals)."""
    data = compact_memory(hit.memory)
    data["score"] = round(hit.score, SCORE_DIGITS)
    matched = _matched_id(hit)
    if matched is not None:
        data["matched_id"] = matched
    if explain:
        data["score_parts"] = {name: round(value, SCORE_DIGITS) for name, value in hit.parts.items()}
    return data


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


def similar_to_dict(similar: SimilarMemory) -> dict[str, Any]:
    """A near-duplicate in store_memory's ``similar``: what the client needs to decide whether to
    call update_memory on it instead."""
    return {
        "id": similar.memory.id,
        "similarity": round(similar.similarity, SCORE_DIGITS),
        "relation": similar.relation,
        "content": similar.memory.content,
    }


def store_receipt(outcome: StoreOutcome) -> dict[str, Any]:
    """What store_memory did, said out loud: ``id``, ``status`` (stored / duplicate / superseded),
    ``namespace``, near-duplicates in ``similar`` and ``superseded`` (the replaced id). The memory is
    not echoed back: the client just sent it (get_memory shows every field)."""
    data: dict[str, Any] = {
        "id": outcome.memory.id,
        "status": outcome.status,
        "namespace": outcome.memory.namespace,
        "similar": [similar_to_dict(s) for s in outcome.similar],
    }
    if outcome.superseded is not None:
        data["superseded"] = outcome.superseded.id
    return data


def update_receipt(outcome: UpdateOutcome) -> dict[str, Any]:
    """What update_memory did: the new version's ``id``, the ``superseded`` (old) id and ``status``
    ``updated`` (get_memory shows the new version)."""
    return {"id": outcome.memory.id, "superseded": outcome.superseded.id, "status": "updated"}


def delete_receipt(outcome: DeleteOutcome) -> dict[str, Any]:
    """What delete_memory did: ``id``, ``status`` (deleted / already_deleted / purged) and
    ``success``; a purge also lists every removed version in ``purged``."""
    data: dict[str, Any] = {"id": outcome.memory.id, "status": outcome.status, "success": True}
    if outcome.status == "purged":
        data["purged"] = list(outcome.purged)
    return data


def pin_receipt(memory: Memory, ttl: TTLPolicy) -> dict[str, Any]:
    """What pin_memory did: ``id``, ``pinned`` and ``expires_at`` (null: never)."""
    return {"id": memory.id, "pinned": memory.pinned, "expires_at": iso(ttl.expires_at(memory))}


def hit_to_dict(
    hit: SearchHit, *, explain: bool = False, ttl: TTLPolicy | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """One search result in full (``verbose=true``, the CLI): the current version (chain head) and
    how it matched.

    ``matched_id`` names the older version whose wording matched, or is ``None`` when the result
    matched with its own wording (or by keywords only). ``explain`` adds ``score_parts``: the ranker's
    named parts of the score.
    """
    data = memory_to_dict(hit.memory, ttl, now)
    data["score"] = hit.score
    data["similarity"] = hit.similarity
    data["matched_id"] = _matched_id(hit)
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


def next_page_hint(page: Page, budget: int) -> str:
    """What a ``list_memories`` page with a ``next_cursor`` says about the rest."""
    hint = "More memories remain: call list_memories again with cursor = next_cursor (and the same filters)."
    if page.capped:
        hint = (
            f"This page holds {len(page.memories)} memories: the most that fit in the {budget:,}-token "
            f"result budget (MCP_MEMORY_MAX_RESULT_TOKENS). {hint}"
        )
    return hint
