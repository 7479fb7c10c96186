"""The data every part of mcp-memory speaks: memories, filters, candidates and results.

A memory is immutable in content: an update creates a new memory and points the old one at it
(``superseded_by``), so the old wording stays searchable and resolves to the current truth.
A soft delete is a tombstone: ``deleted_at`` is set, the row and its vector stay, and the memory
never appears in search again.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_NAMESPACE = "default"
# Every user's personal namespace: preferences and facts about the person, readable from every project.
USER_NAMESPACE = "user"
# The principal of a server used by one person (stdio, the CLI): they own the file and what it holds.
LOCAL_USER = "local"


def utcnow() -> datetime:
    """The current time, timezone-aware UTC (the only kind of datetime mcp-memory stores)."""
    return datetime.now(UTC)


def new_memory_id() -> str:
    return str(uuid.uuid4())


# uuid5 namespace of every id an import derives (fixed forever: changing it breaks idempotency).
IMPORT_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://mcp-memory/import")


def derived_id(*parts: str) -> str:
    """A deterministic memory id from a source's own identifiers (uuid5; stable across versions)."""
    return str(uuid.uuid5(IMPORT_ID_NAMESPACE, json.dumps(list(parts), ensure_ascii=False)))


class MemoryType(StrEnum):
    """Seed 002's memory types. Retrieval ranks and filters by them; lifecycle rules build on them."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


class PrivacyScope(StrEnum):
    """Who besides its owner may read a memory (seed 002). Only the owner ever changes it.

    ``private``: the owner alone; ``team``: also every user who shares a team with the owner;
    ``public``: every user of the server."""

    PRIVATE = "private"
    TEAM = "team"
    PUBLIC = "public"


class Memory(BaseModel):
    """One stored memory (one version of a fact).

    ``superseded_by`` holds the id of the newer version, or ``None`` for the head of a chain.
    ``deleted_at`` is the tombstone: set by a soft delete, ``None`` while the memory is live.
    ``owner`` is the user who stored it (every version of a chain has the same owner) and
    ``privacy_scope`` who else may read it.
    ``occurred_at`` is when the remembered thing happened or was said (``created_at`` when not
    given: a memory stored during the conversation it comes from); ``thread`` groups the memories of
    one conversation (by default the MCP session that stored them), so a memory can be read with its
    neighbours.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=new_memory_id)
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    superseded_by: str | None = None
    deleted_at: datetime | None = None
    namespace: str = DEFAULT_NAMESPACE
    type: MemoryType = MemoryType.SEMANTIC
    tags: tuple[str, ...] = ()
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    pinned: bool = False
    access_count: int = Field(default=0, ge=0)
    last_accessed: datetime | None = None
    owner: str = LOCAL_USER
    privacy_scope: PrivacyScope = PrivacyScope.PRIVATE
    occurred_at: datetime = Field(default=None, validate_default=False)  # type: ignore[assignment]
    thread: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _occurred_defaults_to_created(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("occurred_at") is None:
            created = data.get("created_at")
            if created is None:
                created = utcnow()
                data = {**data, "created_at": created, "updated_at": data.get("updated_at") or created}
            data = {**data, "occurred_at": created}
        return data

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def is_current(self) -> bool:
        """True for the live head of a chain: not superseded and not deleted."""
        return self.superseded_by is None and self.deleted_at is None


MetadataValue = str | int | float | bool | None


@dataclass(frozen=True)
class Visibility:
    """Which memories a user may read: their own, public ones, and team ones of their teammates
    (users who share at least one team with them). A store renders it as one condition."""

    principal: str
    teammates: frozenset[str] = frozenset()

    def allows(self, memory: Memory) -> bool:
        return (
            memory.owner == self.principal
            or memory.privacy_scope == PrivacyScope.PUBLIC
            or (memory.privacy_scope == PrivacyScope.TEAM and memory.owner in self.teammates)
        )


@dataclass(frozen=True)
class MemoryFilter:
    """What a store must match. Stores apply every field BEFORE their top-k, never after.

    ``include_deleted`` and ``include_superseded`` default to the search view: vectors of superseded
    versions still match (the engine resolves them to their head), tombstones never do.
    The user-facing fields: ``types`` (any of), ``tags_any`` (at least one of), ``tags_all`` (every
    one of), ``created_after`` (inclusive) / ``created_before`` (exclusive), the same pair for
    ``occurred_at`` (``occurred_after`` / ``occurred_before``), ``threads`` (any of), and ``metadata``: top-level
    key = value pairs that must all hold (JSON equality: ``1`` and ``"1"`` differ).
    Lifecycle fields the engine uses: ``pinned`` (TTL sweeps skip pinned memories) and
    ``superseded_by_in`` (memories whose ``superseded_by`` is one of these ids: a chain's predecessors).
    Who may see what (the engine's Scope): ``namespaces`` (any of these; ``None``: no limit, on top of
    ``namespace``), ``owner`` (exactly this owner) and ``visible_to`` (see :class:`Visibility`).
    """

    namespace: str | None = DEFAULT_NAMESPACE
    include_deleted: bool = False
    include_superseded: bool = True
    ids: frozenset[str] | None = None
    types: frozenset[MemoryType] | None = None
    tags_any: frozenset[str] | None = None
    tags_all: frozenset[str] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: tuple[tuple[str, MetadataValue], ...] = ()
    pinned: bool | None = None
    superseded_by_in: frozenset[str] | None = None
    namespaces: frozenset[str] | None = None
    owner: str | None = None
    visible_to: Visibility | None = None
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None
    threads: frozenset[str] | None = None

    @property
    def narrows_content(self) -> bool:
        """True when a user-facing field is set (anything beyond namespace and lifecycle flags)."""
        return bool(
            self.types is not None
            or self.tags_any is not None
            or self.tags_all is not None
            or self.created_after is not None
            or self.created_before is not None
            or self.occurred_after is not None
            or self.occurred_before is not None
            or self.threads is not None
            or self.pinned is not None
            or self.metadata
        )

    def matches(self, memory: Memory) -> bool:
        """The reference semantics of the filter (:mod:`.filter_terms`), for stores that filter in Python."""
        from .filter_terms import matches

        return matches(self, memory)


@dataclass(frozen=True)
class Candidate:
    """One memory offered to a ranker, with every feature the engine gathered for it.

    ``memory`` is the head of the chain (what the user gets back); ``matched_id`` is the version whose
    vector matched best (``None`` for a keyword-only match). ``vector_similarity`` is the best cosine
    similarity over the matched versions' passages, in [-1, 1]; ``keyword_score`` is the store's keyword
    score (higher is better; only comparable within one query). Ranks start at 1 and count candidates
    in that channel's order. ``previous_id`` / ``next_id`` name the memories just before and after
    this one in its thread (its conversation), when they are candidates too: a ranker may let a reply
    borrow from the question it answers. A candidate found only as such a neighbour has no ranks.
    """

    memory: Memory
    matched_id: str | None
    vector_similarity: float | None = None
    vector_rank: int | None = None
    keyword_score: float | None = None
    keyword_rank: int | None = None
    previous_id: str | None = None
    next_id: str | None = None


@dataclass(frozen=True)
class ScoredCandidate:
    """A ranker's verdict on one candidate: a score (higher is better) and its named parts."""

    candidate: Candidate
    score: float
    parts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SearchHit:
    """One search result as the engine returns it."""

    memory: Memory
    score: float
    matched_id: str | None
    similarity: float | None
    parts: dict[str, float]


# Near-duplicate thresholds of store_memory (cosine of the new memory against an existing one's best
# passage), calibrated for all-MiniLM-L6-v2 on labelled pairs: benchmarks/calibrate_dedup.py, whose
# results are in docs/benchmarks.md. Another embedding model needs its own values.
DEDUP_THRESHOLD = 0.73  # listed in `similar`: best F1 of "restates or updates it" on the dev half
DUPLICATE_THRESHOLD = 0.87  # relation "duplicate", replaced under supersede: ≥ 0.95 precision on dev


@dataclass(frozen=True)
class SearchResults:
    """What a staged search found: the hits, best first, and what the caller should know about how.

    ``warnings`` are one sentence each (a reranker skipped because it failed or ran out of time);
    ``floor`` describes the relevance floor the hits had to clear (``None``: no floor; see
    :mod:`.relevance`), and ``below_floor`` how many of the ranker's top ``limit`` it held back.
    """

    hits: list[SearchHit]
    warnings: list[str] = field(default_factory=list)
    floor: dict[str, float] | None = None
    below_floor: int = 0


@dataclass(frozen=True)
class SimilarMemory:
    """A current memory close to one being stored (a possible duplicate or contradiction).

    ``relation`` is ``duplicate`` at or above the engine's duplicate threshold (very close: most
    likely the new memory restates it or gives it a new value; cosine cannot tell which) and
    ``related`` below it (close: the same thing or a neighbouring fact).
    """

    memory: Memory
    similarity: float
    relation: str = "related"


@dataclass(frozen=True)
class StoreOutcome:
    """What ``store_memory`` did, always said out loud:

    - ``stored``: a new memory; ``similar`` lists near-duplicates the client may want to update instead;
    - ``duplicate``: the same (normalized) content was already current in the namespace: nothing was
      written and ``memory`` is the existing one;
    - ``superseded``: conflict policy ``supersede`` replaced ``superseded``, the closest memory of
      relation ``duplicate`` in ``similar``, with ``memory`` (a new version of its chain).
    """

    memory: Memory
    status: str = "stored"
    similar: list[SimilarMemory] = field(default_factory=list)
    superseded: Memory | None = None


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did: memories inserted, memories skipped because their id already existed, and
    lone surrogates the reader replaced with U+FFFD (text cut inside an emoji, which UTF-8 cannot hold),
    how many inserted memories kept the vectors they came with instead of being embedded again, and
    the memories refused for a NUL character (U+0000; no store keeps one), by id, each with why."""

    inserted: int
    skipped: int
    repaired: int = 0
    reused: int = 0  # inserted memories whose given vectors were used (not embedded again)
    refused: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReindexOutcome:
    """What a re-embedding did: the model the store held before (None: it held the configured one
    already, nothing to do), how many memories were embedded in this run (a resumed run counts only
    its own), and the model it holds now."""

    previous: str | None
    embedded: int
    model_id: str


@dataclass(frozen=True)
class UpdateOutcome:
    """What ``update_memory`` did: ``memory`` is the new head, ``superseded`` the version it replaced."""

    memory: Memory
    superseded: Memory


@dataclass(frozen=True)
class DeleteOutcome:
    """What ``delete_memory`` did. ``status``: ``"deleted"``, ``"already_deleted"`` or ``"purged"``
    (hard delete: ``purged`` lists every version of the chain that was removed)."""

    memory: Memory
    status: str
    head_id: str | None = None
    purged: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MemoryView:
    """A memory as ``get_memory`` shows it: the version asked for, plus where its chain ends."""

    memory: Memory
    head_id: str | None
    status: str  # "current" | "superseded" | "deleted" | "expired"
    history: list[Memory] | None = None  # oldest first, ending with the head (get_memory(history=True))


@dataclass(frozen=True)
class Page:
    """One page of ``list_memories``; ``next_cursor`` is ``None`` on the last page; ``capped``: the
    page ended early to stay within the page byte limit."""

    memories: list[Memory]
    next_cursor: str | None
    total: int
    capped: bool = False
