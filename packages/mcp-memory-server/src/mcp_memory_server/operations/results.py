"""What searching, listing, reading one memory and storing give, as typed results every surface renders.

The operations build these models from the engine's objects; the MCP tools render them to the dicts
they return, ``mcp-memory … --json`` prints the same dicts, and the web UI's templates are given them.

Two shapes of a memory. The full one (:meth:`MemoryRecord.full`: every field, with ``age`` and
``expires_at``) is what ``get_memory``, the ``memory://`` resource, ``verbose=true`` and the CLI
return. The compact one (:meth:`MemoryRecord.compact`) is what search and list return by default: a
model reading results needs what a memory says, its id, its namespace and when it happened; the rest
(metadata, owner, access statistics, thread …) made a 20-token memory a ~390-token hit (~110 now)
and are one ``get_memory`` away. Sizes measured: README "Results an LLM can afford" and
docs/benchmarks.md "Result size" (benchmarks/result_size.py).

Importing this module imports no part of the core (numpy …); defining its models takes ~30 ms, so the
operations import it on their first call, after the MCP handshake (a test holds that in place).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, field_serializer

from .serialize import iso

if TYPE_CHECKING:
    from mcp_memory_core.lifecycle import TTLPolicy
    from mcp_memory_core.models import (
        Memory,
        MemoryView,
        Page,
        SearchHit,
        SearchResults,
        SimilarMemory,
        StoreOutcome,
        UpdateOutcome,
    )
    from mcp_memory_core.scope import Scope
    from mcp_memory_core.secret_scan import Finding


SCORE_DIGITS = 3  # compact results round scores: 0.822 says what 0.8216966500434275 does


def short_time(value: datetime) -> str:
    """ISO 8601 in UTC to the second: ``2023-05-08T13:56:00Z`` (20 characters, not 32)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True)


class Lifetime(_Result):
    """How old a memory is (``age``, in words) and when it expires (``expires_at``; None: never), by
    the server's TTL policy at the time of the call."""

    age: str
    expires_at: datetime | None


class MemoryRecord(_Result):
    """One memory, every field (``deleted``: a tombstone, ``deleted_at`` says when); ``lifetime`` when
    read with the TTL policy."""

    id: str
    content: str
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    type: str
    tags: tuple[str, ...]
    importance: float
    access_count: int
    last_accessed: datetime | None
    superseded_by: str | None
    deleted: bool
    deleted_at: datetime | None
    namespace: str
    pinned: bool
    owner: str
    privacy_scope: str
    occurred_at: datetime
    thread: str | None
    lifetime: Lifetime | None = None

    @classmethod
    def of(cls, memory: Memory, ttl: TTLPolicy | None = None, now: datetime | None = None) -> MemoryRecord:
        lifetime = None
        if ttl is not None and now is not None:
            from mcp_memory_core.recall import humanize_age

            lifetime = Lifetime(age=humanize_age(memory.created_at, now), expires_at=ttl.expires_at(memory))
        return cls(**memory.model_dump(include=_COPIED), deleted=memory.is_deleted, lifetime=lifetime)

    @field_serializer("created_at", "updated_at", "last_accessed", "deleted_at", "occurred_at")
    def _iso(self, value: datetime | None) -> str | None:
        return iso(value)

    @field_serializer("tags")
    def _listed(self, value: tuple[str, ...]) -> list[str]:
        return list(value)

    @property
    def is_current(self) -> bool:
        """The live head of a chain: not superseded and not deleted."""
        return self.superseded_by is None and self.deleted_at is None

    def full(self, *, lifetime: bool = True) -> dict[str, Any]:
        """Every field as clients see it, times in ISO 8601; ``age`` (human) and ``expires_at`` (null =
        never) when read with the TTL policy, unless ``lifetime`` is false."""
        data = self.model_dump(exclude={"lifetime"})
        if lifetime and self.lifetime is not None:
            data["age"] = self.lifetime.age
            data["expires_at"] = iso(self.lifetime.expires_at)
        return data

    def compact(self) -> dict[str, Any]:
        """As search and list return it by default: ``id``, ``content``, ``namespace``, ``occurred_at``
        (when it happened, to the second) and ``tags`` when it has any (the client's own labels; an
        empty list is left out)."""
        data: dict[str, Any] = {
            "id": self.id,
            "content": self.content,
            "namespace": self.namespace,
            "occurred_at": short_time(self.occurred_at),
        }
        if self.tags:
            data["tags"] = list(self.tags)
        return data


