"""An in-process copy of every passage vector, for KNN without a vec0 scan.

SQLite stays the single source of truth: the cache is loaded from ``passages JOIN memories`` on the
first KNN, follows this process's own committed writes (the store applies them after COMMIT and drops
the cache on doubt), and is reloaded when ``PRAGMA data_version`` says another connection committed.

Two modes, chosen at load time by the number of vector rows:

exact (rows <= ``coarse_threshold``)
    a float32 matrix of unit rows; a query is one ``matrix @ q`` (BLAS), a mask for the filters the
    per-row arrays can express, ``argpartition`` and a dedupe to distinct memories. Exact.
coarse (more rows)
    no float32 matrix in memory (1M x 384 would be 1.5 GB): sign bits of each mean-centred vector
    (48 bytes per 384-d row), Hamming distance with ``np.bitwise_count``, the ``candidates`` nearest
    rows are reranked exactly with their float32 copies read from SQLite (``fetch``). Approximate:
    recall@10 measured against exact search in ``tests/bench/test_search_bench.py``.

Per-row arrays (one entry per vector row): vrow, owning memory seq, namespace id, deleted,
superseded, type code, created micros, live (False once purged). Lifecycle flags are per memory
and copied to each of its rows, as in the vec0 table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]
BoolArr = npt.NDArray[np.bool_]

# Above this many vector rows the cache switches to the binary coarse pass + exact rerank.
COARSE_THRESHOLD = 200_000
# Rows reranked exactly after the coarse pass (grown ×4 when they hold fewer than k memories). On the
# synthetic 1M set (tests/bench/synthetic.py) recall@10 was 0.83 at 1 000, 0.997 at 4 000, 1.0 at 10 000.
COARSE_CANDIDATES = 4_000


@dataclass(frozen=True)
class RowFlags:
    """The filterable columns of one memory: namespace id, deleted, superseded, type code, created."""

    ns: int
    deleted: int
    superseded: int
    type: int
    created: int


@dataclass(frozen=True)
class CacheFilter:
    """The part of a MemoryFilter the per-row arrays express, plus an optional allowed-seq set."""

    ns: int | None = None
    include_deleted: bool = False
    include_superseded: bool = True
    types: tuple[int, ...] | None = None
    created_min: int | None = None  # inclusive
    created_max: int | None = None  # exclusive
    seqs: I64 | None = None  # allowed memory seqs (resolved in SQL), None = all


def estimate_bytes(rows: int, dims: int, coarse_threshold: int = COARSE_THRESHOLD) -> int:
    per_row = 8 + 8 + 4 + 1 + 1 + 1 + 8 + 1
    if rows > coarse_threshold:
        return rows * (per_row + (dims + 63) // 64 * 8)
    return rows * (per_row + dims * 4)


class VectorCache:
    """See the module docstring. Not thread-safe: the store calls it under its lock."""

    def __init__(
        self,
        dims: int,
        *,
        coarse: bool,
        fetch: Callable[[Sequence[int]], F32] | None = None,
        candidates: int = COARSE_CANDIDATES,
    ) -> None:
        self.dims = dims
        self.coarse = coarse
        self.fetch = fetch
        self.candidates = candidates
        self.n = 0
        cap = 1024
        self.vrow: I64 = np.zeros(cap, dtype=np.int64)
        self.seq: I64 = np.zeros(cap, dtype=np.int64)
        self.ns = np.zeros(cap, dtype=np.int32)
        self.deleted = np.zeros(cap, dtype=np.bool_)
        self.superseded = np.zeros(cap, dtype=np.bool_)
        self.type = np.zeros(cap, dtype=np.int8)
        self.created: I64 = np.zeros(cap, dtype=np.int64)
        self.live = np.zeros(cap, dtype=np.bool_)
        self.words = (dims + 63) // 64
        self.matrix: F32 = np.zeros((0 if coarse else cap, dims), dtype=np.float32)
        # column-major (words, rows): one contiguous pass per 64-bit word is 3x faster than row-major
        self.codes = np.zeros((self.words, cap if coarse else 0), dtype=np.uint64)
        self.mean: F32 = np.zeros(dims, dtype=np.float32)
        self.dead = 0

    # -- building ---------------------------------------------------------------------------------
    def set_mean(self, mean: F32) -> None:
        """The centre the sign bits are taken around (coarse mode); set before the first append."""
        self.mean = np.asarray(mean, dtype=np.float32).reshape(self.dims)

    def reserve(self, rows: int) -> None:
        """Size the arrays for ``rows`` rows at once (a load knows its count: no doubling slack)."""
        self._grow(rows, exact=True)

    def _grow(self, need: int, *, exact: bool = False) -> None:
        cap = self.vrow.shape[0]
        if need <= cap:
            return
        new = need if exact else max(need, cap + cap // 4)

        def grown(a: Any) -> Any:
            out = np.zeros((new, *a.shape[1:]), dtype=a.dtype)
            out[: self.n] = a[: self.n]
            return out

        self.vrow, self.seq, self.ns = grown(self.vrow), grown(self.seq), grown(self.ns)
        self.deleted, self.superseded = grown(self.deleted), grown(self.superseded)
        self.type, self.created, self.live = grown(self.type), grown(self.created), grown(self.live)
        if self.coarse:
            codes = np.zeros((self.words, new), dtype=np.uint64)
            codes[:, : self.n] = self.codes[:, : self.n]
            self.codes = codes
        else:
            self.matrix = grown(self.matrix)

    def _encode(self, unit: F32) -> npt.NDArray[np.uint64]:
        bits = np.packbits(unit > self.mean, axis=1)  # (n, dims/8) uint8, zero padded
        pad = self.words * 8 - bits.shape[1]
        if pad:
            bits = np.pad(bits, ((0, 0), (0, pad)))
        return np.ascontiguousarray(bits).view(np.uint64)

    def append(
        self,
        vrows: Sequence[int] | I64,
        seqs: Sequence[int] | I64,
        vectors: F32,
        ns: Any,
        deleted: Any,
        superseded: Any,
        types: Any,
        created: Any,
    ) -> None:
        """Add vector rows (vectors need not be normalized); flag arguments are per row."""
        count = len(vrows)
        if count == 0:
            return
        self._grow(self.n + count)
        s = slice(self.n, self.n + count)
        self.vrow[s], self.seq[s], self.ns[s] = vrows, seqs, ns
        self.deleted[s], self.superseded[s] = deleted, superseded
        self.type[s], self.created[s], self.live[s] = types, created, True
        unit = _normalize(np.asarray(vectors, dtype=np.float32).reshape(count, self.dims))
        if self.coarse:
            self.codes[:, s] = self._encode(unit).T
        else:
            self.matrix[s] = unit
        self.n += count

    def set_flags(self, seq: int, flags: RowFlags) -> None:
        rows = np.flatnonzero(self.seq[: self.n] == seq)
        self.ns[rows], self.deleted[rows], self.superseded[rows] = flags.ns, flags.deleted, flags.superseded
        self.type[rows], self.created[rows] = flags.type, flags.created

    def remove(self, seqs: Sequence[int]) -> None:
        rows = np.flatnonzero(
            np.isin(self.seq[: self.n], np.asarray(seqs, dtype=np.int64)) & self.live[: self.n]
        )
        self.live[rows] = False
        self.dead += len(rows)
        if self.dead > 1024 and self.dead * 4 > self.n:
            self._compact()

    def _compact(self) -> None:
        keep = np.flatnonzero(self.live[: self.n])
        for name in ("vrow", "seq", "ns", "deleted", "superseded", "type", "created", "live"):
            a = getattr(self, name)
            a[: len(keep)] = a[keep]
        if self.coarse:
            self.codes[:, : len(keep)] = self.codes[:, keep]
        else:
            self.matrix[: len(keep)] = self.matrix[keep]
        self.n, self.dead = len(keep), 0

    @property
    def rows(self) -> int:
        return self.n - self.dead

    @property
    def nbytes(self) -> int:
        arrays = (self.vrow, self.seq, self.ns, self.deleted, self.superseded, self.type, self.created)
        return int(sum(a.nbytes for a in arrays) + self.live.nbytes + self.matrix.nbytes + self.codes.nbytes)

    # -- search -----------------------------------------------------------------------------------
    def mask(self, f: CacheFilter) -> BoolArr | None:
        """Rows matching ``f`` (None = every row)."""
        n = self.n
        mask: BoolArr | None = None if self.dead == 0 else self.live[:n].copy()

        def both(m: BoolArr | None, cond: BoolArr) -> BoolArr:
            if m is None:
                return cond
            m &= cond
            return m

        if f.ns is not None:
            mask = both(mask, self.ns[:n] == f.ns)
        if not f.include_deleted:
            mask = both(mask, ~self.deleted[:n])
        if not f.include_superseded:
            mask = both(mask, ~self.superseded[:n])
        if f.types is not None:
            mask = both(mask, np.isin(self.type[:n], np.asarray(f.types, dtype=np.int8)))
        if f.created_min is not None:
            mask = both(mask, self.created[:n] >= f.created_min)
        if f.created_max is not None:
            mask = both(mask, self.created[:n] < f.created_max)
        if f.seqs is not None:
            mask = both(mask, np.isin(self.seq[:n], f.seqs))
        return mask

    def search(self, query: F32, k: int, f: CacheFilter) -> list[tuple[int, float]]:
        """Up to ``k`` (memory seq, cosine similarity) of distinct memories, best first."""
        if k <= 0 or self.n == 0:
            return []
        q = _normalize(np.asarray(query, dtype=np.float32).reshape(1, self.dims))[0]
        mask = self.mask(f)
        if mask is None:
            rows = None
            count = self.n
        else:
            rows = np.flatnonzero(mask)
            count = len(rows)
            if count == 0:
                return []
        if self.coarse and count > self.candidates:
            return self._search_coarse(q, k, mask, rows, count)
        if self.coarse:
            idx = np.arange(self.n, dtype=np.int64) if rows is None else rows
            return self._distinct(self._fetch_sims(idx, q), idx, k)
        if rows is None:
            sims: F32 = self.matrix[: self.n] @ q
            idx_all = None
        elif count * 3 < self.n:  # few rows: gather them (copies count rows, skips the rest)
            sims = self.matrix[rows] @ q
            idx_all = rows
        else:
            sims = self.matrix[: self.n] @ q
            sims[~mask] = -np.inf  # type: ignore[operator]
            idx_all = None
        return self._top_distinct(sims, idx_all, k, count)

    def _top_distinct(self, sims: F32, idx: I64 | None, k: int, count: int) -> list[tuple[int, float]]:
        """Top ``k`` distinct memories from row similarities ``sims`` (of rows ``idx``, or of every
        row when None; ``count`` finite entries). Rows beyond the first ``m`` best are all no better
        than the m-th, so once the best m rows hold k memories those are the answer."""
        m = min(count, max(2 * k, k + 16))
        while True:
            part = np.argpartition(-sims, m - 1)[:m] if m < len(sims) else np.arange(len(sims))
            part = part[np.argsort(-sims[part], kind="stable")]
            rows = part if idx is None else idx[part]
            seqs = self.seq[rows]
            _, first = np.unique(seqs, return_index=True)
            if len(first) >= k or m >= count:
                first.sort()
                return [(int(seqs[i]), float(sims[part[i]])) for i in first[:k]]
            m = min(count, m * 4)

    def _fetch_sims(self, rows: I64, q: F32) -> F32:
        assert self.fetch is not None
        vectors = _normalize(self.fetch(self.vrow[rows].tolist()))
        sims: F32 = vectors @ q
        return sims

    def _distinct(self, sims: F32, rows: I64, k: int) -> list[tuple[int, float]]:
        return self._top_distinct(sims, rows, k, len(rows))

    def _search_coarse(
        self, q: F32, k: int, mask: BoolArr | None, rows: I64 | None, count: int
    ) -> list[tuple[int, float]]:
        qcode = self._encode(q.reshape(1, -1))[0]
        gather = rows is not None and count * 3 < self.n
        codes = self.codes[:, rows] if gather else self.codes[:, : self.n]
        dist = np.bitwise_count(codes[0] ^ qcode[0]).astype(np.uint16)
        for w in range(1, self.words):
            dist += np.bitwise_count(codes[w] ^ qcode[w])
        if mask is not None and not gather:
            dist[~mask] = np.iinfo(np.uint16).max  # beyond any Hamming distance; never picked
        n_cand = min(count, max(self.candidates, 8 * k))
        while True:
            near = np.argpartition(dist, n_cand - 1)[:n_cand] if n_cand < len(dist) else np.arange(len(dist))
            cand = rows[near] if gather and rows is not None else near
            cand = np.sort(cand)  # vrow order: sequential reads
            found = self._distinct(self._fetch_sims(cand, q), cand, k)
            if len(found) >= k or n_cand >= count:
                return found
            n_cand = min(count, n_cand * 4)


def _normalize(matrix: F32) -> F32:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out: F32 = (matrix / np.maximum(norms, np.float32(1e-30))).astype(np.float32, copy=False)
    return out
