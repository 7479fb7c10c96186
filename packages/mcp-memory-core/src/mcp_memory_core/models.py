"""The data every part of mcp-memory speaks: memories, filters, candidates and results.

Memories live in :mod:`.memory` and filters in :mod:`.filter_terms`; both are named here too.

A memory is immutable in content: an update creates a new memory and points the old one at it
(``superseded_by``), so the old wording stays searchable and resolves to the current truth.
A soft delete is a tombstone: ``deleted_at`` is set, the row and its vector stay, and the memory
never appears in search again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .filter_terms import MemoryFilter as MemoryFilter
from .memory import DEFAULT_NAMESPACE as DEFAULT_NAMESPACE
from .memory import IMPORT_ID_NAMESPACE as IMPORT_ID_NAMESPACE
from .memory import LOCAL_USER as LOCAL_USER
from .memory import USER_NAMESPACE as USER_NAMESPACE
from .memory import Memory as Memory
from .memory import MemoryType as MemoryType
from .memory import MetadataValue as MetadataValue
from .memory import PrivacyScope as PrivacyScope
from .memory import Visibility as Visibility
from .memory import derived_id as derived_id
from .memory import new_memory_id as new_memory_id
from .memory import utcnow as utcnow
from .secret_scan import Finding


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

    ``redacted``: the secrets replaced by placeholders before anything was written (their kind and
    field, never their value; see :mod:`.secret_scan`).
    """

    memory: Memory
    status: str = "stored"
    similar: list[SimilarMemory] = field(default_factory=list)
    superseded: Memory | None = None
    redacted: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class ImportOutcome:
    """What an import did: memories inserted, memories skipped because their id already existed, and
    lone surrogates the reader replaced with U+FFFD (text cut inside an emoji, which UTF-8 cannot hold),
    how many inserted memories kept the vectors they came with instead of being embedded again, the
    memories refused for a NUL character (U+0000; no store keeps one), by id, each with why, and the
    conversation turns the reader left out as chit-chat (:mod:`.junk`), and the memories whose secrets
    were replaced by placeholders, by id, each with what was redacted where (:mod:`.secret_scan`)."""

    inserted: int
    skipped: int
    repaired: int = 0
    reused: int = 0  # inserted memories whose given vectors were used (not embedded again)
    refused: dict[str, str] = field(default_factory=dict)
    chit_chat: int = 0  # turns of a chat export not imported: greetings, thanks, one-word replies
    redacted: dict[str, str] = field(default_factory=dict)


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
    """What ``update_memory`` did: ``memory`` is the new head, ``superseded`` the version it replaced;
    ``redacted`` the secrets replaced by placeholders in the new version."""

    memory: Memory
    superseded: Memory
    redacted: tuple[Finding, ...] = ()


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