# The fields a record copies from the core's Memory.
_COPIED: set[str] = set(MemoryRecord.model_fields) - {"deleted", "lifetime"}


class Hit(_Result):
    """One search result: the current version (chain head) and how it matched. ``matched_id`` names
    the older version whose wording matched (None: it matched with its own wording, or by keywords
    only); ``parts`` are the ranker's named parts of the score."""

    memory: MemoryRecord
    score: float
    similarity: float | None
    matched_id: str | None
    parts: dict[str, float]

    @classmethod
    def of(cls, hit: SearchHit, ttl: TTLPolicy | None = None, now: datetime | None = None) -> Hit:
        return cls(
            memory=MemoryRecord.of(hit.memory, ttl, now),
            score=hit.score,
            similarity=hit.similarity,
            matched_id=hit.matched_id if hit.matched_id != hit.memory.id else None,
            parts=hit.parts,
        )

    def compact(self, *, explain: bool = False) -> dict[str, Any]:
        """By default: the compact memory and its ``score`` (3 decimals), then ``matched_id`` only when
        an older version's wording matched, and with ``explain`` the ``score_parts`` (3 decimals)."""
        data = self.memory.compact()
        data["score"] = round(self.score, SCORE_DIGITS)
        if self.matched_id is not None:
            data["matched_id"] = self.matched_id
        if explain:
            data["score_parts"] = {name: round(value, SCORE_DIGITS) for name, value in self.parts.items()}
        return data

    def full(self, *, explain: bool = False, lifetime: bool = True) -> dict[str, Any]:
        """In full (``verbose=true``, the CLI): every field, ``score``, ``similarity``, ``matched_id``
        (null when it matched with its own wording) and with ``explain`` the ``score_parts``."""
        data = self.memory.full(lifetime=lifetime)
        data["score"] = self.score
        data["similarity"] = self.similarity
        data["matched_id"] = self.matched_id
        if explain:
            data["score_parts"] = dict(self.parts)
        return data


class SearchResult(_Result):
    """The hits, best first; ``warnings`` (a reranker skipped: the ranker's order there); the relevance
    ``floor`` (its thresholds and this query's background similarity) and how many of the best ranked
    memories it ``held_back``."""

    hits: list[Hit]
    warnings: list[str]
    floor: dict[str, float] | None
    held_back: int

    @classmethod
    def of(cls, found: SearchResults, ttl: TTLPolicy, now: datetime) -> SearchResult:
        return cls(
            hits=[Hit.of(hit, ttl, now) for hit in found.hits],
            warnings=found.warnings,
            floor=found.floor,
            held_back=found.below_floor,
        )

    def floor_report(self, *, explain: bool = False) -> dict[str, Any]:
        """What the result says about the relevance floor: ``held_back`` and, when nothing cleared it, a
        ``note`` saying so; with ``explain`` the ``floor`` itself."""
        data: dict[str, Any] = {}
        if explain and self.floor is not None:
            data["floor"] = dict(self.floor)
        if self.held_back:
            data["held_back"] = self.held_back
            if not self.hits:
                data["note"] = (
                    f"No stored memory is relevant enough to this query: the {self.held_back} closest "
                    "were held back below the relevance floor."
                )
        return data


class MemoryPage(_Result):
    """One page of a listing: its memories, the cursor of the next page (None: the last), the number
    of matching memories, and whether the page ended early at a size (``capped``)."""

    memories: list[MemoryRecord]
    next_cursor: str | None
    total: int
    capped: bool

    @classmethod
    def of(cls, page: Page, records: dict[str, MemoryRecord]) -> MemoryPage:
        return cls(
            memories=[records[m.id] for m in page.memories],
            next_cursor=page.next_cursor,
            total=page.total,
            capped=page.capped,
        )

    def full(self, *, lifetime: bool = True) -> dict[str, Any]:
        return {
            "memories": [m.full(lifetime=lifetime) for m in self.memories],
            "next_cursor": self.next_cursor,
            "total": self.total,
        }

    def next_page_hint(self, budget: int) -> str:
        """What ``list_memories`` says about the rest while a next page remains."""
        hint = (
            "More memories remain: call list_memories again with cursor = next_cursor (and the same filters)."
        )
        if self.capped:
            hint = (
                f"This page holds {len(self.memories)} memories: the most that fit in the {budget:,}-token "
                f"result budget (MCP_MEMORY_MAX_RESULT_TOKENS). {hint}"
            )
        return hint


