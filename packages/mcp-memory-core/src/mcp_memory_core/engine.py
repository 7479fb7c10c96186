"""The memory engine: the one place that owns the rules about memories, for every store.

Rules owned here: supersession chains (update = new memory, old one points at it; search on old
wording returns the head), soft delete (tombstones never appear in search or lists), which texts get
vectors (passages), gathering search candidates from the vector and keyword channels and resolving
them to live chain heads, filters, over-fetching so filtered or chain-collapsed searches never come
back short, and access statistics. Input checks live in :mod:`.validation`.
Stores only keep rows and vectors; rankers only order candidates, and rerankers (see
:mod:`.reranking`) only reorder the best of them.

Every public call runs in a :class:`~.scope.Scope` (who is asking). The engine asks the scope, in
the few helpers below (``_readable``, ``_owned``, ``_read_filter``), whether a memory may be read
or changed: a memory outside the scope is reported exactly like a missing one. A call without a
scope runs in the engine's ``default_scope`` (the local user, who owns the file); an engine built
with ``require_scope=True`` (the HTTP server) refuses such a call instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import threading
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from .errors import (
    ImportRecordError,
    InvalidInputError,
    MemoryNotFoundError,
    MemoryStateError,
    NotOwnerError,
    StorageError,
)
from .filters import NO_FILTERS, Filters
from .lifecycle import TTLPolicy
from .models import (
    DEDUP_THRESHOLD,
    DEFAULT_NAMESPACE,
    DUPLICATE_THRESHOLD,
    LOCAL_USER,
    Candidate,
    DeleteOutcome,
    ImportOutcome,
    Memory,
    MemoryFilter,
    MemoryView,
    Page,
    PrivacyScope,
    ReindexOutcome,
    ScoredCandidate,
    SearchHit,
    SearchResults,
    SimilarMemory,
    StoreOutcome,
    UpdateOutcome,
    derived_id,
    utcnow,
)
from .passages import split_passages
from .protocols import Embedder, Ranker, Reranker, Store, StoredVectors, Vector
from .recall import Recall, approximate_tokens, pack
from .relevance import RelevanceFloor
from .reranking import RerankStage
from .scope import Scope
from .turns import speaker_of
from .validation import (
    DEFAULT_LIMITS,
    MAX_LIST_LIMIT,
    MAX_SEARCH_LIMIT,
    Limits,
    decode_cursor,
    encode_cursor,
    nul_refusals,
    utf8_size,
    validate_content,
    validate_flag,
    validate_id,
    validate_importance,
    validate_limit,
    validate_memory_times,
    validate_metadata,
    validate_namespace,
    validate_occurred_at,
    validate_privacy_scope,
    validate_tags,
    validate_thread,
    validate_type,
)

log = logging.getLogger(__name__)

MAX_KNN_K = 4096  # sqlite-vec's ceiling, and plenty for any store
MAX_CHAIN_LENGTH = 10_000
ALL_NAMESPACES = "*"
SWEEP_INTERVAL_SECONDS = 60.0
DUPLICATE_CHECK_K = 5
PURGE_BATCH = 500
LIST_CHUNK = 100  # rows list_memories reads at a time while filling a page
# What a search ranks does not depend on its limit (up to SEARCH_POOL): the top 5 of limit=5 are the
# top 5 of limit=50. Chosen on LoCoMo dev against the latency of the search at 1k and 100k.
SEARCH_POOL = 50  # candidates each channel brings (more when versions collapse into fewer heads)
NEIGHBOUR_DEPTH = 10  # the leading candidates whose thread neighbours join them


def _json_bytes(memory: Memory) -> int:
    return utf8_size(memory.model_dump_json())


def normalize_content(text: str) -> str:
    """What "the same content" means for duplicates: case-folded, whitespace collapsed."""
    return " ".join(text.casefold().split())


def _batched(items: Iterable[Memory], size: int) -> Iterator[list[Memory]]:
    batch: list[Memory] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class MemoryEngine:
    """Store, search, update, delete and list memories over any Store, Embedder and Ranker, and
    zero or more Rerankers.

    ``namespace`` is the default namespace of every call; ``ttl`` the lifetime of each memory type;
    ``dedup_threshold`` the similarity at which ``store_memory`` lists an existing memory as similar,
    ``duplicate_threshold`` the one at which such a memory's relation is ``duplicate``, and
    ``conflict_policy`` (``report`` or ``supersede``) whether the closest duplicate is replaced (both
    thresholds default to values calibrated for all-MiniLM-L6-v2, see ``models``); ``context`` is
    attached to new memories as ``metadata["context"]``. ``track_access`` (default on) makes every
    search add one access to each memory it returns. ``default_scope`` is the scope of calls made
    without one (default: the local user working in ``namespace``); ``require_scope=True`` makes
    such calls an error instead (a multi-user server must never fall back to anyone). ``limits`` caps
    the bytes of content and metadata on every write and of a ``list_memories`` page.
    ``rerankers`` reorder the best ranked candidates of every search, in order, each within
    ``reranker_timeout`` seconds (see :mod:`.reranking`); by default there are none.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        ranker: Ranker,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        clock: Callable[[], datetime] = utcnow,
        track_access: bool = True,
        ttl: TTLPolicy | None = None,
        dedup_threshold: float = DEDUP_THRESHOLD,
        duplicate_threshold: float = DUPLICATE_THRESHOLD,
        conflict_policy: str = "report",
        context: Mapping[str, Any] | None = None,
        default_scope: Scope | None = None,
        require_scope: bool = False,
        limits: Limits = DEFAULT_LIMITS,
        relevance_floor: RelevanceFloor | None = None,
        rerankers: Iterable[Reranker] = (),
        reranker_timeout: float = 2.0,
    ) -> None:
        if conflict_policy not in ("report", "supersede"):
            raise InvalidInputError(
                f"conflict policy must be 'report' or 'supersede'; got {conflict_policy!r}."
            )
        stages = [RerankStage(reranker, reranker_timeout) for reranker in rerankers]
        twice = sorted({s.name for s in stages if [t.name for t in stages].count(s.name) > 1})
        if twice:
            raise InvalidInputError(
                f"the reranker {', '.join(map(repr, twice))} is configured more than once."
            )
        self.store = store
        self.embedder = embedder
        self.ranker = ranker
        self.namespace = validate_namespace(namespace)
        self.default_scope = default_scope or Scope.for_user(LOCAL_USER, project=self.namespace)
        self.namespace = self.default_scope.default_namespace
        self.require_scope = require_scope
        self.clock = clock
        self.track_access = track_access
        self.ttl = ttl or TTLPolicy()
        self.dedup_threshold = dedup_threshold
        self.duplicate_threshold = duplicate_threshold
        self.conflict_policy = conflict_policy
        self.context = dict(context) if context else None
        self.limits = limits
        self.relevance_floor = relevance_floor
        self._rerank_stages = stages
        self._opened = False
        self._last_sweep: datetime | None = None

    @property
    def rerankers(self) -> tuple[Reranker, ...]:
        """The rerankers every search runs, in order (fixed when the engine is built)."""
        return tuple(stage.reranker for stage in self._rerank_stages)

    # -- lifecycle -------------------------------------------------------------------------------
    def open(self) -> None:
        """Bind the store to the embedder's model (cheap: the model itself is not loaded)."""
        if not self._opened:
            self.store.open(self.embedder.model_id, self.embedder.dimensions)
            self._opened = True

    def warm(self) -> None:
        """Open the store and load the model, so the first real call is fast. A store with an optional
        ``warm()`` method (the sqlite-vec store loads its vector cache there) is warmed at the same
        time in a thread of its own: calls that reach the store before it is done wait there.
        Heavy rerankers load here too, after the embedder (the server runs this in the background
        after the MCP handshake); one that fails to load is logged and skipped by every search."""
        self.open()
        store_warm = getattr(self.store, "warm", None)
        if callable(store_warm):
            threading.Thread(
                target=_warm_quietly, args=(store_warm,), name="mcp-memory-store-warm", daemon=True
            ).start()
        self.embedder.load()
        if callable(getattr(self.store, "refresh", None)):
            try:
                self.refresh()  # what changed while the server was down, before the first call
            except Exception as exc:  # the first call retries it and reports the error
                log.warning("Catching up with the store failed: %s", exc)
        for stage in self._rerank_stages:
            if stage.heavy:
                stage.load()

    def close(self) -> None:
        self.store.close()
        self._opened = False

    def _ready(self) -> None:
        """Open the store; a store whose truth lives outside it (a markdown vault edited by hand)
        catches up with it first, through its optional ``refresh``."""
        self.open()
        if callable(getattr(self.store, "refresh", None)):
            self.refresh()

    def refresh(self, progress: Callable[[int, int], None] | None = None) -> Any:
        """Let the store catch up with changes made outside it: its optional ``refresh(embed,
        progress)`` embeds what changed with this engine's embedder and passage split. Every engine
        call does this first; ``mcp-memory reindex`` calls it with a progress bar. Returns the
        store's report (None for a store without ``refresh``)."""
        self.open()
        refresh = getattr(self.store, "refresh", None)
        if not callable(refresh):
            return None
        return refresh(self._embed, progress)

    def reindex(
        self, *, batch_size: int = 64, progress: Callable[[int, int], None] | None = None
    ) -> ReindexOutcome:
        """Re-embed every memory (every version, deleted ones too) with this engine's embedder, in
        place, when the store holds another model's vectors (``mcp-memory reindex`` after a model
        change). Resumable: each batch is committed, and a run interrupted for any reason goes on
        where it stopped. Servers still on the old model keep working until the switch at the end;
        then their next search or write says the store was re-embedded. ``progress(done, total)``
        after each batch. A store without ``capabilities.reembed`` raises InvalidInputError.

        A maintenance operation on the whole store, like ``sweep``: it reads and returns no memory
        (vectors are derived from the texts), so it takes no Scope; it runs where the store's data
        is reachable (the CLI of whoever can open the file or the database)."""
        if not self.store.capabilities.reembed:
            raise InvalidInputError(
                f"The store {self.store.location} cannot re-embed its memories in place: export them "
                "(`mcp-memory export --all-namespaces`) with the old embedder and import them into an "
                "empty store with the new one."
            )
        if self._opened:
            self.close()
        store: Any = self.store
        model_id, dimensions = self.embedder.model_id, self.embedder.dimensions
        previous = store.reembed_open(model_id, dimensions)
        self._opened = True
        if previous is None:
            return ReindexOutcome(previous=None, embedded=0, model_id=model_id)
        self.embedder.load()
        done, total = store.reembed_progress()
        if progress is not None:
            progress(done, total)
        embedded = 0
        while batch := store.reembed_pending(batch_size):
            vectors, owners = self._embed([memory.content for memory in batch])
            store.reembed_put(batch, vectors, owners)
            embedded += len(batch)
            done = min(done + len(batch), total)
            if progress is not None:
                progress(done, max(total, done))
        late = store.reembed_finish(lambda memories: self._embed([m.content for m in memories]))
        embedded += late
        if progress is not None:
            progress(done + late, max(total, done + late))
        return ReindexOutcome(previous=previous[0], embedded=embedded, model_id=model_id)

    # -- who is asking (the only place the engine consults the Scope) ------------------------------
    def _scope(self, scope: Scope | None) -> Scope:
        if scope is not None:
            return scope
        if self.require_scope:
            raise RuntimeError("this engine serves several users: every call needs a Scope")
        return self.default_scope

    def _readable(self, memory_id: str, scope: Scope) -> Memory:
        """The memory, if this scope may read it; otherwise exactly the error of a missing id."""
        found = self.store.get([memory_id]).get(memory_id)
        if found is None or not scope.can_read(found):
            raise MemoryNotFoundError(memory_id)
        return found

    def _owned(self, memory_id: str, scope: Scope, action: str) -> Memory:
        """The memory, if this scope may change it (its owner); readable but not owned: NotOwnerError."""
        memory = self._readable(memory_id, scope)
        if not scope.can_change(memory):
            raise NotOwnerError(memory_id, action)
        return memory

    def _read_filter(self, scope: Scope, namespace: str | None, **fields: Any) -> MemoryFilter:
        """The store filter of a read: the namespaces it covers and what the scope may see."""
        return scope.reading(scope.read_namespaces(namespace), **fields)

    # -- vectors ---------------------------------------------------------------------------------
    def _embed(self, contents: Sequence[str]) -> tuple[Vector, list[int] | None]:
        """Vectors for each content's passages, and the owner index of every row (None: one row each)."""
        passages = [split_passages(content) for content in contents]
        if all(len(p) == 1 for p in passages):
            return self.embedder.embed_documents(list(contents)), None
        owners = [index for index, texts in enumerate(passages) for _ in texts]
        return self.embedder.embed_documents([t for texts in passages for t in texts]), owners

    def _insert(self, memories: Sequence[Memory]) -> None:
        vectors, owners = self._embed([m.content for m in memories])
        self.store.insert(memories, vectors, owners)

    # -- writes ----------------------------------------------------------------------------------
    def store_memory(
        self,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        *,
        type: str | None = None,
        tags: Iterable[str] | None = None,
        importance: float | None = None,
        pinned: bool = False,
        namespace: str | None = None,
        privacy_scope: str | None = None,
        occurred_at: datetime | str | None = None,
        thread: str | None = None,
        scope: Scope | None = None,
    ) -> StoreOutcome:
        """Store a new memory owned by the scope's principal (``type`` defaults to semantic,
        ``importance`` to 0.5, ``privacy_scope`` to private, ``occurred_at`` to now, ``thread`` to
        none), unless the same content is already one of the principal's current memories in the
        namespace (status ``duplicate``, nothing written; given ``occurred_at``, only one that
        occurred the same day counts: the same words said on another day are another event).
        Near duplicates among the principal's memories are listed in ``similar`` (the memory is still
        stored); with conflict policy ``supersede`` the closest one of relation ``duplicate`` is updated
        instead (status ``superseded``)."""
        scope = self._scope(scope)
        when = validate_occurred_at(occurred_at, self.clock())
        fields: dict[str, Any] = {
            "content": validate_content(content, self.limits.content_bytes),
            "metadata": validate_metadata(metadata, self.limits.metadata_bytes),
            "namespace": scope.write_namespace(namespace),
            "pinned": validate_flag(pinned, "pinned"),
            "owner": scope.principal,
            "privacy_scope": validate_privacy_scope(privacy_scope) or PrivacyScope.PRIVATE,
        }
        if when is not None:
            fields["occurred_at"] = when
        if thread is not None:
            fields["thread"] = validate_thread(thread)
        if self.context is not None and "context" not in fields["metadata"]:
            fields["metadata"]["context"] = dict(self.context)
        fields.update(_optional_fields(type, tags, importance))
        self._ready()
        vectors, owners = self._embed([fields["content"]])
        # The check and the write in one transaction: another thread or process storing the same
        # text waits for this one's commit, then finds it (the embedding is done before, unlocked).
        # A store whose transactions do not exclude each other (PostgreSQL) locks the text instead.
        write_lock = getattr(self.store, "write_lock", None)
        with self.store.transaction():
            if write_lock is not None:
                write_lock(
                    json.dumps([scope.principal, fields["namespace"], normalize_content(fields["content"])])
                )
            duplicate, similar = self._near_duplicates(
                fields["content"], vectors[0], fields["namespace"], scope, when
            )
            if duplicate is not None:
                log.info("store_memory: duplicate of %s, nothing written", duplicate.id)
                return StoreOutcome(memory=duplicate, status="duplicate", similar=similar)
            closest = next((s for s in similar if s.relation == "duplicate"), None)
            if closest is not None and self.conflict_policy == "supersede":
                target = closest.memory
                log.info(
                    "store_memory: conflict policy 'supersede' replaces %s (similarity %.3f)",
                    target.id,
                    closest.similarity,
                )
                changes = {k: v for k, v in fields.items() if k not in ("content", "namespace", "owner")}
                outcome = self._new_version(target.id, fields["content"], changes, vectors, owners, scope)
                return StoreOutcome(
                    memory=outcome.memory, status="superseded", similar=similar, superseded=outcome.superseded
                )
            now = self.clock()
            memory = Memory(**{"occurred_at": now, **fields}, created_at=now, updated_at=now)
            self.store.insert([memory], vectors, owners)
        return StoreOutcome(memory=memory, status="stored", similar=similar)

    def _near_duplicates(
        self, content: str, vector: Vector, namespace: str, scope: Scope, occurred: datetime | None = None
    ) -> tuple[Memory | None, list[SimilarMemory]]:
        """The principal's current memory with the same normalized content (if any; with
        ``occurred``, one that occurred the same UTC day), and the principal's current memories at or
        above the dedup threshold, most similar first, each ``duplicate`` at or above the duplicate
        threshold and ``related`` below it. Other users' memories never count: they are not the
        principal's to update."""
        where = scope.owning(namespace, include_superseded=False)
        pairs = self.store.knn(vector, DUPLICATE_CHECK_K, where)
        found = self.store.get([memory_id for memory_id, _ in pairs])
        now = self.clock()
        wanted = normalize_content(content)
        similar = []
        for memory_id, similarity in pairs:
            memory = found.get(memory_id)
            if memory is None or self.ttl.is_expired(memory, now):
                continue
            if normalize_content(memory.content) == wanted and (
                occurred is None or _same_day(memory.occurred_at, occurred)
            ):
                return memory, []
            if similarity >= self.dedup_threshold:
                relation = "duplicate" if similarity >= self.duplicate_threshold else "related"
                similar.append(SimilarMemory(memory=memory, similarity=float(similarity), relation=relation))
        return None, similar

    def import_memories(
        self,
        memories: Iterable[Memory],
        *,
        batch_size: int = 64,
        on_batch: Callable[[int], None] | None = None,
        scope: Scope | None = None,
        vectors: StoredVectors | None = None,
    ) -> ImportOutcome:
        """Insert whole memories (ids, timestamps, chains as given), embedding in batches and writing
        one transaction per batch. Ids already present are skipped and counted, so a re-run is a no-op.
        ``on_batch`` is called with the number of memories handled after each batch (progress bars).

        ``vectors`` (an export's) are reused instead of embedding when they were made by this engine's
        model (same model id and dimensions) and a memory has one row per passage its content splits
        into; any other memory is embedded (``ImportOutcome.reused`` counts the reused ones).

        A memory holding a NUL character (U+0000), and every older version of one, is left out and
        listed in ``ImportOutcome.refused`` with why. Every other memory is checked before the first
        batch is written, so a refused one writes nothing (:class:`ImportRecordError` names it): it
        appears once, belongs to the scope's principal, goes to a namespace the scope may write,
        carries times from 1970 to a day from now, and a superseded one points at a version of the
        same owner and namespace, in the import or already stored, without its chain looping back to it.
        A failure while writing (a full disk, a crash) keeps the batches before it: run the same
        import again to finish it.

        An id already taken by another user's memory is treated exactly like a missing one: the memory
        is imported under an id derived from the principal and its own (stable, so a re-run skips it)
        and the import's references to it follow; only the principal's own memories count as present.
        """
        scope = self._scope(scope)
        self._ready()
        memories = list(memories)
        refused = nul_refusals(memories)
        memories = [m for m in memories if m.id not in refused]
        self._check_import(memories, scope)
        memories, renamed = self._claim_ids(memories, scope)
        given = self._reusable(vectors)
        if renamed:
            given = {renamed.get(memory_id, memory_id): rows for memory_id, rows in given.items()}
        inserted = skipped = reused = 0
        bulk = getattr(self.store, "bulk_load", None)
        # Sized by what is new: re-running a finished import must not make the store rebuild anything.
        with bulk(self._absent(memories)) if bulk is not None else contextlib.nullcontext():
            for batch in _batched(memories, batch_size):
                existing = self.store.get([m.id for m in batch])
                fresh = [m for m in batch if m.id not in existing]
                if fresh:
                    array, owners, count = self._import_vectors(fresh, given)
                    with self.store.transaction():
                        self.store.insert(fresh, array, owners)
                    reused += count
                inserted += len(fresh)
                skipped += len(batch) - len(fresh)
                if on_batch is not None:
                    on_batch(len(batch))
        return ImportOutcome(inserted=inserted, skipped=skipped, reused=reused, refused=refused)

    def _reusable(self, vectors: StoredVectors | None) -> Mapping[str, Vector]:
        """The rows of ``vectors`` if this engine's model made them, else none (they are embedded)."""
        if vectors is None or not vectors.rows:
            return {}
        mine = (self.embedder.model_id, self.embedder.dimensions)
        if (vectors.model_id, vectors.dimensions) != mine:
            log.info(
                "import: the vectors given are of %s (%d-d), not of %s (%d-d): embedding again",
                vectors.model_id,
                vectors.dimensions,
                *mine,
            )
            return {}
        return vectors.rows

    def _import_vectors(
        self, memories: Sequence[Memory], given: Mapping[str, Vector]
    ) -> tuple[Vector, list[int] | None, int]:
        """The rows to insert for ``memories`` and each row's memory index (None: one row each, as
        from ``_embed``): given rows where they fit the memory's passages, embedded ones otherwise;
        and how many memories reused given rows."""
        fitting: list[Vector | None] = []
        for memory in memories:
            array = given.get(memory.id)
            fits = array is not None and len(array) == len(split_passages(memory.content))
            fitting.append(array if fits else None)
        missing = [index for index, array in enumerate(fitting) if array is None]
        if len(missing) == len(memories):  # nothing given fits: embed them all, as before vectors travelled
            vectors, owners = self._embed([m.content for m in memories])
            return vectors, owners, 0
        if missing:
            embedded, owners = self._embed([memories[i].content for i in missing])
            rows_of: list[list[int]] = [[] for _ in missing]
            for row, owner in enumerate(owners if owners is not None else range(len(missing))):
                rows_of[owner].append(row)
            for position, index in enumerate(missing):
                fitting[index] = embedded[rows_of[position]]
        ordered = [array for array in fitting if array is not None]  # every memory has its rows now
        owner_list = [index for index, array in enumerate(ordered) for _ in range(len(array))]
        return (
            np.concatenate(ordered).astype(np.float32, copy=False),
            owner_list,
            len(memories) - len(missing),
        )

    def _claim_ids(self, memories: list[Memory], scope: Scope) -> tuple[list[Memory], dict[str, str]]:
        """``memories`` with every id that is another user's memory replaced by one of the principal's
        own (``superseded_by`` inside the import follows), and the ids replaced (old → new)."""
        taken = self._foreign_ids([m.id for m in memories], scope)
        if not taken:
            return memories, {}
        in_use = {m.id for m in memories}
        renamed: dict[str, str] = {}
        for old in sorted(taken):
            new = old
            while new in in_use or new in taken:  # planted under a derived id too: derive again
                new = derived_id("import-owner", scope.principal, new)
                if new not in in_use:
                    taken |= self._foreign_ids([new], scope)
            renamed[old] = new
            in_use.add(new)

        def claimed(memory: Memory) -> Memory:
            if memory.id not in renamed and memory.superseded_by not in renamed:
                return memory
            link = memory.superseded_by and renamed.get(memory.superseded_by, memory.superseded_by)
            return memory.model_copy(update={"id": renamed.get(memory.id, memory.id), "superseded_by": link})

        return [claimed(m) for m in memories], renamed

    def _foreign_ids(self, memory_ids: Sequence[str], scope: Scope) -> set[str]:
        """The ids among ``memory_ids`` that the store holds as another user's memory (two counts per
        thousand ids; the memories are read only where the counts differ)."""
        foreign: set[str] = set()
        for start in range(0, len(memory_ids), 1000):
            ids = frozenset(memory_ids[start : start + 1000])
            every = MemoryFilter(ids=ids, namespace=None, include_deleted=True, include_superseded=True)
            own = scope.owning(None, ids=ids, include_deleted=True, include_superseded=True)
            if self.store.count(every) != self.store.count(own):
                found = self.store.get(sorted(ids))
                foreign |= {memory_id for memory_id, m in found.items() if m.owner != scope.principal}
        return foreign

    def _absent(self, memories: Sequence[Memory]) -> int:
        """How many of ``memories`` the store does not hold yet (what an import will insert)."""
        present = 0
        for batch in _batched(memories, 1000):
            ids = frozenset(m.id for m in batch)
            present += self.store.count(
                MemoryFilter(ids=ids, namespace=None, include_deleted=True, include_superseded=True)
            )
        return len(memories) - present

    def memory_vectors(self, ids: Sequence[str], *, scope: Scope | None = None) -> StoredVectors:
        """The stored vectors of the memories among ``ids`` that ``iter_memories`` would give this
        scope (its principal's own): what an export with vectors carries. Raises InvalidInputError
        when the store cannot read its vectors back."""
        scope = self._scope(scope)
        self._ready()
        reader = getattr(self.store, "vectors", None)
        if not self.store.capabilities.read_vectors or reader is None:
            raise InvalidInputError(
                f"This store ({self.store.location}) cannot read its vectors back: export without vectors."
            )
        namespaces = scope.read_namespaces(ALL_NAMESPACES)
        mine = [m.id for m in self.store.get(ids).values() if self._exportable(m, scope, namespaces)]
        found: dict[str, Vector] = reader(mine) if mine else {}
        return StoredVectors(self.embedder.model_id, self.embedder.dimensions, found)

    def check_import(self, memories: Sequence[Memory], *, scope: Scope | None = None) -> None:
        """Raise :class:`ImportRecordError` for the first memory ``import_memories`` would refuse,
        writing nothing: lets a caller report a bad file before it starts a progress bar."""
        scope = self._scope(scope)
        self._ready()
        refused = nul_refusals(memories)
        self._check_import([m for m in memories if m.id not in refused], scope)

    def _check_import(self, memories: Sequence[Memory], scope: Scope) -> None:
        """Refuse the first memory (in input order) that ``import_memories`` may not write."""
        now = self.clock()
        in_import = {m.id: m for m in memories}
        elsewhere = {
            m.superseded_by for m in memories if m.superseded_by and m.superseded_by not in in_import
        }
        stored = self.store.get(sorted(elsewhere)) if elsewhere else {}
        links = {m.id: m.superseded_by for m in stored.values() if m.owner == scope.principal}
        loops = _loops({**links, **{m.id: m.superseded_by for m in memories}})
        seen: set[str] = set()
        for memory in memories:
            try:
                if memory.id in seen:
                    raise InvalidInputError("this id appears twice in the import.")
                seen.add(memory.id)
                validate_content(memory.content, self.limits.content_bytes)
                validate_metadata(memory.metadata, self.limits.metadata_bytes)
                if memory.owner != scope.principal:
                    raise InvalidInputError(
                        f"this memory belongs to {memory.owner!r}; only {scope.principal!r}'s own "
                        "memories can be imported here."
                    )
                scope.write_namespace(memory.namespace)
                validate_memory_times(memory, now)
                if memory.thread is not None:
                    validate_thread(memory.thread)
                if memory.superseded_by is not None:
                    newer = in_import.get(memory.superseded_by) or stored.get(memory.superseded_by)
                    _check_link(memory, newer)
                if memory.id in loops:
                    raise InvalidInputError(
                        f"superseded_by leads back to this memory ({' → '.join(loops[memory.id])}): "
                        "the newest version of a chain has no superseded_by."
                    )
            except InvalidInputError as exc:
                raise ImportRecordError(memory.id, str(exc)) from None

    def update_memory(
        self,
        memory_id: str,
        content: str,
        metadata: Mapping[str, Any] | None = None,
        *,
        type: str | None = None,
        tags: Iterable[str] | None = None,
        importance: float | None = None,
        privacy_scope: str | None = None,
        occurred_at: datetime | str | None = None,
        scope: Scope | None = None,
    ) -> UpdateOutcome:
        """Create the new version and point the old head at it, in one transaction.

        Only the current head of a chain can be updated: updating an older version would fork the
        chain, so the error names the head to update instead. Fields left ``None`` keep their values,
        except ``occurred_at``: the new version was said now unless told otherwise (its thread stays).
        Only the owner may update a memory.
        """
        scope = self._scope(scope)
        memory_id = validate_id(memory_id)
        content = validate_content(content, self.limits.content_bytes)
        changes = _optional_fields(type, tags, importance)
        if metadata is not None:
            changes["metadata"] = validate_metadata(metadata, self.limits.metadata_bytes)
        if (privacy := validate_privacy_scope(privacy_scope)) is not None:
            changes["privacy_scope"] = privacy
        if (when := validate_occurred_at(occurred_at, self.clock())) is not None:
            changes["occurred_at"] = when
        self._ready()
        self._require_current(self._owned(memory_id, scope, "update"), "update", scope)
        vectors, owners = self._embed([content])
        return self._new_version(memory_id, content, changes, vectors, owners, scope)

    def _new_version(
        self,
        memory_id: str,
        content: str,
        changes: Mapping[str, Any],
        vectors: Vector,
        owners: Sequence[int] | None,
        scope: Scope,
    ) -> UpdateOutcome:
        with self.store.transaction():
            old = self._owned(memory_id, scope, "update")  # re-read under the write lock: no fork
            self._require_current(old, "update", scope)
            now = self.clock()
            new = old.model_copy(
                update={
                    "occurred_at": now,
                    **changes,
                    "id": str(uuid.uuid4()),
                    "content": content,
                    "created_at": now,
                    "updated_at": now,
                    "access_count": 0,
                    "last_accessed": None,
                }
            )
            self.store.insert([new], vectors, owners)
            self.store.update_fields(old.id, {"superseded_by": new.id, "updated_at": now})
        superseded = old.model_copy(update={"superseded_by": new.id, "updated_at": now})
        return UpdateOutcome(memory=new, superseded=superseded)

    def delete_memory(
        self, memory_id: str, *, hard: bool = False, scope: Scope | None = None
    ) -> DeleteOutcome:
        """Soft delete (default): set the tombstone; the row stays, the memory never appears in search.

        Deleting the head removes the fact from search (older versions resolve to a deleted head).
        Deleting an older version removes only that version: its wording no longer matches, and the
        chain still resolves to its head.

        Hard delete (``hard=True``) purges the memory's WHOLE chain — every version's content, vectors
        and keyword index — since each version holds the fact being forgotten; no pointer is left
        dangling. ``purged`` lists the removed ids. Only the owner may delete a memory.
        """
        scope = self._scope(scope)
        memory_id = validate_id(memory_id)
        hard = validate_flag(hard, "hard")
        self._ready()
        if hard:
            with self.store.transaction():
                memory = self._owned(memory_id, scope, "delete")
                chain = [m for m in self.chain_of(memory, scope=scope) if scope.can_change(m)]
                self.store.purge([m.id for m in chain])
            return DeleteOutcome(memory=memory, status="purged", head_id=None, purged=[m.id for m in chain])
        with self.store.transaction():
            memory = self._owned(memory_id, scope, "delete")
            if memory.is_deleted:
                return DeleteOutcome(
                    memory=memory, status="already_deleted", head_id=self._head_id(memory, scope)
                )
            now = self.clock()
            self.store.update_fields(memory_id, {"deleted_at": now, "updated_at": now})
        deleted = memory.model_copy(update={"deleted_at": now, "updated_at": now})
        return DeleteOutcome(memory=deleted, status="deleted", head_id=self._head_id(deleted, scope))

    def restore_memory(self, memory_id: str, *, scope: Scope | None = None) -> Memory:
        """Undo a soft delete: clear the tombstone of a deleted memory, which is searchable and listed
        again as it was (a restored head is current again; a restored older version resolves to its
        head). Owner only; a memory outside the scope is missing. A memory that is not deleted, or
        one its type's lifetime tombstoned (it would expire again at once), cannot be restored: the
        error says what to do instead. A purged memory is gone for good."""
        scope = self._scope(scope)
        memory_id = validate_id(memory_id)
        self._ready()
        with self.store.transaction():
            memory = self._owned(memory_id, scope, "restore")
            if not memory.is_deleted:
                raise MemoryStateError(f"Memory {memory_id} is not deleted; there is nothing to restore.")
            if self.ttl.is_expired(memory, self.clock()):
                raise MemoryStateError(
                    f"Memory {memory_id} expired (the lifetime of {memory.type} memories is over); "
                    "restored, it would expire again at once. Store its content again as a new memory."
                )
            now = self.clock()
            self.store.update_fields(memory_id, {"deleted_at": None, "updated_at": now})
        return memory.model_copy(update={"deleted_at": None, "updated_at": now})

    def pin_memory(self, memory_id: str, pinned: bool = True, *, scope: Scope | None = None) -> Memory:
        """Pin (or unpin) the current version of a memory: pinned memories never expire. Owner only."""
        scope = self._scope(scope)
        memory_id = validate_id(memory_id)
        pinned = validate_flag(pinned, "pinned")
        self._ready()
        with self.store.transaction():
            memory = self._owned(memory_id, scope, "pin")
            self._require_current(memory, "pin", scope)
            now = self.clock()
            self.store.update_fields(memory_id, {"pinned": pinned, "updated_at": now})
        return memory.model_copy(update={"pinned": pinned, "updated_at": now})

    def clear_namespace(self, namespace: str, *, scope: Scope | None = None) -> int:
        """Purge every memory the principal owns in a namespace (all versions, tombstones included).
        Other users' memories in it are theirs, and stay. Returns the count."""
        scope = self._scope(scope)
        name = scope.write_namespace(namespace)
        self._ready()
        where = scope.owning(name, include_deleted=True, include_superseded=True)
        removed = 0
        while True:
            with self.store.transaction():
                batch = self.store.list(where, PURGE_BATCH)
                if not batch:
                    return removed
                removed += self.store.purge([m.id for m in batch])

    def sweep(self) -> int:
        """Tombstone every memory past its type's lifetime (pinned ones never expire), dating the
        tombstone at the moment it expired. Returns how many were swept (``mcp-memory gc``)."""
        self._ready()
        now = self.clock()
        swept = 0
        for memory_type, lifetime in self.ttl.expiring_types().items():
            where = MemoryFilter(
                namespace=None,
                types=frozenset({memory_type}),
                created_before=now - lifetime,
                pinned=False,
                include_superseded=True,
            )
            while True:
                with self.store.transaction():
                    batch = self.store.list(where, PURGE_BATCH)
                    for memory in batch:
                        expired_at = self.ttl.expires_at(memory) or now
                        self.store.update_fields(memory.id, {"deleted_at": expired_at, "updated_at": now})
                swept += len(batch)
                if len(batch) < PURGE_BATCH:
                    break
        if swept:
            log.info("Swept %d expired memories", swept)
        self._last_sweep = now
        return swept

    def _sweep_if_due(self) -> None:
        now = self.clock()
        if self._last_sweep is None or (now - self._last_sweep).total_seconds() >= SWEEP_INTERVAL_SECONDS:
            try:
                self.sweep()
            except StorageError as exc:  # a read-only database: reads go on, expired memories stay
                log.warning("TTL sweep skipped: %s", exc)
                self._last_sweep = now

    # -- reads -----------------------------------------------------------------------------------
    def get_memory(self, memory_id: str, *, history: bool = False, scope: Scope | None = None) -> MemoryView:
        """The version asked for, as it is (never silently swapped), with the head of its chain and,
        with ``history``, the whole chain oldest first (the versions this scope may read)."""
        scope = self._scope(scope)
        memory_id = validate_id(memory_id)
        history = validate_flag(history, "history")
        self._ready()
        memory = self._readable(memory_id, scope)
        expiry = self.ttl.expires_at(memory)
        if memory.is_deleted:
            status = "expired" if expiry is not None and memory.deleted_at == expiry else "deleted"
        elif expiry is not None and expiry <= self.clock():
            status = "expired"
        elif memory.superseded_by is not None:
            status = "superseded"
        else:
            status = "current"
        chain = self.chain_of(memory, scope=scope) if history else None
        readable = frozenset(m.id for m in chain or ())
        seen = [self._as_seen(m, scope, readable) for m in chain] if chain is not None else None
        return MemoryView(
            memory=self._as_seen(memory, scope, readable),
            head_id=self._head_id(memory, scope),
            status=status,
            history=seen,
        )

    def list_memories(
        self,
        limit: int = 50,
        cursor: str | None = None,
        filters: Filters = NO_FILTERS,
        namespace: str | None = None,
        *,
        scope: Scope | None = None,
        measure: Callable[[Memory], int] | None = None,
        page_limit: int | None = None,
    ) -> Page:
        """Current memories (chain heads, no tombstones, nothing expired) matching ``filters``, newest
        first, in the scope's home namespaces by default; ``namespace="*"``: every readable one.

        A page also ends before its memories' sizes would pass ``page_limit`` (``capped`` then says
        so), each memory counted by ``measure``: by default its JSON bytes against
        ``limits.page_bytes``; a surface passes the size of its own serialized form and its own limit
        (the MCP server: its result token budget). It always holds at least one memory, so paging
        always moves on."""
        scope = self._scope(scope)
        limit = validate_limit(limit, MAX_LIST_LIMIT)
        after = decode_cursor(cursor) if cursor else None
        namespaces = scope.read_namespaces(namespace)
        self._ready()
        self.sweep()  # lists must not show what has expired: tombstone it first (cheap when none)
        where = self._scoped(filters.where(None, include_superseded=False), scope, namespaces)
        cap = self.limits.page_bytes if page_limit is None else page_limit
        page, more, capped = self._fill_page(where, limit, after, measure or _json_bytes, cap)
        return Page(
            memories=page,
            next_cursor=encode_cursor(page[-1]) if more and page else None,
            total=self.store.count(where),
            capped=capped,
        )

    def _fill_page(
        self,
        where: MemoryFilter,
        limit: int,
        after: tuple[datetime, str] | None,
        measure: Callable[[Memory], int],
        cap: int,
    ) -> tuple[list[Memory], bool, bool]:
        """Up to ``limit`` memories after ``after`` whose sizes add up to at most ``cap`` (at least one),
        read in chunks so a page of big memories does not read a thousand; then (more remain, cut by size)."""
        page: list[Memory] = []
        used = 0
        while True:
            wanted = min(limit - len(page), LIST_CHUNK) + 1  # one more than needed: are there more?
            rows = self.store.list(where, wanted, after)
            for memory in rows:
                if len(page) == limit:
                    return page, True, False
                size = measure(memory)
                if page and used + size > cap:
                    return page, True, True
                page.append(memory)
                used += size
            if len(rows) < wanted:
                return page, False, False
            after = (page[-1].created_at, page[-1].id)

    def count(self, namespace: str | None = None, *, scope: Scope | None = None) -> int:
        """Current memories this scope may read (home namespaces by default, ``"*"``: all readable)."""
        scope = self._scope(scope)
        where = self._read_filter(scope, namespace, include_superseded=False)
        self._ready()
        return self.store.count(where)

    def list_namespaces(self, *, scope: Scope | None = None) -> dict[str, int]:
        """Every namespace holding memories this scope may read, with how many of them are current
        (seed 001's list_agents). Namespaces holding only other users' private memories are not shown."""
        scope = self._scope(scope)
        self._ready()
        where = scope.reading(scope.readable, include_deleted=True, include_superseded=True)
        return self.store.namespaces(where)

    def iter_memories(
        self, namespace: str | None = ALL_NAMESPACES, *, scope: Scope | None = None
    ) -> Iterator[Memory]:
        """Every memory the principal owns (all versions, tombstones) in a namespace, or in every
        readable one with ``"*"`` (export: one's own memories; shared ones are their owners' to export)."""
        scope = self._scope(scope)
        namespaces = scope.read_namespaces(namespace)
        self._ready()
        return (m for m in self.store.iter_all() if self._exportable(m, scope, namespaces))

    @staticmethod
    def _exportable(memory: Memory, scope: Scope, namespaces: Collection[str] | None) -> bool:
        """One's own memories, in a readable namespace (of ``namespaces`` when given)."""
        return (
            memory.owner == scope.principal
            and scope.can_read(memory)
            and (namespaces is None or memory.namespace in namespaces)
        )

    def search_memories(
        self,
        query: str,
        limit: int = 10,
        filters: Filters = NO_FILTERS,
        namespace: str | None = None,
        *,
        scope: Scope | None = None,
    ) -> list[SearchHit]:
        """The hits of :meth:`search` (best first), without its warnings and floor."""
        return self.search(query, limit, filters, namespace, scope=scope).hits

    def search(
        self,
        query: str,
        limit: int = 10,
        filters: Filters = NO_FILTERS,
        namespace: str | None = None,
        *,
        scope: Scope | None = None,
    ) -> SearchResults:
        """Rank live chain heads matching ``filters`` against ``query``, among the memories this
        scope may read in its home namespaces (``namespace="*"``: every readable one).

        The stages, in order: sources (the vector channel over every version's passages, the best
        match per chain winning, and the keyword channel when the store has one) → resolve (chain
        heads, filters, Scope) → thread expansion (each candidate's neighbouring turns) → ranker →
        relevance floor → rerankers → the best ``limit`` → record access. A reranker that fails is
        skipped and ``warnings`` says so: no reranker can fail a search.
        """
        scope = self._scope(scope)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string.")
        limit = validate_limit(limit, MAX_SEARCH_LIMIT)
        namespaces = scope.read_namespaces(namespace)
        self._ready()
        self._sweep_if_due()
        vector = self.embedder.embed_query(query)
        where = self._scoped(filters.where(None, include_superseded=True), scope, namespaces)
        candidates = self._gather(query, vector, limit, where, scope)
        candidates = self._with_neighbours(vector, candidates, limit, where, scope)
        now = self.clock()
        ranked = self.ranker.rank(query, candidates, now)
        ranked, floor, below = self._above_floor(candidates, ranked, limit)
        warnings: list[str] = []
        ranked = self._rerank(query, ranked, now, warnings)[:limit]
        self._record_access(ranked, now)
        return SearchResults(
            warnings=warnings,
            floor=floor,
            below_floor=below,
            hits=[
                SearchHit(
                    memory=scored.candidate.memory,
                    score=scored.score,
                    matched_id=scored.candidate.matched_id,
                    similarity=scored.candidate.vector_similarity,
                    parts=dict(scored.parts),
                )
                for scored in ranked
            ],
        )

    def _above_floor(
        self, candidates: Sequence[Candidate], ranked: Sequence[ScoredCandidate], limit: int
    ) -> tuple[list[ScoredCandidate], dict[str, float] | None, int]:
        """The ranked candidates that clear the relevance floor, in the ranker's order (search cuts
        them to ``limit`` after the rerankers), the floor as ``explain`` shows it, and how many of
        the ranker's best ``limit`` it held back.

        The floor comes before the rerankers: it judges each memory by its own features, not by its
        place, so its verdict is the same either way; this way rerankers spend their depth on
        memories that can be returned, and none can bring back one the floor held back."""
        if self.relevance_floor is None:
            return list(ranked), None, 0
        kept, background = self.relevance_floor.kept(candidates, ranked)
        top = {s.candidate.memory.id for s in ranked[:limit]}
        held_back = len(top - {s.candidate.memory.id for s in kept})
        return kept, self.relevance_floor.describe(background), held_back

    def _rerank(
        self, query: str, ranked: Sequence[ScoredCandidate], now: datetime, warnings: list[str]
    ) -> list[ScoredCandidate]:
        """The rerank stage: each reranker in turn reorders the best ``depth`` of what the stage
        before left, the rest following in order (see :mod:`.reranking`). One that raises, runs out
        of time or answers with anything but a reordering is skipped, with a sentence in ``warnings``."""
        out = list(ranked)
        for stage in self._rerank_stages:
            out, warning = stage.apply(query, out, now)
            if warning is not None:
                warnings.append(warning)
        return out

    def _record_access(self, ranked: Sequence[ScoredCandidate], now: datetime) -> None:
        if self.track_access and ranked:
            try:
                self.store.record_access({s.candidate.memory.id: 1 for s in ranked}, now)
            except StorageError as exc:  # statistics only: the search still answers
                log.warning("Access statistics not recorded: %s", exc)

    def recall(
        self,
        query: str,
        token_budget: int,
        namespace: str | None = None,
        filters: Filters = NO_FILTERS,
        *,
        scope: Scope | None = None,
    ) -> Recall:
        """The best memories for ``query`` packed into ``token_budget`` tokens (seed 002's
        memory_injection), counted with the embedder's tokenizer when it has ``count_tokens``."""
        if (
            isinstance(token_budget, bool)
            or not isinstance(token_budget, int)
            or not 1 <= token_budget <= 100_000
        ):
            raise InvalidInputError(
                f"token_budget must be an integer from 1 to 100000; got {token_budget!r}."
            )
        hits = self.search_memories(
            query, limit=MAX_SEARCH_LIMIT, filters=filters, namespace=namespace, scope=scope
        )
        counter = getattr(self.embedder, "count_tokens", None)
        return pack(hits, token_budget, counter if callable(counter) else approximate_tokens, self.clock())

    def stats(self, *, scope: Scope | None = None) -> dict[str, Any]:
        """Counts for the stats resource, of what this scope may read: per namespace, and by type in
        its default namespace."""
        scope = self._scope(scope)
        self._ready()
        home = frozenset({scope.default_namespace})
        by_type = {
            str(t): self.store.count(scope.reading(home, include_superseded=False, types=frozenset({t})))
            for t in self.ttl.ttl
        }
        return {
            "user": scope.principal,
            "teams": sorted(scope.teams),
            "namespace": scope.default_namespace,
            "home_namespaces": list(scope.home_namespaces),
            "namespaces": self.list_namespaces(scope=scope),
            "current_in_namespace": self.store.count(scope.reading(home, include_superseded=False)),
            "by_type": by_type,
            "stored_versions_all_namespaces": self.store.count(
                scope.reading(scope.readable, include_deleted=True, include_superseded=True)
            ),
            "embedder": self.embedder.model_id,
            "store": self.store.location,
            "ranker": type(self.ranker).__name__,
            "rerankers": [stage.name for stage in self._rerank_stages],
            "ttl": {str(t): (d.total_seconds() if d is not None else None) for t, d in self.ttl.ttl.items()},
        }

    @staticmethod
    def _scoped(where: MemoryFilter, scope: Scope, namespaces: frozenset[str] | None) -> MemoryFilter:
        """A user filter narrowed to what ``scope`` may read in ``namespaces``."""
        bounds = scope.reading(namespaces)
        return dataclasses.replace(
            where, namespace=None, namespaces=bounds.namespaces, visible_to=bounds.visible_to
        )

    def _gather(
        self, query: str, vector: Vector, limit: int, where: MemoryFilter, scope: Scope
    ) -> list[Candidate]:
        """Candidates from both channels, resolved to live heads that match the filter.

        Several versions of one chain, or matches whose head was deleted or no longer matches the
        filter, collapse into fewer candidates than asked for: fetch deeper until the vector channel
        alone yields ``limit`` candidates or the store is exhausted.
        """
        k = min(max(SEARCH_POOL, limit), MAX_KNN_K)
        keyword = self.store.capabilities.keyword_search
        while True:
            vector_pairs = self.store.knn(vector, k, where)
            keyword_pairs = self.store.keyword_search(query, k, where) if keyword else []
            heads = self._live_heads(
                [i for i, _ in vector_pairs] + [i for i, _ in keyword_pairs], where, scope
            )
            by_vector = _best_per_head(vector_pairs, heads)
            if len(by_vector) >= limit or len(vector_pairs) < k or k >= MAX_KNN_K:
                break
            k = min(k * 4, MAX_KNN_K)
        by_keyword = _best_per_head(keyword_pairs, heads)
        heads_by_id = {head.id: head for head in heads.values()}
        keyword_only = [h for h in by_keyword if h not in by_vector]
        similar = self._similarity_of(vector, keyword_only, by_keyword, where)
        candidates = []
        vector_ranks = {head: rank for rank, head in enumerate(by_vector, start=1)}
        keyword_ranks = {head: rank for rank, head in enumerate(by_keyword, start=1)}
        for head_id in list(by_vector) + keyword_only:
            found = by_vector.get(head_id) or similar.get(head_id)
            matched, similarity = found if found is not None else (None, None)
            _, keyword_score = by_keyword.get(head_id, (None, None))
            candidates.append(
                Candidate(
                    memory=heads_by_id[head_id],
                    matched_id=matched,
                    vector_similarity=similarity,
                    vector_rank=vector_ranks.get(head_id),
                    keyword_score=keyword_score,
                    keyword_rank=keyword_ranks.get(head_id),
                )
            )
        return candidates

    def _similarity_of(
        self,
        vector: Vector,
        head_ids: Sequence[str],
        by_keyword: Mapping[str, tuple[str, float]],
        where: MemoryFilter,
    ) -> dict[str, tuple[str, float]]:
        """head id -> (the best matching version's id, its similarity) for keyword matches beyond
        the vector channel's depth, over the head and the version the keyword channel matched.
        Without it a memory only the keyword channel found would rank as if unrelated by meaning
        (no similarity), however close it is: LoCoMo dev turns hit@5 at limit 5 goes from 0.718 to
        0.763 with it (docs/benchmarks.md)."""
        if not head_ids:
            return {}
        chain_of = {head_id: head_id for head_id in head_ids}
        chain_of.update({by_keyword[head_id][0]: head_id for head_id in head_ids})
        ids = frozenset(chain_of) if where.ids is None else frozenset(chain_of) & where.ids
        around = dataclasses.replace(where, ids=ids)
        best: dict[str, tuple[str, float]] = {}
        for memory_id, similarity in self.store.knn(vector, len(chain_of), around):
            if math.isfinite(similarity):
                best.setdefault(chain_of[memory_id], (memory_id, float(similarity)))
        return best

    def _with_neighbours(
        self,
        vector: Vector,
        candidates: list[Candidate],
        limit: int,
        where: MemoryFilter,
        scope: Scope,
    ) -> list[Candidate]:
        """Thread expansion: the turn just before and just after each leading candidate in its
        conversation joins the candidates (with its own vector and keyword scores), and every
        candidate learns which candidates are its neighbours. A reply ("Yes, it was wonderful")
        rarely matches a question by itself; the turn it answers often does.

        Leading: the best ``NEIGHBOUR_DEPTH`` by their better channel rank (``limit`` of them for a
        limit beyond ``SEARCH_POOL``, so that what is ranked never depends on a limit up to it), in a
        thread, and said by someone (:func:`.turns.speaker_of`): a memory without a speaker has no
        replies, so its neighbours cannot lift anything (LoCoMo dev: expanding the best 10 does as
        well as all)."""
        depth = limit if limit > SEARCH_POOL else NEIGHBOUR_DEPTH
        leading = sorted(
            candidates, key=lambda c: min(c.vector_rank or MAX_KNN_K, c.keyword_rank or MAX_KNN_K)
        )[:depth]
        threaded = [
            c.memory.id for c in leading if c.memory.thread is not None and speaker_of(c.memory) is not None
        ]
        if not threaded:
            return candidates
        live = dataclasses.replace(where, include_superseded=False)
        neighbours = self.store.thread_neighbours(threaded, live)
        known = {c.memory.id for c in candidates}
        new_ids = sorted(
            {n for pair in neighbours.values() for n in pair if n is not None and n not in known}
        )
        if new_ids:
            # Their similarity, not their keyword score: a neighbour sharing the query's words is
            # almost always a keyword candidate already (the channel returns 4 x limit).
            around = dataclasses.replace(live, ids=frozenset(new_ids))
            similarity = dict(self.store.knn(vector, len(new_ids), around))
            now = self.clock()
            for memory in self.store.get(new_ids).values():
                if scope.can_read(memory) and memory.is_current and not self.ttl.is_expired(memory, now):
                    candidates.append(
                        Candidate(
                            memory=memory,
                            matched_id=memory.id if memory.id in similarity else None,
                            vector_similarity=similarity.get(memory.id),
                        )
                    )
        # A neighbour's own neighbours were not asked for, but adjacency goes both ways.
        previous: dict[str, str] = {}
        following: dict[str, str] = {}
        for memory_id, (before, after) in neighbours.items():
            if before is not None:
                previous[memory_id] = before
                following.setdefault(before, memory_id)
            if after is not None:
                following[memory_id] = after
                previous.setdefault(after, memory_id)
        present = {c.memory.id for c in candidates}
        out = []
        for c in candidates:
            before, after = previous.get(c.memory.id), following.get(c.memory.id)
            before, after = (before if before in present else None), (after if after in present else None)
            out.append(
                c
                if before is None and after is None
                else dataclasses.replace(c, previous_id=before, next_id=after)
            )
        return out

    def _live_heads(self, memory_ids: Sequence[str], where: MemoryFilter, scope: Scope) -> dict[str, Memory]:
        """memory id -> its live head, for matches whose head is current, readable in ``scope`` and
        matches ``where``'s user-facing filters (a filter asks about the fact as it is now, not an old
        wording)."""
        matched = self.store.get(list(dict.fromkeys(memory_ids)))
        heads = self.resolve_heads(list(matched.values()))
        # The same filter, minus what selects versions rather than facts (heads are current by now).
        head_filter = dataclasses.replace(where, ids=None, superseded_by_in=None)
        now = self.clock()
        return {
            memory_id: head
            for memory_id, head in heads.items()
            if head.is_current
            and scope.can_read(head)
            and not self.ttl.is_expired(head, now)  # hidden at once, before any sweep
            and (not where.narrows_content or head_filter.matches(head))
        }

    # -- chains ----------------------------------------------------------------------------------
    def _require_current(self, memory: Memory, action: str, scope: Scope) -> None:
        if memory.is_deleted:
            raise MemoryStateError(
                f"Memory {memory.id} is deleted; it cannot be {action}d. Store a new memory."
            )
        if memory.superseded_by is not None:
            head = self._head_id(memory, scope)
            raise MemoryStateError(
                f"Memory {memory.id} was superseded; its current version is {head}. {action.capitalize()} "
                f"that one instead."
            )

    def _as_seen(self, memory: Memory, scope: Scope, readable: frozenset[str] = frozenset()) -> Memory:
        """``memory`` as ``scope`` sees it: ``superseded_by`` names the next later version this scope
        may read, or nothing (a version made private later is not revealed, not even its id).
        ``readable``: ids already known readable (the history read), which need no lookup."""
        successor, skipped = memory.superseded_by, {memory.id}
        while successor is not None and successor not in skipped:
            if successor in readable:
                break
            found = self.store.get([successor]).get(successor)
            if found is None:  # a broken pointer names no one's memory: shown as stored
                return memory
            if scope.can_read(found):
                break
            skipped.add(successor)
            successor = found.superseded_by
        else:
            successor = None
        if successor == memory.superseded_by:
            return memory
        return memory.model_copy(update={"superseded_by": successor})

    def _head_id(self, memory: Memory, scope: Scope) -> str | None:
        """The id of the head of ``memory``'s chain, if this scope may read it."""
        heads = self.resolve_heads([memory])
        head = heads.get(memory.id)
        return head.id if head is not None and scope.can_read(head) else None

    def chain_of(self, memory: Memory, *, scope: Scope | None = None) -> list[Memory]:
        """Every version of ``memory``'s chain this scope may read, oldest first, ending with its head."""
        scope = self._scope(scope)
        chain = [memory]
        frontier = {memory.id}
        seen = {memory.id}
        while frontier:  # predecessors: memories whose superseded_by points into the frontier
            where = MemoryFilter(namespace=None, include_deleted=True, superseded_by_in=frozenset(frontier))
            before = [m for m in self.store.list(where, MAX_CHAIN_LENGTH) if m.id not in seen]
            seen.update(m.id for m in before)
            chain = before + chain
            frontier = {m.id for m in before}
        current = memory
        while current.superseded_by and current.superseded_by not in seen:
            found = self.store.get([current.superseded_by]).get(current.superseded_by)
            if found is None:
                break
            chain.append(found)
            seen.add(found.id)
            current = found
        return sorted((m for m in chain if scope.can_read(m)), key=lambda m: (m.created_at, m.id))

    def resolve_heads(self, memories: Sequence[Memory]) -> dict[str, Memory]:
        """Map each memory's id to the head of its chain (the memory itself if it is the head).

        Follows ``superseded_by`` in batches. A chain whose pointer leads to a missing row (a broken
        database) maps to the last memory reachable, and is logged.
        """
        known: dict[str, Memory] = {m.id: m for m in memories}
        for _ in range(MAX_CHAIN_LENGTH):
            missing = {
                m.superseded_by for m in known.values() if m.superseded_by and m.superseded_by not in known
            }
            if not missing:
                break
            fetched = self.store.get(sorted(missing))
            for lost in missing - fetched.keys():
                log.error("Broken supersession chain: memory %s is referenced but missing", lost)
            if not fetched:
                break
            known.update(fetched)
        heads: dict[str, Memory] = {}
        for memory in memories:
            current, seen = memory, {memory.id}
            while current.superseded_by and current.superseded_by in known:
                current = known[current.superseded_by]
                if current.id in seen:
                    log.error("Cycle in supersession chain at memory %s", current.id)
                    break
                seen.add(current.id)
            heads[memory.id] = current
        return heads


