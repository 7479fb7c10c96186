"""How SqliteVecStore keeps its in-process vector cache (``vector_cache.py``) in step with the file.

SQLite stays the source of truth. Every commit, this process's and other processes', reaches the
cache through ``cache_log`` (rows written by triggers): before a KNN the cache connection's ``PRAGMA
data_version`` and ``total_changes`` say whether anything committed since the cache last looked; if
so the cache replays the log (drops the rows of every memory logged since, reads their current rows)
or reloads when the log was pruned past it, names too many memories, or the cache outgrew its mode.
A KNN inside a transaction that has written never uses the cache (only SQL sees uncommitted writes).

A mixin: the store owns the connections and locks; this module owns the cache's life.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from mcp_memory_core.models import MemoryFilter, MemoryType
from mcp_memory_core.protocols import Vector
from mcp_memory_core.row_codec import to_micros

from .schema import TYPE_CASE, TYPE_CODES
from .sql_filters import needs_rows, where_sql
from .vector_cache import CacheFilter, CacheMode, VectorCache, choose_mode, estimate_bytes

log = logging.getLogger("mcp_memory_sqlite_vec")

# Rows per fetchmany while loading the cache. Small batches keep the transient blobs small: at 100k
# rows, 20 000-row batches left the process 61 MB larger after the load (freed heap the allocator
# keeps) than 500-row batches, which also load faster (0.58 vs 0.98 s).
_LOAD_BATCH = 500
# Replaying more changed memories than this fraction of the cache's rows reloads it instead.
REPLAY_MAX_FRACTION = 0.1
_MODE_LABELS: dict[CacheMode, str] = {
    "float32": "exact float32",
    "int8": "int8 pass + exact rerank",
    "bits": "sign-bit pass + exact rerank",
}


class VectorCacheSync:
    """The vector cache part of :class:`~.store.SqliteVecStore` (see the module docstring)."""

    _path: str | Path
    _dims: int | None
    _conn: Any
    _lock: threading.RLock
    _cache_lock: threading.RLock
    _cache_enabled: bool
    _cache_max_bytes: int
    _coarse_threshold: int
    _exact_threshold: int
    _cache: VectorCache | None
    _cache_stamp: tuple[int, int] | None
    _cache_log_id: int
    _cache_refused_at: int | None
    _cache_conn: Any

    if TYPE_CHECKING:  # provided by the store

        def _db(self) -> Any: ...
        def _read_connection(self, *, mmap: bool) -> Any: ...
        def _wrote_in_transaction(self) -> bool: ...
        def _namespace_ids(
            self, conn: Any, where: MemoryFilter
        ) -> int | tuple[int, ...] | Literal[False] | None: ...

    def _cache_db(self) -> Any:
        """The vector cache's connection (call under ``_cache_lock``): its own, without mmap (reading
        every vector through a 1 GB map would keep the passages table resident in this process); the
        writer's on an in-memory database (callers hold ``_lock`` there)."""
        if not isinstance(self._path, Path):
            return self._db()
        if self._cache_conn is None:
            self._db()
            self._cache_conn = self._read_connection(mmap=False)
            self._cache_conn.execute("PRAGMA cache_size=-2000")
        return self._cache_conn

    def _drop_cache(self) -> None:
        self._cache, self._cache_stamp = None, None

    def warm(self) -> None:
        """Load the vector cache now, so the first search does not pay for it (the engine runs this in
        the background after ``open``; nothing to do when the cache is off, current or over its cap)."""
        with contextlib.ExitStack() as held:
            if not isinstance(self._path, Path):
                held.enter_context(self._lock)  # one connection: the writer's lock comes first
            held.enter_context(self._cache_lock)
            if self._conn is not None:
                self._current_cache()

    @property
    def vector_cache(self) -> VectorCache | None:
        """The loaded vector cache (None when disabled, not yet loaded or refused by the size cap)."""
        return self._cache

    def _current_cache(self) -> VectorCache | None:
        """The vector cache, caught up with every commit since it was built (call under ``_cache_lock``).

        Every commit, this process's own included, reaches the cache through ``cache_log``: the cache
        connection's ``data_version`` moves when another connection commits, and its ``total_changes``
        when it is the writer itself (an in-memory database), so an unchanged stamp costs no query."""
        if not self._cache_enabled or self._wrote_in_transaction():
            return None  # only SQL sees this transaction's uncommitted writes
        conn = self._cache_db()
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        stamp = (int(version), int(conn.total_changes))
        if self._cache is not None and stamp == self._cache_stamp:
            return self._cache
        if self._cache is not None and self._replay_log(conn, self._cache):
            self._cache_stamp = stamp
            return self._cache
        self._drop_cache()
        (top,) = conn.execute("SELECT max(vrow) FROM passages").fetchone()
        rows = int(top or 0)
        mode = self._cache_mode(rows)
        if estimate_bytes(rows, int(self._dims or 0), mode) > self._cache_max_bytes:
            if self._cache_refused_at is None:
                log.info(
                    "vector cache skipped: %d vectors exceed the %d MB cap; vec0 answers KNN",
                    rows,
                    self._cache_max_bytes >> 20,
                )
            self._cache_refused_at = rows
            return None
        started = time.perf_counter()
        self._cache = self._load_cache(conn, mode)
        self._cache_stamp = stamp
        log.info(
            "vector cache loaded: %d vectors (%s, %.0f MB) in %.2f s",
            self._cache.rows,
            _MODE_LABELS[self._cache.mode],
            self._cache.nbytes / 2**20,
            time.perf_counter() - started,
        )
        return self._cache

    def _replay_log(self, conn: Any, cache: VectorCache) -> bool:
        """Catch the cache up with other connections' commits from ``cache_log``: drop the rows of every
        memory logged since ``_cache_log_id`` and read their current rows. False when a reload is
        needed instead (the log was pruned past the cache, or names too many memories, or the cache
        outgrew its mode); the cache is then left for the caller to drop."""
        low, high = conn.execute("SELECT min(id), max(id) FROM cache_log").fetchone()
        since = self._cache_log_id
        high = int(high or 0)
        if high == since:
            return True  # nothing the cache holds changed (access statistics, tags, content …)
        if high < since or low is None or int(low) > since + 1:
            return False
        seqs = [
            int(r[0])
            for r in conn.execute(
                "SELECT DISTINCT seq FROM cache_log WHERE id > ? AND id <= ?", (since, high)
            )
        ]
        if len(seqs) > max(1024, int(cache.rows * REPLAY_MAX_FRACTION)):
            return False
        try:
            cache.remove(seqs)
            self._read_rows(
                conn, cache, "WHERE p.seq IN (SELECT value FROM json_each(?))", (json.dumps(seqs),)
            )
        except Exception:  # never serve a half-updated cache
            log.exception("vector cache replay failed; it will be reloaded from SQLite")
            return False
        self._cache_log_id = high
        if self._outgrown(cache):
            return False
        log.debug("vector cache caught up with %d changed memories from cache_log", len(seqs))
        return True

    def _outgrown(self, cache: VectorCache) -> bool:
        """The cache has grown a quarter past its mode's limit: time to reload it in the next mode."""
        limit = {"float32": self._exact_threshold, "int8": self._coarse_threshold}.get(cache.mode)
        return limit is not None and cache.rows > limit * 5 // 4

    def _cache_mode(self, rows: int) -> CacheMode:
        return choose_mode(rows, self._exact_threshold, self._coarse_threshold)

    def _load_cache(self, conn: Any, mode: CacheMode) -> VectorCache:
        dims = int(self._dims or 0)
        cache = VectorCache(dims, mode=mode, fetch=self._fetch_vectors)
        (rows,) = conn.execute("SELECT count(*) FROM passages").fetchone()
        cache.reserve(int(rows) + 1024)
        try:
            conn.execute("BEGIN")  # one snapshot for the mean and the rows
            if mode != "float32":  # sign bits (the bits mode, and the int8 mode's prefilter)
                cache.set_mean(self._mean_vector(conn, dims))
            (log_id,) = conn.execute("SELECT coalesce(max(id), 0) FROM cache_log").fetchone()
            self._read_rows(conn, cache, "", ())
            conn.execute("COMMIT")
            self._cache_log_id = int(log_id)
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        return cache

    @staticmethod
    def _read_rows(reader: Any, cache: VectorCache, where: str, params: Sequence[Any]) -> None:
        """Append the passage rows selected by ``where`` (on ``passages p``), with their memories'
        filter columns, to ``cache``, in vrow order and batches of ``_LOAD_BATCH``."""
        # CROSS JOIN keeps passages the outer loop: rows come in vrow order with no sort (a plain JOIN
        # let the planner start from namespaces and sort 100k rows in a temporary B-tree: 0.47 s
        # instead of 0.21 s at 100k).
        cursor = reader.execute(
            "SELECT p.vrow, p.seq, p.embedding, "
            "coalesce((SELECT n.id FROM namespaces n WHERE n.name = m.namespace), -1), "
            "m.deleted_at IS NOT NULL, "
            f"m.superseded_by IS NOT NULL, {TYPE_CASE.format(col='m.type')}, m.created_at "
            f"FROM passages p CROSS JOIN memories m ON m.seq = p.seq {where} ORDER BY p.vrow",
            params,
        )
        while True:
            batch = cursor.fetchmany(_LOAD_BATCH)
            if not batch:
                break
            cols = list(zip(*batch, strict=True))
            vectors = np.frombuffer(b"".join(cols[2]), dtype=np.float32).reshape(len(batch), cache.dims)
            cache.append(cols[0], cols[1], vectors, cols[3], cols[4], cols[5], cols[6], cols[7])

    @staticmethod
    def _mean_vector(reader: Any, dims: int) -> Any:
        """The mean of (up to) 20 000 evenly spread unit vectors: the centre of the sign bits. Summed in
        batches of ``_LOAD_BATCH``: holding the whole sample at once left ~30 MB of freed blobs resident."""
        (count,) = reader.execute("SELECT count(*) FROM passages").fetchone()
        step = max(1, int(count) // 20_000)
        cursor = reader.execute("SELECT embedding FROM passages WHERE vrow % ? = 0", (step,))
        total = np.zeros(dims, dtype=np.float64)
        seen = 0
        while batch := cursor.fetchmany(_LOAD_BATCH):
            sample = np.frombuffer(b"".join(r[0] for r in batch), dtype=np.float32).reshape(len(batch), dims)
            norms = np.maximum(np.linalg.norm(sample, axis=1, keepdims=True), np.float32(1e-30))
            total += (sample / norms).sum(axis=0)
            seen += len(batch)
        return (total / max(seen, 1)).astype(np.float32)

    def _fetch_vectors(self, vrows: Sequence[int]) -> Any:
        """The float32 copies of vector rows ``vrows`` (in that order; zeros for rows gone)."""
        dims = int(self._dims or 0)
        out = np.zeros((len(vrows), dims), dtype=np.float32)
        wanted = np.asarray(vrows, dtype=np.int64)
        order = np.argsort(wanted, kind="stable")
        rows = (
            self._cache_db()
            .execute(
                "SELECT vrow, embedding FROM passages WHERE vrow IN (SELECT value FROM json_each(?)) ORDER BY vrow",
                (json.dumps(list(map(int, vrows))),),
            )
            .fetchall()
        )
        if rows:
            got = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            pos = order[np.searchsorted(wanted[order], got)]
            out[pos] = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dims)
        return out

    def _cache_knn(
        self, conn: Any, query: Vector, k: int, where: MemoryFilter
    ) -> list[tuple[str, float]] | None:
        """KNN through the vector cache; None when it cannot answer (off, over its cap, or after this
        thread's transaction wrote). The filter is resolved on ``conn`` first, so the cache's lock is
        only held while the cache catches up and scans."""
        if not self._cache_enabled or self._wrote_in_transaction():
            return None
        flt = self._cache_filter(conn, where)
        with self._cache_lock:
            cache = self._current_cache()
            if cache is None:
                return None
            if flt is None:
                return []
            hits = cache.search(query, k, flt)
        if not hits:
            return []
        ids = dict(
            conn.execute(
                "SELECT seq, id FROM memories WHERE seq IN (SELECT value FROM json_each(?))",
                (json.dumps([s for s, _ in hits]),),
            ).fetchall()
        )
        pairs = [(str(ids[s]), sim) for s, sim in hits if s in ids]
        pairs.sort(key=lambda p: (-p[1], p[0]))
        return pairs

    def _cache_filter(self, conn: Any, where: MemoryFilter) -> CacheFilter | None:
        """``where`` as the vector cache's filter; None when nothing can match."""
        ns = self._namespace_ids(conn, where)
        if ns is False:
            return None
        seqs = None
        if needs_rows(where):
            clause, row_params = where_sql(where, alias="m")
            seqs = np.fromiter(
                (r[0] for r in conn.execute(f"SELECT m.seq FROM memories m WHERE {clause}", row_params)),
                dtype=np.int64,
            )
            if len(seqs) == 0:
                return None
        return CacheFilter(
            ns=ns,
            include_deleted=where.include_deleted,
            include_superseded=where.include_superseded,
            types=None
            if where.types is None
            else tuple(sorted(TYPE_CODES[MemoryType(t)] for t in where.types)),
            created_min=None if where.created_after is None else to_micros(where.created_after),
            created_max=None if where.created_before is None else to_micros(where.created_before),
            seqs=seqs,
        )
