"""An in-process copy of every passage vector, for KNN without a vec0 scan.

SQLite stays the single source of truth: the cache is loaded from ``passages JOIN memories`` on the
first KNN, follows this process's own committed writes (the store applies them after COMMIT and drops
the cache on doubt), and catches up when ``PRAGMA data_version`` says another connection committed
(the store replays its ``cache_log`` through :meth:`VectorCache.remove` and :meth:`VectorCache.append`,
or reloads).

Three modes, chosen at load time by the number of vector rows (:func:`choose_mode`):

``float32`` (rows <= ``exact_threshold``, default 50k)
    a float32 matrix of unit rows; a query is one ``matrix @ q`` (BLAS), a mask for the filters the
    per-row arrays can express, ``argpartition`` and a dedupe to distinct memories. Exact.
``int8`` (up to ``coarse_threshold``, default 200k)
    each unit row scaled by its largest component to int8, plus its sign bits (384 + 4 + 48 B per
    384-d row, under a third of float32). The sign bits pick the nearest ``1/INT8_PREFILTER`` of the
    matching rows (at least ``INT8_PREFILTER_MIN``) by Hamming distance; only those are scored from
    their int8 rows, converted to float32 in blocks (numpy has no int8 GEMM) for BLAS; the
    ``max(int8_candidates, 4 k)`` best are reranked exactly with their float32 copies read from
    SQLite (``fetch``), so the similarities returned are exact. Recall@10 against exact search is
    measured in ``tests/bench/test_search_bench.py`` and in this plugin's tests.
``bits`` (more rows)
    no matrix in memory (1M x 384 floats would be 1.5 GB): sign bits of each mean-centred vector
    (48 bytes per 384-d row), Hamming distance with ``np.bitwise_count``; the ``candidates`` nearest
    rows are reranked exactly from SQLite. Approximate: recall@10 measured as above.

Per-row arrays (one entry per vector row): vrow, owning memory seq, namespace id, deleted,
superseded, type code, created micros, live (False once purged). Lifecycle flags are per memory
and copied to each of its rows, as in the vec0 table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]
BoolArr = npt.NDArray[np.bool_]
CacheMode = Literal["float32", "int8", "bits"]

# Up to this many vector rows the cache keeps exact float32 rows (77 MB at 50k x 384-d).
EXACT_THRESHOLD = 50_000
# Above this many vector rows the cache switches to the binary coarse pass + exact rerank.
COARSE_THRESHOLD = 200_000
# Rows reranked exactly after the sign-bit pass (grown ×4 when they hold fewer than k memories). On the
# synthetic 1M set (tests/bench/synthetic.py) recall@10 was 0.83 at 1 000, 0.997 at 4 000, 1.0 at 10 000.
COARSE_CANDIDATES = 4_000
# Rows reranked exactly after the int8 pass: at least this many, and at least 4 per wanted memory.
INT8_CANDIDATES = 64
# The int8 pass only scores the rows whose sign bits are nearest: this fraction (1/8) of the matching
# rows, and at least INT8_PREFILTER_MIN of them.
INT8_PREFILTER = 8
INT8_PREFILTER_MIN = 4096
# A filter naming fewer memories than 1/FEW_SEQS of the rows looks their rows up by binary search
# instead of masking every row (the thread neighbours of a search: ~20 memories).
FEW_SEQS = 64
# Rows converted from int8 to float32 per BLAS call in the int8 scan (a 768 KB float32 block). Scan of
# 100k x 384 measured here: 11.6 ms with 512-row blocks, 12.8 with 1024, 15.5 with 2048, 12.2 with 128
# (float32 rows: 10.7 ms).
_INT8_BLOCK = 512


def choose_mode(
    rows: int, exact_threshold: int = EXACT_THRESHOLD, coarse_threshold: int = COARSE_THRESHOLD
) -> CacheMode:
    """The cache mode for ``rows`` vector rows (see the module docstring)."""
    if rows > coarse_threshold:
        return "bits"
    if rows > exact_threshold:
        return "int8"
    return "float32"


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

    ns: int | tuple[int, ...] | None = None  # one namespace id, or any of several
    include_deleted: bool = False
    include_superseded: bool = True
    types: tuple[int, ...] | None = None
    created_min: int | None = None  # inclusive
    created_max: int | None = None  # exclusive
    seqs: I64 | None = None  # allowed memory seqs (resolved in SQL), None = all


_PER_ROW_BYTES = 8 + 8 + 4 + 1 + 1 + 1 + 8 + 1


def vector_bytes(mode: CacheMode, dims: int) -> int:
    """Bytes one vector row takes in ``mode`` (besides the per-row filter columns)."""
    if mode == "float32":
        return dims * 4
    bits = (dims + 63) // 64 * 8
    if mode == "int8":
        return dims + 4 + bits
    return bits


def estimate_bytes(rows: int, dims: int, mode: CacheMode) -> int:
    return rows * (_PER_ROW_BYTES + vector_bytes(mode, dims))


class VectorCache:
    """See the module docstring. Not thread-safe: the store calls it under its lock.

    :param mode: ``float32``, ``int8`` or ``bits``.
    :param fetch: the float32 copies of vector rows (by vrow, in order): the exact rerank of the
        ``int8`` and ``bits`` modes.
    :param candidates: rows reranked after the coarse pass (default per mode).
    """

    def __init__(
        self,
        dims: int,
        *,
        mode: CacheMode = "float32",
        fetch: Callable[[Sequence[int]], F32] | None = None,
        candidates: int | None = None,
    ) -> None:
        if mode not in ("float32", "int8", "bits"):
            raise ValueError(f"mode must be float32, int8 or bits, got {mode!r}")
        if mode != "float32" and fetch is None:
            raise ValueError(f"mode {mode!r} reranks from SQLite and needs fetch")
        self.dims = dims
        self.mode: CacheMode = mode
        self.fetch = fetch
        if candidates is None:
            candidates = COARSE_CANDIDATES if mode == "bits" else INT8_CANDIDATES
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
        self.matrix: F32 = np.zeros((cap if mode == "float32" else 0, dims), dtype=np.float32)
        self.q8 = np.zeros((cap if mode == "int8" else 0, dims), dtype=np.int8)
        self.scale: F32 = np.zeros(cap if mode == "int8" else 0, dtype=np.float32)
        # column-major (words, rows): one contiguous pass per 64-bit word is 3x faster than row-major
        self.codes = np.zeros((self.words, 0 if mode == "float32" else cap), dtype=np.uint64)
        self.mean: F32 = np.zeros(dims, dtype=np.float32)
        self.dead = 0
        self._seq_ordered = True  # seq[:n] never decreases (rows arrive in seq order): binary search works
        self._block: F32 | None = None  # the int8 scan's float32 conversion buffer

    # -- building ---------------------------------------------------------------------------------
    def set_mean(self, mean: F32) -> None:
        """The centre the sign bits are taken around (``int8`` and ``bits`` modes); set before the
        first append."""
        self.mean = np.asarray(mean, dtype=np.float32).reshape(self.dims)

    def reserve(self, rows: int) -> None:
        """Size the arrays for ``rows`` rows at once (a load knows its count: no doubling slack)."""
        self._grow(rows, exact=True)

    def _row_arrays(self) -> tuple[str, ...]:
        """The names of the arrays indexed by row first (the vector store of the mode included)."""
        store = {"float32": ("matrix",), "int8": ("q8", "scale"), "bits": ()}[self.mode]
        return ("vrow", "seq", "ns", "deleted", "superseded", "type", "created", "live", *store)

    def _grow(self, need: int, *, exact: bool = False) -> None:
        cap = self.vrow.shape[0]
        if need <= cap:
            return
        new = need if exact else max(need, cap + cap // 4)
        for name in self._row_arrays():
            a = getattr(self, name)
            out = np.zeros((new, *a.shape[1:]), dtype=a.dtype)
            out[: self.n] = a[: self.n]
            setattr(self, name, out)
        if self.mode != "float32":
            codes = np.zeros((self.words, new), dtype=np.uint64)
            codes[:, : self.n] = self.codes[:, : self.n]
            self.codes = codes

    def _encode_bits(self, unit: F32) -> npt.NDArray[np.uint64]:
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
        if self._seq_ordered:
            run = self.seq[max(0, self.n - 1) : self.n + count]
            self._seq_ordered = bool(np.all(run[1:] >= run[:-1]))
        self.deleted[s], self.superseded[s] = deleted, superseded
        self.type[s], self.created[s], self.live[s] = types, created, True
        raw = np.asarray(vectors, dtype=np.float32).reshape(count, self.dims)
        if self.mode == "int8":  # scale-free: quantize the raw rows, fold 1/norm into the scale
            peak = np.maximum(np.abs(raw).max(axis=1), np.float32(1e-30))
            norms = np.maximum(np.linalg.norm(raw, axis=1), np.float32(1e-30))
            self.scale[s] = peak / (np.float32(127) * norms)
            self.q8[s] = np.rint(raw * (np.float32(127) / peak)[:, None]).astype(np.int8)
        if self.mode != "float32":
            self.codes[:, s] = self._encode_bits(_normalize(raw)).T
        else:
            self.matrix[s] = _normalize(raw)
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
        for name in self._row_arrays():
            a = getattr(self, name)
            a[: len(keep)] = a[keep]
        if self.mode != "float32":
            self.codes[:, : len(keep)] = self.codes[:, keep]
        self.n, self.dead = len(keep), 0

    @property
    def rows(self) -> int:
        return self.n - self.dead

    @property
    def nbytes(self) -> int:
        return int(sum(getattr(self, name).nbytes for name in self._row_arrays()) + self.codes.nbytes)

    # -- search -----------------------------------------------------------------------------------
    def mask(self, f: CacheFilter) -> BoolArr | None:
        """Rows matching ``f`` (None = every row)."""
        return self._matching(f, slice(0, self.n))

    def _few_rows(self, f: CacheFilter) -> I64:
        """The rows matching ``f``, which names a few memories (``f.seqs``), in row order."""
        assert f.seqs is not None
        rows = self._rows_of(f.seqs)
        keep = self._matching(dataclasses.replace(f, seqs=None), rows)
        return rows if keep is None else rows[keep]

    def _rows_of(self, seqs: I64) -> I64:
        """Every row of the memories ``seqs``, in row order: two binary searches per memory while
        rows are in seq order (they are appended so), else one pass over the seq column."""
        n = self.n
        if not self._seq_ordered:
            return np.flatnonzero(np.isin(self.seq[:n], seqs))
        wanted = np.unique(np.asarray(seqs, dtype=np.int64))
        lo = np.searchsorted(self.seq[:n], wanted, side="left")
        hi = np.searchsorted(self.seq[:n], wanted, side="right")
        spans = [
            np.arange(a, b, dtype=np.int64) for a, b in zip(lo.tolist(), hi.tolist(), strict=True) if b > a
        ]
        return np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)

    def _matching(self, f: CacheFilter, at: slice | I64) -> BoolArr | None:
        """Which of the rows ``at`` match ``f`` (None = all of them)."""
        mask: BoolArr | None = None if self.dead == 0 else self.live[at].copy()

        def both(m: BoolArr | None, cond: BoolArr) -> BoolArr:
            if m is None:
                return cond
            m &= cond
            return m

        if isinstance(f.ns, int):
            mask = both(mask, self.ns[at] == f.ns)
        elif f.ns is not None:
            mask = both(mask, np.isin(self.ns[at], np.asarray(f.ns, dtype=np.int32)))
        if not f.include_deleted:
            mask = both(mask, ~self.deleted[at])
        if not f.include_superseded:
            mask = both(mask, ~self.superseded[at])
        if f.types is not None:
            mask = both(mask, np.isin(self.type[at], np.asarray(f.types, dtype=np.int8)))
        if f.created_min is not None:
            mask = both(mask, self.created[at] >= f.created_min)
        if f.created_max is not None:
            mask = both(mask, self.created[at] < f.created_max)
        if f.seqs is not None:
            mask = both(mask, np.isin(self.seq[at], f.seqs))
        return mask

    def search(self, query: F32, k: int, f: CacheFilter) -> list[tuple[int, float]]:
        """Up to ``k`` (memory seq, cosine similarity) of distinct memories, best first."""
        if k <= 0 or self.n == 0:
            return []
        q = _normalize(np.asarray(query, dtype=np.float32).reshape(1, self.dims))[0]
        if f.seqs is not None and len(f.seqs) * FEW_SEQS < self.n:
            # A few memories named (a search's thread neighbours): look their rows up, no full pass.
            rows = self._few_rows(f)
            count = len(rows)
            if count == 0:
                return []
            mask = None
            if count * 3 >= self.n:  # not few after all (memories of many passages): the usual path
                mask = np.zeros(self.n, dtype=np.bool_)
                mask[rows] = True
        elif (mask := self.mask(f)) is None:
            rows = None
            count = self.n
        else:
            rows = np.flatnonzero(mask)
            count = len(rows)
            if count == 0:
                return []
        if self.mode != "float32":
            if count <= self._rerank_count(k):  # the rerank would read every candidate anyway
                idx = np.arange(self.n, dtype=np.int64) if rows is None else rows
                return self._top_distinct(self._fetch_sims(idx, q), idx, k, len(idx))
            return self._search_rerank(q, k, mask, rows, count)
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

    def _rerank_count(self, k: int) -> int:
        return max(self.candidates, (8 if self.mode == "bits" else 4) * k)

    def _hamming(self, q: F32, rows: I64 | None) -> npt.NDArray[np.uint16]:
        """Hamming distance between the sign bits of ``q`` and of ``rows`` (every row when None)."""
        qcode = self._encode_bits(q.reshape(1, -1))[0]
        codes = self.codes[:, rows] if rows is not None else self.codes[:, : self.n]
        hamming: npt.NDArray[np.uint16] = np.bitwise_count(codes[0] ^ qcode[0]).astype(np.uint16)
        for w in range(1, self.words):
            hamming += np.bitwise_count(codes[w] ^ qcode[w])
        return hamming

    def _int8_distance(self, q: F32, rows: I64 | None) -> F32:
        """Negated int8 similarity of ``rows`` (every row when None), in blocks converted to float32."""
        q8 = self.q8[rows] if rows is not None else self.q8[: self.n]
        scale = self.scale[rows] if rows is not None else self.scale[: self.n]
        total = len(q8)
        out = np.empty(total, dtype=np.float32)
        if self._block is None:  # kept: a fresh buffer per query costs page faults
            self._block = np.empty((_INT8_BLOCK, self.dims), dtype=np.float32)
        block = self._block
        neg_q = -q
        for start in range(0, total, _INT8_BLOCK):
            stop = min(total, start + _INT8_BLOCK)
            buf = block[: stop - start]
            buf[...] = q8[start:stop]
            np.dot(buf, neg_q, out=out[start:stop])
        out *= scale
        return out

    def _coarse_distance(self, q: F32, rows: I64 | None, mask: BoolArr | None) -> npt.NDArray[Any]:
        """Lower = nearer, for ``rows`` (every row when None; then rows outside ``mask`` get the largest
        value): the Hamming distance of the sign bits (``bits``), or (``int8``) the negated int8
        similarity of the rows the sign bits put in the nearest ``1/INT8_PREFILTER`` (at least
        ``INT8_PREFILTER_MIN``), the others +inf."""
        hamming = self._hamming(q, rows)
        worst = np.iinfo(np.uint16).max
        if mask is not None:
            hamming[~mask] = worst  # never picked while a matching row is left
        if self.mode == "bits":
            return hamming
        valid = len(hamming) if mask is None else int(np.count_nonzero(mask))
        keep = min(valid, max(INT8_PREFILTER_MIN, valid // INT8_PREFILTER))
        dist = np.full(len(hamming), np.inf, dtype=np.float32)
        everything = keep >= len(hamming)
        near = np.arange(len(hamming)) if everything else np.argpartition(hamming, keep - 1)[:keep]
        dist[near] = self._int8_distance(q, near if rows is None else rows[near])
        if mask is not None:
            dist[~mask] = np.inf
        return dist

    def _search_rerank(
        self, q: F32, k: int, mask: BoolArr | None, rows: I64 | None, count: int
    ) -> list[tuple[int, float]]:
        gather = rows is not None and count * 3 < self.n
        dist = self._coarse_distance(q, rows if gather else None, None if gather else mask)
        n_cand = min(count, self._rerank_count(k))
        while True:
            near = np.argpartition(dist, n_cand - 1)[:n_cand] if n_cand < len(dist) else np.arange(len(dist))
            cand = rows[near] if gather and rows is not None else near
            cand = np.sort(cand)  # vrow order: sequential reads
            found = self._top_distinct(self._fetch_sims(cand, q), cand, k, len(cand))
            if len(found) >= k or n_cand >= count:
                return found
            n_cand = min(count, n_cand * 4)


def _normalize(matrix: F32) -> F32:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out: F32 = (matrix / np.maximum(norms, np.float32(1e-30))).astype(np.float32, copy=False)
    return out
