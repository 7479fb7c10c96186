"""Maintenance of the whole store: warming up, the lifetime sweep, and re-embedding in place.
None of it reads or returns a memory to anyone, so none of it takes a Scope."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from .. import secret_scan
from ..errors import InvalidInputError, StorageError
from ..models import MemoryFilter, ReindexOutcome
from ..protocols import InPlaceReembedding, Refreshing, Warmable
from .basis import PURGE_BATCH, EngineBasis

log = logging.getLogger(__name__)

SWEEP_INTERVAL_SECONDS = 60.0


class Maintenance:
    """``warm``, ``sweep`` and ``reindex``; the facade documents each call."""

    def __init__(self, basis: EngineBasis) -> None:
        self._basis = basis
        self._last_sweep: datetime | None = None

    def warm(self) -> None:
        basis = self._basis
        basis.open()
        store = basis.store
        if isinstance(store, Warmable):
            threading.Thread(
                target=_warm_quietly, args=(store.warm,), name="mcp-memory-store-warm", daemon=True
            ).start()
        basis.embedder.load()
        if basis.secrets.mode != "allow":
            secret_scan.warm()  # the detector's import (~250 ms), before the first write needs it
        if isinstance(store, Refreshing):
            try:
                basis.refresh()  # what changed while the server was down, before the first call
            except Exception as exc:  # the first call retries it and reports the error
                log.warning("Catching up with the store failed: %s", exc)
        for stage in basis.rerank_stages:
            if stage.heavy:
                stage.load()

    def sweep(self) -> int:
        basis = self._basis
        basis.ready()
        now = basis.clock()
        swept = 0
        for memory_type, lifetime in basis.ttl.expiring_types().items():
            where = MemoryFilter(
                namespace=None,
                types=frozenset({memory_type}),
                created_before=now - lifetime,
                pinned=False,
                include_superseded=True,
            )
            while True:
                with basis.store.transaction():
                    batch = basis.store.list(where, PURGE_BATCH)
                    for memory in batch:
                        expired_at = basis.ttl.expires_at(memory) or now
                        basis.store.update_fields(memory.id, {"deleted_at": expired_at, "updated_at": now})
                swept += len(batch)
                if len(batch) < PURGE_BATCH:
                    break
        if swept:
            log.info("Swept %d expired memories", swept)
        self._last_sweep = now
        return swept

    def sweep_if_due(self) -> None:
        """Sweep at most once a minute (searches call this); a read-only store skips it."""
        now = self._basis.clock()
        if self._last_sweep is None or (now - self._last_sweep).total_seconds() >= SWEEP_INTERVAL_SECONDS:
            try:
                self.sweep()
            except StorageError as exc:  # a read-only database: reads go on, expired memories stay
                log.warning("TTL sweep skipped: %s", exc)
                self._last_sweep = now

    def reindex(self, batch_size: int, progress: Callable[[int, int], None] | None) -> ReindexOutcome:
        basis = self._basis
        store = basis.store
        if not store.capabilities.reembed or not isinstance(store, InPlaceReembedding):
            raise InvalidInputError(
                f"The store {store.location} cannot re-embed its memories in place: export them "
                "(`mcp-memory export --all-namespaces`) with the old embedder and import them into an "
                "empty store with the new one."
            )
        if basis.opened:
            basis.close()
        model_id, dimensions = basis.embedder.model_id, basis.embedder.dimensions
        previous = store.reembed_open(model_id, dimensions)
        basis.mark_opened()
        if previous is None:
            return ReindexOutcome(previous=None, embedded=0, model_id=model_id)
        basis.embedder.load()
        done, total = store.reembed_progress()
        if progress is not None:
            progress(done, total)
        embedded = 0
        while batch := store.reembed_pending(batch_size):
            vectors, owners = basis.embed([memory.content for memory in batch])
            store.reembed_put(batch, vectors, owners)
            embedded += len(batch)
            done = min(done + len(batch), total)
            if progress is not None:
                progress(done, max(total, done))
        late = store.reembed_finish(lambda memories: basis.embed([m.content for m in memories]))
        embedded += late
        if progress is not None:
            progress(done + late, max(total, done + late))
        return ReindexOutcome(previous=previous[0], embedded=embedded, model_id=model_id)


def _warm_quietly(store_warm: Callable[[], object]) -> None:
    """Run a store's warm-up; a failure is logged, and the first call that needs it retries."""
    try:
        store_warm()
    except Exception:
        log.exception("store warm-up failed; the first search will load what it needs")
