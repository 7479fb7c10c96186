"""The backend protocols a plugin can implement: Embedder, Store, Ranker and Reranker.

They are synchronous on purpose: the server calls them from a worker thread, never on the event loop,
and plugin authors write plain Python. Rules about memories (chains, tombstones, validation) live in
the engine, not here: a store keeps rows and vectors and answers primitive queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .list_order import ListOrder, SortKey
from .models import Candidate, Memory, MemoryFilter, ScoredCandidate
from .relevance import Calibrated as Calibrated

Vector = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into float32 unit vectors.

    ``model_id`` names the exact model (weights, precision, version): stores record it and refuse
    vectors from any other. Constructing an embedder must be cheap; load the model in ``load()`` or on
    first use.

    Optional capabilities: :class:`TokenCounting`, :class:`Calibrated` (a relevance floor) and
    :class:`QueryBatching` (several queries in one call).
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def load(self) -> None:
        """Load the model now (idempotent). Called in the background after the MCP handshake."""

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """Return an (n, dimensions) float32 array of L2-normalized rows."""

    def embed_query(self, text: str) -> Vector:
        """Return a (dimensions,) float32 unit vector."""


@runtime_checkable
class QueryBatching(Protocol):
    """Optional embedder capability: several queries in one call. The engine's batcher then embeds
    the queries of concurrent searches together (documents are always batched by ``embed_documents``).
    Row ``i`` must equal ``embed_query(texts[i])``."""

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """Return an (n, dimensions) float32 array of L2-normalized query vectors."""


@dataclass(frozen=True)
class StoredVectors:
    """Vectors that travel with memories (an export's): the embedding model that made them, and each
    memory's rows (its whole text first, then its passages), keyed by memory id."""

    model_id: str
    dimensions: int
    rows: Mapping[str, Vector]


def text_list(texts: Sequence[str]) -> list[str]:
    """``embed_documents``' argument as a list of strings, or a TypeError saying what is wrong (a lone
    string is refused: iterating it would embed its characters)."""
    if isinstance(texts, str):
        raise TypeError("embed_documents takes a sequence of strings; use embed_query for one string")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
    return items


@dataclass(frozen=True)
class StoreDiagnosis:
    """What a :class:`Diagnosable` store's ``diagnose()`` found (``mcp-memory doctor`` shows it): read without
    changing anything, on a store that is not open.

    ``problems`` are damage, one sentence each (empty: intact); ``schema_version`` is the data's and
    ``supported_schema_version`` the newest this code reads (a newer one: the code needs upgrading);
    ``model_id`` and ``dimensions`` the embedding model the stored vectors are from (None: none yet).
    ``path`` is the local file holding the data, if there is one (doctor checks its access and free
    space); ``details`` anything else worth showing (sizes, counts, the driver in use)."""

    exists: bool
    path: str | None = None
    problems: tuple[str, ...] = ()
    schema_version: int | None = None
    supported_schema_version: int | None = None
    model_id: str | None = None
    dimensions: int | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StoreCapabilities:
    """Optional features a store may offer. The conformance suite switches test groups on these."""

    keyword_search: bool = False
    concurrent_processes: bool = False
    # Calls may run in parallel from several threads: a read neither waits for another thread's open
    # transaction nor sees its uncommitted writes. The server then runs requests in parallel;
    # without it, it serializes every call to the store (which must still be callable from threads).
    thread_safe: bool = False
    # ``vectors(ids)`` reads stored vectors back (an export that carries them, so an import into a
    # store bound to the same model reuses them instead of embedding again).
    read_vectors: bool = False
    # ``stored_model()``, ``reembed_open`` / ``reembed_pending`` / ``reembed_put`` /
    # ``reembed_progress`` / ``reembed_finish``: re-embed every memory with another model in place
    # (``mcp-memory reindex``), resumable, while servers on the old model keep using the store.
    reembed: bool = False
    # The vectors are an index derived from data the store keeps itself (a markdown vault's notes,
    # through ``refresh``): opened with another model, it builds that model's index from the data
    # (each model has its own) instead of refusing with ModelMismatchError. Models never mix.
    derived_index: bool = False
    # Transactions exclude each other (one writer at a time, across threads and processes) and a read
    # inside one that has not written yet is as cheap as outside it: stores that wait for each other
    # are written in one transaction, every duplicate check before any write (the engine's store groups).
    group_commit: bool = False


@runtime_checkable
class Store(Protocol):
    """Persistence primitives. Every write is atomic; inside ``transaction()`` all writes commit together.

    Optional capabilities, each a protocol of its own below that a store implements or not (the
    engine and the server check them with ``isinstance``): :class:`Warmable`,
    :class:`VectorReading` (required when ``capabilities.read_vectors``), :class:`BulkLoading`,
    :class:`WriteLocking`, :class:`Refreshing` (required when ``capabilities.derived_index``),
    :class:`Diagnosable`, :class:`InPlaceReembedding` (required when ``capabilities.reembed``),
    :class:`IndexRebuilding`, :class:`LayoutInitializing` and :class:`PassageBacklog`."""

    @property
    def capabilities(self) -> StoreCapabilities: ...

    @property
    def location(self) -> str:
        """Where the data lives, for humans (a path, a DSN without password, ``:memory:``)."""

    def open(self, model_id: str, dimensions: int) -> None:
        """Bind the store to an embedding model. Raise ModelMismatchError if it holds another model's vectors."""

    def close(self) -> None: ...

    def transaction(self) -> AbstractContextManager[None]:
        """Group writes: all commit on normal exit, none on an exception. May nest (inner is a no-op)."""

    def insert(
        self, memories: Sequence[Memory], vectors: Vector, owners: Sequence[int] | None = None
    ) -> None:
        """Insert memories with their vectors.

        Without ``owners``, row i of ``vectors`` belongs to ``memories[i]``. With ``owners`` (one entry
        per row), row i belongs to ``memories[owners[i]]``: a memory may have several vectors (its
        whole text and its passages), and every memory has at least one.
        """

    def get(self, ids: Sequence[str]) -> dict[str, Memory]:
        """Fetch memories by id, tombstones and superseded versions included. Missing ids are absent."""

    def update_fields(self, memory_id: str, fields: Mapping[str, Any]) -> None:
        """Set fields of one memory (``superseded_by``, ``deleted_at``, ``updated_at``, ``pinned`` …).
        Raises ``MemoryNotFoundError`` for an unknown id."""

    def record_access(self, counts: Mapping[str, int], when: datetime) -> None:
        """Add ``counts[id]`` to each memory's ``access_count`` and set ``last_accessed = when`` — as an
        increment, so concurrent processes never lose each other's counts. Unknown ids are ignored."""

    def purge(self, ids: Sequence[str]) -> int:
        """Hard delete: remove the rows, every vector and the keyword index entries of these memories.
        Returns how many rows were removed. The engine keeps chains consistent around it."""

    def knn(self, vector: Vector, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        """Up to ``k`` (memory id, cosine similarity) pairs of DISTINCT memories, most similar first,
        among memories matching ``where``; a memory's similarity is the best over its vectors. The
        filter applies before the top-k: if ``k`` memories match, ``k`` come back."""

    def keyword_search(self, query: str, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        """Up to ``k`` (memory id, score) pairs, best first (higher score is better). Only called when
        ``capabilities.keyword_search`` is true."""

    def thread_neighbours(
        self, ids: Sequence[str], where: MemoryFilter
    ) -> dict[str, tuple[str | None, str | None]]:
        """For each of ``ids`` that has a thread and matches ``where``: the ids of the memories just
        before and just after it in its thread, among the memories matching ``where``, in the order
        of the conversation: ``(occurred_at, created_at, id)``. ``None`` at either end of a thread.
        Ids that are unknown, have no thread or do not match ``where`` are absent."""

    def list(
        self,
        where: MemoryFilter,
        limit: int,
        after: SortKey | None = None,
        order: ListOrder = "newest",
    ) -> list[Memory]:
        """Memories matching ``where`` in ``order``: ``newest`` first by (created_at, id), ``oldest``
        first by the same, or by ``importance`` then (created_at, id), highest first; keyset paging
        with ``after`` = the sort key (:func:`~.list_order.sort_key`) of the last memory of the
        previous page."""

    def count(self, where: MemoryFilter) -> int: ...

    def namespaces(self, where: MemoryFilter | None = None) -> dict[str, int]:
        """Every namespace holding memories (matching ``where``, when given: the engine passes the
        Scope's visibility and namespaces), with its number of current memories among them (not
        superseded, not deleted; a namespace whose matching memories are all deleted counts 0)."""

    def iter_all(self) -> Iterator[Memory]:
        """Every memory in the store, in no particular order (export, maintenance)."""


Embed = Callable[[Sequence[str]], tuple[Vector, list[int] | None]]
"""The engine's embedder and passage split: texts -> (rows, the text each row belongs to), as ``insert`` takes them."""
EmbedMemories = Callable[[Sequence[Memory]], tuple[Vector, list[int] | None]]
Progress = Callable[[int, int], None]
"""Called with (done, total) as a long operation goes."""


@runtime_checkable
class Warmable(Protocol):
    """A store with something to load before the first query is fast (a vector cache)."""

    def warm(self) -> None:
        """Load it. The engine runs this in a background thread after ``open()``; calls that reach
        the store before it is done wait for it."""


@runtime_checkable
class VectorReading(Protocol):
    """A store that reads its vectors back (an export carries them, so an import into a store bound
    to the same model reuses them). Required when ``capabilities.read_vectors``."""

    def vectors(self, ids: Sequence[str]) -> Mapping[str, Vector]:
        """Each known memory's vectors, the rows in the order ``insert`` was given them (its whole
        text first, then its passages); unknown ids are absent."""


@runtime_checkable
class TagCounting(Protocol):
    """A store that counts tags itself (``list_tags``, the web UI's tag list): without it the engine
    reads every matching memory to count them."""

    def tag_counts(self, where: MemoryFilter) -> Mapping[str, int]:
        """How many memories matching ``where`` carry each tag (a tag no such memory carries is
        absent)."""


@runtime_checkable
class BulkLoading(Protocol):
    """A store that prepares for many inserts (PostgreSQL drops its vector index and builds it again
    at the end)."""

    def bulk_load(self, rows: int) -> AbstractContextManager[None]:
        """A context manager around an import of about ``rows`` memories (in several transactions).
        Every call keeps working inside it."""


@runtime_checkable
class WriteLocking(Protocol):
    """A store whose write transactions do not exclude each other (PostgreSQL's ``read committed``;
    SQLite's ``BEGIN IMMEDIATE`` needs none)."""

    def write_lock(self, key: str) -> None:
        """Called inside ``transaction()`` by a write whose outcome depends on what it read first
        (``store_memory``'s dedup check: the key names the owner, the namespace and the normalized
        text): wait until no other transaction, of any process, holds ``key``'s lock, and hold it
        until this transaction ends."""


@runtime_checkable
class PassageBacklog(Protocol):
    """A store that keeps, durably, which memories still wait for their passages' vectors. The engine
    then acknowledges a memory of several sentences once its whole text's vector is written (the
    near-duplicate check and the answer need no more) and embeds its sentences afterwards, in the
    background (:mod:`~.engine.passage_filler`). Without it every passage is embedded before the
    acknowledgement. Several processes may complete the same backlog: each call is atomic."""

    def mark_passages_pending(self, ids: Sequence[str]) -> None:
        """Called inside ``transaction()`` right after ``insert`` wrote these memories with their whole
        text's vector only: their passages are still to come. The mark commits, or rolls back, with
        the memories. Ids that are not stored are ignored."""

    def pending_passages(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` marked memories as (id, content), the oldest mark first."""

    def complete_passages(self, memory_id: str, vectors: Vector) -> bool:
        """In one transaction: add ``vectors`` (``(n, dimensions)``: the memory's passages, after its
        whole text's row) to the memory's vectors, with its current state (namespace, tombstone …),
        and clear its mark. True when they were added; False, clearing the mark if there is one, when
        the memory is gone, is not marked (another process completed it) or has more than one vector
        already (re-embedded meanwhile), or ``vectors`` has no row."""

    def count_pending_passages(self) -> int:
        """How many memories are marked."""


@runtime_checkable
class Refreshing(Protocol):
    """A store whose truth lives outside it (the markdown vault's files, edited by hand). Required
    when ``capabilities.derived_index``."""

    def refresh(self, embed: Embed, progress: Progress | None = None) -> object:
        """Bring the index up to date, embedding changed texts with ``embed``; ``progress(done,
        total)`` as it goes. The engine calls it before every call: it must cost next to nothing when
        nothing changed. Returns a report for the caller (``mcp-memory reindex`` prints it)."""


@runtime_checkable
class Diagnosable(Protocol):
    """A store that checks its data for ``mcp-memory doctor``."""

    def diagnose(self) -> StoreDiagnosis:
        """Called on a store that is NOT open: check the data where it lives without creating,
        migrating or writing anything (SQLite: a read-only connection and ``PRAGMA quick_check``),
        and say which schema version and embedding model it holds. Damage goes into ``problems``,
        not an exception."""


@runtime_checkable
class InPlaceReembedding(Protocol):
    """A store that re-embeds every memory with another model in place (``mcp-memory reindex``
    after a model change; the engine's ``reindex`` drives it), resumable, while servers on the old
    model keep using it. Required when ``capabilities.reembed``. Until ``reembed_finish`` servers
    on the old model keep working; after it, each one's next search or write raises
    ModelMismatchError (never a comparison of two models' vectors)."""

    def stored_model(self) -> tuple[str, int] | None:
        """The (model id, dimensions) the data holds, or None when it holds none."""

    def reembed_open(self, model_id: str, dimensions: int) -> tuple[str, int] | None:
        """Open the store bound to the model its data holds and return that ``(model id,
        dimensions)``, or None when it holds ``model_id`` already (or nothing: it is then simply open)."""

    def reembed_pending(self, limit: int) -> list[Memory]:
        """Every memory (any state) still without rows of the new model, a batch at a time."""

    def reembed_put(self, memories: Sequence[Memory], vectors: Vector, owners: Sequence[int] | None) -> None:
        """Keep their new rows, committed (an interrupted run resumes from them)."""

    def reembed_progress(self) -> tuple[int, int]:
        """(done, total)."""

    def reembed_finish(self, embed: EmbedMemories) -> int:
        """Embed what is still pending and switch every vector to the new model at once, binding
        the store to it; returns how many were embedded here."""


@runtime_checkable
class IndexRebuilding(Protocol):
    """A store whose vector index is derived from its own data, one index file per model (a vault)."""

    @property
    def index_path(self) -> Path:
        """The index file in use (after ``open``: the configured model's)."""

    def index_files(self) -> list[Path]:
        """Every model's index file."""

    def reset_index(self) -> None:
        """Delete the index in use (the store is closed): the next ``open`` and ``refresh`` build it
        again from the data."""


@runtime_checkable
class LayoutInitializing(Protocol):
    """A store with a layout to create before first use (a vault's folders and configuration)."""

    def initialize(self) -> list[str]:
        """Create what is missing, changing nothing that exists; returns what was created."""


@runtime_checkable
class TokenCounting(Protocol):
    """An embedder that counts tokens with its own tokenizer (recall packs to a budget with it)."""

    def count_tokens(self, text: str) -> int: ...


@runtime_checkable
class Ranker(Protocol):
    """Orders candidates. A pure function of its inputs: no I/O, no clock other than ``now``."""

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        """Return scored candidates, best first. May drop none: every candidate comes back once."""


@runtime_checkable
class Reranker(Protocol):
    """Takes a closer look at the ranker's best candidates and reorders them (a cross-encoder, exact
    phrases, …). Zero or more run after the ranker, in the order the settings name them.

    The engine gives it the ``depth`` best candidates, with their features, scores and text
    (``candidate.memory.content``); whatever came after them keeps its order, after them. It only
    ever sees candidates the engine has already resolved for the caller's Scope. Each call runs in a
    worker thread under a time limit; one that raises, runs out of time or returns anything but a
    reordering of what it was given is skipped, and the search says so in its warnings. Calls may
    come from several threads at once. Constructing one must be cheap; a model loads in ``load()``.
    """

    @property
    def name(self) -> str:
        """The name it registers under: its part in ``parts`` and the warnings say it."""

    @property
    def depth(self) -> int:
        """How many of the ranker's best candidates it sees (at least 1); read once, when the engine
        is built. The cost it may take per search, so the caller's ``limit`` does not change it."""

    @property
    def heavy(self) -> bool:
        """True when ``load()`` is slow (a model): the server calls it in the background after the
        MCP handshake, as it loads the embedder. False: the first search calls it, within the time limit."""

    def load(self) -> None:
        """Load what ``rerank`` needs (idempotent). A load that raises leaves the reranker skipped."""

    def rerank(self, query: str, ranked: Sequence[ScoredCandidate], now: datetime) -> list[ScoredCandidate]:
        """Return the same candidates, each once, best first, each a new ``ScoredCandidate`` with
        its own score and its ``parts`` plus one named after itself (``explain`` shows them). No I/O
        other than its own model; no clock but ``now``; the input is not changed."""
