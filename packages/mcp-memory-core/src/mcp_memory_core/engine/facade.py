"""The memory engine: the one place that owns the rules about memories, for every store.

Rules owned here, each in a part of its own: supersession chains (:mod:`.chains`: update = new
memory, old one points at it; search on old wording returns the head), writes (:mod:`.writes`: soft
delete, tombstones never appear in search or lists; duplicates), imports (:mod:`.imports`), reads
(:mod:`.reads`), the search pipeline (:mod:`.search`: gathering candidates from the vector and
keyword channels, resolving them to live chain heads, filters, over-fetching so filtered or
chain-collapsed searches never come back short, access statistics) and maintenance
(:mod:`.maintenance`: warm-up, lifetime sweep, re-embedding). Input checks live in
:mod:`..validation`. Stores only keep rows and vectors; rankers only order candidates, and rerankers
(see :mod:`..reranking`) only reorder the best of them.

Every public call runs in a :class:`~..scope.Scope` (who is asking); :mod:`.basis` is the only
place the engine asks it whether a memory may be read or changed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..filters import NO_FILTERS, Filters
from ..models import (
    DeleteOutcome,
    ImportOutcome,
    Memory,
    MemoryView,
    Page,
    ReindexOutcome,
    SearchHit,
    SearchResults,
    StoreOutcome,
    UpdateOutcome,
)
from ..protocols import Reranker, StoredVectors
from ..recall import Recall
from ..scope import ALL_NAMESPACES, Scope
from .basis import EngineBasis
from .chains import Chains
from .imports import Imports
from .maintenance import Maintenance
from .passage_filler import PassageFiller
from .reads import Reads
from .search import SearchPipeline
from .tidy import Tidy, TidyOutcome, TidyPlan, TidyProposal
from .writes import Writes


class MemoryEngine(EngineBasis):
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
    ``reranker_timeout`` seconds (see :mod:`..reranking`); by default there are none. ``secrets``
    is what every write (store, update, import) does with a secret in its content, metadata, tags or
    thread (:class:`~..secret_scan.SecretPolicy`: ``redact`` by default, or ``refuse``, ``allow``).
    ``defer_passages`` (off by default; the server turns it on) lets ``store_memory`` and
    ``update_memory`` of a memory of several sentences answer once its whole text's vector is written,
    on a :class:`~..protocols.PassageBacklog` store, and embed its sentences in the background: at
    most ``passage_backlog`` memories wait for theirs, and the filler runs once callers' embeddings
    have been quiet for ``passage_fill_idle`` seconds (see :mod:`.passage_filler`).

    The engine is its :class:`~.basis.EngineBasis` (those settings, the store and the models) and
    the parts each call is handed to: ``chains``, ``writes``, ``imports``, ``reads``,
    ``search_pipeline``, ``maintenance``, ``tidy`` and ``passage_filler``.
    """

    def _build_parts(self) -> None:
        """The parts each call is handed to, over this engine's basis (its constructor is
        :class:`~.basis.EngineBasis`'s, which calls this last)."""
        self.chains = Chains(self)
        self.maintenance = Maintenance(self)
        self.passage_filler = PassageFiller(self)
        self.writes = Writes(self, self.chains, self.passage_filler)
        self.imports = Imports(self)
        self.reads = Reads(self, self.chains, self.maintenance)
        self.search_pipeline = SearchPipeline(self, self.chains, self.maintenance, self.passage_filler)
        self.tidy = Tidy(self, self.chains, self.reads)

    @property
    def rerankers(self) -> tuple[Reranker, ...]:
        """The rerankers every search runs, in order (fixed when the engine is built)."""
        return tuple(stage.reranker for stage in self.rerank_stages)

    # -- lifecycle and maintenance ---------------------------------------------------------------
    def warm(self) -> None:
        """Open the store and load the model, so the first real call is fast. A
        :class:`~..protocols.Warmable` store (the sqlite-vec store loads its vector cache) is warmed
        at the same time in a thread of its own: calls that reach the store before it is done wait
        there. A :class:`~..protocols.Refreshing` store catches up with what changed while the server
        was down. Heavy rerankers load here too, after the embedder (the server runs this in the
        background after the MCP handshake); one that fails to load is logged and skipped by every
        search. Sentences of long memories still waiting for their vectors (a crash, another
        process) are embedded in the background from here on."""
        self.maintenance.warm()
        self.passage_filler.resume()

    def open(self) -> None:
        if not self.opened:
            self.passage_filler.restart()
        super().open()

    def close(self) -> None:
        """Stop the passage filler (memories still waiting for their sentences' vectors keep their
        marks: the next warm-up finishes them) and close the store."""
        self.passage_filler.stop()
        super().close()

    def sweep(self) -> int:
        """Tombstone every memory past its type's lifetime (pinned ones never expire), dating the
        tombstone at the moment it expired. Returns how many were swept (``mcp-memory gc``)."""
        return self.maintenance.sweep()

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
        return self.maintenance.reindex(batch_size, progress)

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
        fields = {"type": type, "tags": tags, "importance": importance, "pinned": pinned}
        fields |= {"namespace": namespace, "privacy_scope": privacy_scope}
        return self.writes.store(content, metadata, fields, occurred_at, thread, self.scope_of(scope))

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
        scope = self.scope_of(scope)
        fields = {"type": type, "tags": tags, "importance": importance, "privacy_scope": privacy_scope}
        return self.writes.update(memory_id, content, metadata, fields, occurred_at, scope)

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
        return self.writes.delete(memory_id, hard, self.scope_of(scope))

    def restore_memory(self, memory_id: str, *, scope: Scope | None = None) -> Memory:
        """Undo a soft delete: clear the tombstone of a deleted memory, which is searchable and listed
        again as it was (a restored head is current again; a restored older version resolves to its
        head). Owner only; a memory outside the scope is missing. A memory that is not deleted, or
        one its type's lifetime tombstoned (it would expire again at once), cannot be restored: the
        error says what to do instead. A purged memory is gone for good."""
        return self.writes.restore(memory_id, self.scope_of(scope))

    def pin_memory(self, memory_id: str, pinned: bool = True, *, scope: Scope | None = None) -> Memory:
        """Pin (or unpin) the current version of a memory: pinned memories never expire. Owner only."""
        return self.writes.pin(memory_id, pinned, self.scope_of(scope))

    def clear_namespace(self, namespace: str, *, scope: Scope | None = None) -> int:
        """Purge every memory the principal owns in a namespace (all versions, tombstones included).
        Other users' memories in it are theirs, and stay. Returns the count."""
        return self.writes.clear_namespace(namespace, self.scope_of(scope))

    # -- tidying ----------------------------------------------------------------------------------
    def tidy_proposals(self, *, scope: Scope | None = None, namespace: str | None = None) -> TidyPlan:
        """What could be tidied among the memories this scope may change (its principal's own, never a
        pinned one) in ``namespace`` (default: the home namespaces; ``"*"``: every readable one), each
        with its reason: near-duplicate clusters, superseded leftovers, expired memories not yet
        swept, and junk (the rules: :mod:`.tidy`). Reads only; changes nothing."""
        return self.tidy.proposals(self.scope_of(scope), namespace)

    def apply_tidy(
        self,
        proposals: Iterable[TidyProposal],
        *,
        scope: Scope | None = None,
        namespace: str | None = None,
    ) -> TidyOutcome:
        """Apply proposals of :meth:`tidy_proposals` (same ``namespace``) that still hold: duplicates
        and leftovers become older versions of the memory kept (``history`` shows them, a search on
        their wording finds it), junk and expired memories are tombstoned (``restore`` undoes junk's).
        Nothing else is changed. A proposal whose memories changed since, or that is no longer
        proposed, is skipped; the outcome lists what was done, by id, and what was skipped and why."""
        return self.tidy.apply(proposals, self.scope_of(scope), namespace)

    # -- imports ---------------------------------------------------------------------------------
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

        A memory holding a NUL character (U+0000), or a secret under the secret policy ``refuse``, and
        every older version of one, is left out and listed in ``ImportOutcome.refused`` with why; under
        ``redact`` a memory's secrets are replaced by placeholders (and its given vectors not reused)
        and ``ImportOutcome.redacted`` says what was redacted where. Every other memory is checked before the first
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
        scope = self.scope_of(scope)
        return self.imports.import_memories(memories, batch_size, on_batch, scope, vectors)

    def check_import(self, memories: Sequence[Memory], *, scope: Scope | None = None) -> None:
        """Raise :class:`ImportRecordError` for the first memory ``import_memories`` would refuse,
        writing nothing: lets a caller report a bad file before it starts a progress bar."""
        scope = self.scope_of(scope)
        self.ready()
        self.imports.check(self.imports.screen(memories)[0], scope)

    # -- reads -----------------------------------------------------------------------------------
    def get_memory(self, memory_id: str, *, history: bool = False, scope: Scope | None = None) -> MemoryView:
        """The version asked for, as it is (never silently swapped), with the head of its chain and,
        with ``history``, the whole chain oldest first (the versions this scope may read)."""
        return self.reads.get(memory_id, history, self.scope_of(scope))

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
        order: str = "newest",
    ) -> Page:
        """Current memories (chain heads, no tombstones, nothing expired) matching ``filters``, newest
        first (``order``: ``oldest`` first, or by ``importance``, highest first; a cursor belongs to
        its order), in the scope's home namespaces by default; ``namespace="*"``: every readable one.

        A page also ends before its memories' sizes would pass ``page_limit`` (``capped`` then says
        so), each memory counted by ``measure``: by default its JSON bytes against
        ``limits.page_bytes``; a surface passes the size of its own serialized form and its own limit
        (the MCP server: its result token budget). It always holds at least one memory, so paging
        always moves on."""
        scope = self.scope_of(scope)
        return self.reads.page(limit, cursor, filters, namespace, scope, measure, page_limit, order)

    def count(self, namespace: str | None = None, *, scope: Scope | None = None) -> int:
        """Current memories this scope may read (home namespaces by default, ``"*"``: all readable)."""
        return self.reads.count(namespace, self.scope_of(scope))

    def tag_counts(self, namespace: str | None = None, *, scope: Scope | None = None) -> dict[str, int]:
        """How many current memories (chain heads, no tombstones, nothing expired) carry each tag,
        among those this scope may read: in its home namespaces by default, ``"*"``: every readable
        one. A store that counts tags (:class:`~..protocols.TagCounting`, the SQL stores) answers in
        one query; with any other the engine reads every such memory, a chunk at a time."""
        return self.reads.tag_counts(namespace, self.scope_of(scope))

    def list_namespaces(self, *, scope: Scope | None = None) -> dict[str, int]:
        """Every namespace holding memories this scope may read, with how many of them are current.
        Namespaces holding only other users' private memories are not shown."""
        return self.reads.namespaces(self.scope_of(scope))

    def iter_memories(
        self, namespace: str | None = ALL_NAMESPACES, *, scope: Scope | None = None
    ) -> Iterator[Memory]:
        """Every memory the principal owns (all versions, tombstones) in a namespace, or in every
        readable one with ``"*"`` (export: one's own memories; shared ones are their owners' to export)."""
        return self.reads.iter_memories(namespace, self.scope_of(scope))

    def memory_vectors(self, ids: Sequence[str], *, scope: Scope | None = None) -> StoredVectors:
        """The stored vectors of the memories among ``ids`` that ``iter_memories`` would give this
        scope (its principal's own): what an export with vectors carries. Raises InvalidInputError
        when the store cannot read its vectors back."""
        return self.reads.memory_vectors(ids, self.scope_of(scope))

    def stats(self, *, scope: Scope | None = None) -> dict[str, Any]:
        """Counts for the stats resource, of what this scope may read: per namespace, and by type in
        its default namespace."""
        return self.reads.stats(self.scope_of(scope))

    def chain_of(self, memory: Memory, *, scope: Scope | None = None) -> list[Memory]:
        """Every version of ``memory``'s chain this scope may read, oldest first, ending with its head."""
        return self.chains.chain_of(memory, self.scope_of(scope))

    def resolve_heads(self, memories: Sequence[Memory]) -> dict[str, Memory]:
        """Map each memory's id to the head of its chain (the memory itself if it is the head).

        Follows ``superseded_by`` in batches. A chain whose pointer leads to a missing row (a broken
        database) maps to the last memory reachable, and is logged.
        """
        return self.chains.resolve_heads(memories)

    # -- search ----------------------------------------------------------------------------------
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
        return self.search_pipeline.search(query, limit, filters, namespace, self.scope_of(scope))

    def recall(
        self,
        query: str,
        token_budget: int,
        namespace: str | None = None,
        filters: Filters = NO_FILTERS,
        *,
        scope: Scope | None = None,
    ) -> Recall:
        """The best memories for ``query`` packed into ``token_budget`` tokens, counted with the
        embedder's tokenizer when it is :class:`~..protocols.TokenCounting`."""
        return self.search_pipeline.recall(query, token_budget, namespace, filters, self.scope_of(scope))