class MemoryDetail(_Result):
    """One memory as ``get_memory`` shows it: the version asked for, as it is, its ``status``
    (current, superseded, deleted, expired) and the head of its chain; with history, every version
    oldest first. ``can_change``: whether the scope that read it may change it (the Scope's answer,
    for a page's buttons; no tool shows it)."""

    memory: MemoryRecord
    status: str
    head_id: str | None
    history: list[MemoryRecord] | None
    can_change: bool

    @classmethod
    def of(cls, view: MemoryView, scope: Scope, ttl: TTLPolicy, now: datetime) -> MemoryDetail:
        history = view.history
        return cls(
            memory=MemoryRecord.of(view.memory, ttl, now),
            status=view.status,
            head_id=view.head_id,
            history=[MemoryRecord.of(m, ttl, now) for m in history] if history is not None else None,
            can_change=scope.can_change(view.memory),
        )

    def full(self) -> dict[str, Any]:
        """The memory in full, ``status`` and ``head_id``; with history, ``history`` with the current
        version marked (``current``)."""
        data = {**self.memory.full(), "status": self.status, "head_id": self.head_id}
        if self.history is not None:
            data["history"] = [
                {**m.full(), "current": m.id == self.head_id and m.is_current} for m in self.history
            ]
        return data


class Similar(_Result):
    """A near-duplicate of what was stored: what the client needs to decide whether to update it
    instead (``relation``: duplicate or related)."""

    id: str
    similarity: float
    relation: str
    content: str

    @classmethod
    def of(cls, similar: SimilarMemory) -> Similar:
        return cls(
            id=similar.memory.id,
            similarity=round(similar.similarity, SCORE_DIGITS),
            relation=similar.relation,
            content=similar.memory.content,
        )


class Redacted(_Result):
    """A secret replaced by a placeholder before the memory was written: its ``kind`` (``aws-key``,
    the placeholder's ``[REDACTED:aws-key]``), ``what`` it is in words, and the ``field`` it was in
    (``content``, ``metadata.db.url``, ``tags``, ``thread``). Never its value."""

    kind: str
    what: str
    field: str

    @classmethod
    def of(cls, finding: Finding) -> Redacted:
        return cls(kind=finding.kind, what=finding.label, field=finding.field)


class _Redacting(_Result):
    """A write's receipt: what was redacted, listed and said in one sentence (only when anything was)."""

    redacted: list[Redacted] = []

    @property
    def redaction(self) -> str | None:
        """``redacted 1 secret: an AWS access key in content``, or None."""
        if not self.redacted:
            return None
        from mcp_memory_core.secret_scan import Finding, describe  # loaded by the write that made this

        return describe(Finding(r.kind, r.field, 0, 0) for r in self.redacted)

    def _with_redaction(self, data: dict[str, Any]) -> dict[str, Any]:
        if self.redacted:
            data["redacted"] = [r.model_dump() for r in self.redacted]
            data["redaction"] = self.redaction
        return data


class StoreReceipt(_Redacting):
    """What a store did: ``id``, ``status`` (stored / duplicate / superseded), ``namespace``, the near
    duplicates in ``similar``, the ``superseded`` (replaced) id, and the secrets ``redacted`` before
    it was written. The memory is not echoed back: the client just sent it."""

    id: str
    status: str
    namespace: str
    similar: list[Similar]
    superseded: str | None

    @classmethod
    def of(cls, outcome: StoreOutcome) -> StoreReceipt:
        return cls(
            id=outcome.memory.id,
            status=outcome.status,
            namespace=outcome.memory.namespace,
            similar=[Similar.of(s) for s in outcome.similar],
            superseded=outcome.superseded.id if outcome.superseded is not None else None,
            redacted=[Redacted.of(f) for f in outcome.redacted],
        )

    def full(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "namespace": self.namespace,
            "similar": [s.model_dump() for s in self.similar],
        }
        if self.superseded is not None:
            data["superseded"] = self.superseded
        return self._with_redaction(data)


class UpdateReceipt(_Redacting):
    """What an update did: the new version's ``id``, the ``superseded`` (old) one, and the secrets
    ``redacted`` before the new version was written."""

    id: str
    superseded: str

    @classmethod
    def of(cls, outcome: UpdateOutcome) -> UpdateReceipt:
        return cls(
            id=outcome.memory.id,
            superseded=outcome.superseded.id,
            redacted=[Redacted.of(f) for f in outcome.redacted],
        )

    def full(self) -> dict[str, Any]:
        return self._with_redaction({"id": self.id, "superseded": self.superseded, "status": "updated"})
