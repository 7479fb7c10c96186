"""What every part of the engine shares: the store, the embedder, the settings of the engine, and
the only place the engine consults the Scope (``scope``, ``readable``, ``owned``, ``read_filter``).

A memory outside the scope is reported exactly like a missing one. A call without a scope runs in
the engine's ``default_scope`` (the local user, who owns the file); an engine built with
``require_scope=True`` (the HTTP server) refuses such a call instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..embedding_batches import EmbeddingBatcher
from ..errors import InvalidInputError, MemoryNotFoundError, NotOwnerError
from ..lifecycle import TTLPolicy
from ..models import (
    DEDUP_THRESHOLD,
    DEFAULT_NAMESPACE,
    DUPLICATE_THRESHOLD,
    LOCAL_USER,
    Memory,
    MemoryFilter,
    utcnow,
)
from ..passages import DEFAULT_FILL_IDLE_SECONDS, DEFAULT_PASSAGE_BACKLOG, split_passages
from ..protocols import Embedder, Ranker, Refreshing, Reranker, Store, Vector
from ..relevance import RelevanceFloor
from ..reranking import RerankStage
from ..scope import Scope
from ..secret_scan import SecretPolicy
from ..validation import DEFAULT_LIMITS, Limits, validate_namespace

PURGE_BATCH = 500  # memories one transaction tombstones or purges


class EngineBasis:
    """The services and settings of one engine, shared by its parts (see :class:`.facade.MemoryEngine`
    for what each setting means). Settings are read at each call, so changing one (a test turning the
    relevance floor off) takes effect at once in every part."""

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
        secrets: SecretPolicy | None = None,
        defer_passages: bool = False,
        passage_backlog: int = DEFAULT_PASSAGE_BACKLOG,
        passage_fill_idle: float = DEFAULT_FILL_IDLE_SECONDS,
    ) -> None:
        if conflict_policy not in ("report", "supersede"):
            raise InvalidInputError(
                f"conflict policy must be 'report' or 'supersede'; got {conflict_policy!r}."
            )
        if passage_backlog < 0 or passage_fill_idle < 0:
            raise InvalidInputError("the passage backlog and the filler's idle time cannot be negative.")
        self.store = store
        self.embedder = embedder
        # Requests' texts (a store's passages, a search's query) arriving together share one call.
        self.embeddings = EmbeddingBatcher(embedder)
        self.ranker = ranker
        home = validate_namespace(namespace)
        self.default_scope = default_scope or Scope.for_user(LOCAL_USER, project=home)
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
        self.rerank_stages = _stages(rerankers, reranker_timeout)
        self.secrets = secrets if secrets is not None else SecretPolicy()
        self.defer_passages = defer_passages
        self.passage_backlog = passage_backlog
        self.passage_fill_idle = passage_fill_idle
        self._opened = False
        # Checked once: every call asks, and an isinstance check on a protocol costs tens of µs.
        self._refreshing = isinstance(store, Refreshing)
        self._build_parts()

    def _build_parts(self) -> None:
        """Build what works over these services (the facade's parts); the basis alone has none."""

    # -- the store's lifecycle -------------------------------------------------------------------
    def open(self) -> None:
        """Bind the store to the embedder's model (cheap: the model itself is not loaded)."""
        if not self._opened:
            self.store.open(self.embedder.model_id, self.embedder.dimensions)
            self._opened = True

    def close(self) -> None:
        self.store.close()
        self._opened = False

    @property
    def opened(self) -> bool:
        return self._opened

    def mark_opened(self) -> None:
        """The store was opened by other means (re-embedding opens it on the new model)."""
        self._opened = True

    def ready(self) -> None:
        """Open the store; a store whose truth lives outside it (a markdown vault edited by hand)
        catches up with it first (see :meth:`refresh`)."""
        self.open()
        if self._refreshing:
            self.refresh()

    def refresh(self, progress: Callable[[int, int], None] | None = None) -> Any:
        """Let a :class:`~..protocols.Refreshing` store catch up with changes made outside it: it
        embeds what changed with this engine's embedder and passage split. Every engine call does this
        first; ``mcp-memory reindex`` calls it with a progress bar. Returns the store's report (None
        for a store that does not refresh)."""
        self.open()
        if not isinstance(self.store, Refreshing):
            return None
        return self.store.refresh(self.embed, progress)

    # -- who is asking (the only place the engine consults the Scope) ------------------------------
    def scope_of(self, scope: Scope | None) -> Scope:
        """The scope of a call: the one given, or the default scope when this engine has one."""
        if scope is not None:
            return scope
        if self.require_scope:
            raise RuntimeError("this engine serves several users: every call needs a Scope")
        return self.default_scope

    def readable(self, memory_id: str, scope: Scope) -> Memory:
        """The memory, if this scope may read it; otherwise exactly the error of a missing id."""
        found = self.store.get([memory_id]).get(memory_id)
        if found is None or not scope.can_read(found):
            raise MemoryNotFoundError(memory_id)
        return found

    def owned(self, memory_id: str, scope: Scope, action: str) -> Memory:
        """The memory, if this scope may change it (its owner); readable but not owned: NotOwnerError."""
        memory = self.readable(memory_id, scope)
        if not scope.can_change(memory):
            raise NotOwnerError(memory_id, action)
        return memory

    def read_filter(self, scope: Scope, namespace: str | None, **fields: Any) -> MemoryFilter:
        """The store filter of a read: the namespaces it covers and what the scope may see."""
        return scope.reading(scope.read_namespaces(namespace), **fields)

    @staticmethod
    def scoped(where: MemoryFilter, scope: Scope, namespaces: frozenset[str] | None) -> MemoryFilter:
        """A user filter narrowed to what ``scope`` may read in ``namespaces``."""
        bounds = scope.reading(namespaces)
        return dataclasses.replace(
            where, namespace=None, namespaces=bounds.namespaces, visible_to=bounds.visible_to
        )

    # -- vectors ---------------------------------------------------------------------------------
    def embed(self, contents: Sequence[str]) -> tuple[Vector, list[int] | None]:
        """Vectors for each content's passages, and the owner index of every row (None: one row each),
        in one call of the embedder's own (bulk work: imports, re-embedding)."""
        return _passage_vectors(contents, self.embedder.embed_documents)

    def embed_shared(self, contents: Sequence[str]) -> tuple[Vector, list[int] | None]:
        """The same, through the batcher: a request's texts share one call with the texts of requests
        that arrive while another call runs (see :mod:`..embedding_batches`)."""
        return _passage_vectors(contents, self.embeddings.embed_documents)


def _passage_vectors(
    contents: Sequence[str], embed: Callable[[Sequence[str]], Vector]
) -> tuple[Vector, list[int] | None]:
    """Every content's passages (its whole text first) embedded in ONE call of ``embed``."""
    passages = [split_passages(content) for content in contents]
    if all(len(p) == 1 for p in passages):
        return embed(list(contents)), None
    owners = [index for index, texts in enumerate(passages) for _ in texts]
    return embed([t for texts in passages for t in texts]), owners


def _stages(rerankers: Iterable[Reranker], timeout: float) -> list[RerankStage]:
    """One stage per reranker; the same reranker twice is a configuration error."""
    stages = [RerankStage(reranker, timeout) for reranker in rerankers]
    twice = sorted({s.name for s in stages if [t.name for t in stages].count(s.name) > 1})
    if twice:
        raise InvalidInputError(f"the reranker {', '.join(map(repr, twice))} is configured more than once.")
    return stages
