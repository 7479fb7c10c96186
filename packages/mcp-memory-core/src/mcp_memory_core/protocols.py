"""The backend protocols a plugin can implement: Embedder, Store, Ranker and Reranker.

They are synchronous on purpose: the server calls them from a worker thread, never on the event loop,
and plugin authors write plain Python. Rules about memories (chains, tombstones, validation) live in
the engine, not here: a store keeps rows and vectors and answers primitive queries.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .models import Candidate, Memory, MemoryFilter, ScoredCandidate

Vector = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into float32 unit vectors.

    ``model_id`` names the exact model (weights, precision, version): stores record it and refuse
    vectors from any other. Constructing an embedder must be cheap; load the model in ``load()`` or on
    first use.

    Optional, outside the protocol: a ``relevance_floor`` attribute (a
    :class:`~.relevance.RelevanceFloor`) calibrated for this model's cosine scale; search then
    returns only memories that clear it. Without it, search has no floor unless settings set one.
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
    """What a store's optional ``diagnose()`` found (``mcp-memory doctor`` shows it): read without
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


@runtime_checkable
class Store(Protocol):
    """Persistence primitives. Every write is atomic; inside ``transaction()`` all writes commit together.

    Optional, outside the protocol:

    - ``warm()``, no arguments: the engine runs it in a background thread after ``open()`` to load
      whatever makes the first query fast (a vector cache);
    - ``vectors(ids: Sequence[str]) -> dict[str, Vector]``, required when ``capabilities.read_vectors``:
      each known memory's vectors, the rows in the order ``insert`` was given them (its whole text
      first, then its passages); unknown ids are absent;
    - ``bulk_load(rows: int)``, a context manager around an import of about ``rows`` memories (in
      several transactions): the store may prepare for many inserts (PostgreSQL drops its vector
      index and builds it again at the end). Every call keeps working inside it;
    - ``write_lock(key: str)``, called inside ``transaction()`` by a write whose outcome depends on
      what it read first (``store_memory``'s dedup check: the key names the owner, the namespace and
      the normalized text): wait until no other transaction, of any process, holds ``key``'s lock,
      and hold it until this transaction ends. A store whose write transactions exclude each other
      anyway (SQLite's ``BEGIN IMMEDIATE``) needs none; PostgreSQL's ``read committed`` does;
    - ``refresh(embed, progress=None)``, for a store whose truth lives outside it (the markdown
      vault's files, edited by hand): the engine calls it before every call, and the store brings
      its index up to date, embedding changed texts with ``embed(texts) -> (vectors, owners)``
      (the rows and owners ``insert`` takes: the engine's embedder and passage split);
      ``progress(done, total)`` is called as it goes. It must cost next to nothing when nothing
      changed. Its return value is a report for the caller (``mcp-memory reindex`` prints it);
    - ``diagnose() -> StoreDiagnosis``, called on a store that is NOT open (``mcp-memory doctor``):
      check the data where it lives without creating, migrating or writing anything (SQLite: a
      read-only connection and ``PRAGMA quick_check``), and say which schema version and embedding
      model it holds. Damage goes into ``problems``, not an exception;
    - re-embedding in place, required when ``capabilities.reembed`` (``mcp-memory reindex`` after a
      model change; the engine's ``reindex`` drives it): ``reembed_open(model_id, dimensions)`` opens
      the store bound to the model its data holds and returns that ``(model id, dimensions)``, or
      None when it holds ``model_id`` already (or nothing: it is then simply open);
      ``reembed_pending(limit) -> list[Memory]``, every memory (any state) still without rows of
      the new model, a batch at a time; ``reembed_put(memories, vectors, owners)`` keeps their new
      rows, committed (an interrupted run resumes from them); ``reembed_progress() -> (done,
      total)``; ``reembed_finish(embed) -> int`` embeds what is still pending with ``embed(memories)
      -> (vectors, owners)`` and switches every vector to the new model at once, binding the store
      to it. Until then servers on the old model keep working; after it, each one's next search or
      write raises ModelMismatchError (never a comparison of two models' vectors)."""

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
        self, where: MemoryFilter, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[Memory]:
        """Memories matching ``where`` ordered newest first by (created_at, id); keyset paging with
        ``after`` = the (created_at, id) of the last memory of the previous page."""

    def count(self, where: MemoryFilter) -> int: ...

    def namespaces(self, where: MemoryFilter | None = None) -> dict[str, int]:
        """Every namespace holding memories (matching ``where``, when given: the engine passes the
        Scope's visibility and namespaces), with its number of current memories among them (not
        superseded, not deleted; a namespace whose matching memories are all deleted counts 0)."""

    def iter_all(self) -> Iterator[Memory]:
        """Every memory in the store, in no particular order (export, maintenance)."""


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