def _same_day(first: datetime, second: datetime) -> bool:
    return first.astimezone(UTC).date() == second.astimezone(UTC).date()


def _loops(links: Mapping[str, str | None]) -> dict[str, list[str]]:
    """Each id on a loop of ``links`` (id → the id it is superseded by) → the loop from it back to it.
    Every id is walked once."""
    loops: dict[str, list[str]] = {}
    walked: set[str] = set()
    for start in links:
        path: list[str] = []
        at: dict[str, int] = {}
        node: str | None = start
        while node is not None and node in links and node not in walked and node not in at:
            at[node] = len(path)
            path.append(node)
            node = links[node]
        if node is not None and node in at:
            loop = path[at[node] :]
            for index, member in enumerate(loop):
                loops[member] = [*loop[index:], *loop[:index], member]
        walked.update(path)
    return loops


def _check_link(memory: Memory, newer: Memory | None) -> None:
    """An imported version points at a newer version of its own chain: same owner, same namespace.
    Another user's memory is reported exactly like a missing one."""
    if newer is None or newer.owner != memory.owner:
        raise InvalidInputError(
            f"superseded_by names memory {memory.superseded_by}, which is neither in this import nor one "
            "of your memories: export the whole chain (every version) and import it together."
        )
    if newer.namespace != memory.namespace:
        raise InvalidInputError(
            f"superseded_by names memory {newer.id} in namespace {newer.namespace!r}, but this memory is "
            f"in {memory.namespace!r}: a chain of versions never crosses namespaces."
        )


def _optional_fields(
    type: str | None, tags: Iterable[str] | None, importance: float | None
) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if (checked_type := validate_type(type)) is not None:
        fields["type"] = checked_type
    if (checked_tags := validate_tags(tags)) is not None:
        fields["tags"] = checked_tags
    if (checked_importance := validate_importance(importance)) is not None:
        fields["importance"] = checked_importance
    return fields


def _best_per_head(
    pairs: Sequence[tuple[str, float]], heads: Mapping[str, Memory]
) -> dict[str, tuple[str, float]]:
    """head id -> (the matching version's id, its score), in channel order, the first (best) match
    of each chain kept; matches without a live head are dropped."""
    best: dict[str, tuple[str, float]] = {}
    for memory_id, score in pairs:
        if memory_id in heads and math.isfinite(score):
            best.setdefault(heads[memory_id].id, (memory_id, float(score)))
    return best


def _warm_quietly(store_warm: Callable[[], object]) -> None:
    """Run a store's optional warm-up; a failure is logged, and the first call that needs it retries."""
    try:
        store_warm()
    except Exception:
        log.exception("store warm-up failed; the first search will load what it needs")
