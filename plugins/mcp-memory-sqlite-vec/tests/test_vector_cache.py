"""The in-process vector cache: same answers as vec0, consistent with SQLite after this process's
writes (insert, update_fields, purge, rollback), after another process's commits (data_version),
and under reads and writes from several threads at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import Memory, MemoryFilter, MemoryType
from mcp_memory_sqlite_vec import SqliteVecStore, vector_cache
from mcp_memory_sqlite_vec.vector_cache import CacheFilter, CacheMode, VectorCache

DIMS = 16
MODEL = "test-model-16"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def unit(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def memories(n: int, start: int = 0, **fields: object) -> list[Memory]:
    types = list(MemoryType)
    return [
        Memory(
            content=f"memory {start + i}",
            created_at=T0 + timedelta(hours=start + i),
            updated_at=T0 + timedelta(hours=start + i),
            type=types[(start + i) % len(types)],
            tags=(f"t{(start + i) % 3}",),
            metadata={"m": (start + i) % 2},
            namespace="other" if (start + i) % 5 == 0 else "default",
            **fields,  # type: ignore[arg-type]
        )
        for i in range(n)
    ]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "cache.db"


def opened(db: Path, **kwargs: object) -> SqliteVecStore:
    store = SqliteVecStore(db, **kwargs)  # type: ignore[arg-type]
    store.open(MODEL, DIMS)
    return store


@pytest.fixture
def pair(db: Path):  # type: ignore[no-untyped-def]
    """A store with the cache and one without, on the same file."""
    cached, plain = opened(db), opened(db, vector_cache=False)
    yield cached, plain
    cached.close()
    plain.close()


FILTERS = [
    MemoryFilter(),
    MemoryFilter(namespace=None),
    MemoryFilter(namespace="other"),
    MemoryFilter(namespace="missing"),
    MemoryFilter(include_superseded=False),
    MemoryFilter(include_deleted=True, namespace=None),
    MemoryFilter(types=frozenset({MemoryType.EPISODIC, MemoryType.WORKING})),
    MemoryFilter(created_after=T0 + timedelta(hours=50), created_before=T0 + timedelta(hours=150)),
    MemoryFilter(tags_any=frozenset({"t1"})),
    MemoryFilter(tags_all=frozenset({"t2"}), namespace=None),
    MemoryFilter(metadata=(("m", 1),)),
    MemoryFilter(pinned=True, namespace=None),
]


def same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> None:
    assert [i for i, _ in a] == [i for i, _ in b]
    assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-5)


def test_cache_matches_vec0_for_every_filter(pair: tuple[SqliteVecStore, SqliteVecStore]) -> None:
    cached, plain = pair
    ms = memories(200)
    vectors = unit(400, 1)
    owners = [i // 2 for i in range(400)]  # two vectors (passages) per memory
    cached.insert(ms, vectors, owners)
    cached.update_fields(ms[3].id, {"deleted_at": T0, "pinned": True})
    cached.update_fields(ms[4].id, {"superseded_by": ms[5].id, "pinned": True})
    for q in unit(5, 2):
        for where in FILTERS:
            for k in (1, 10, 150):
                same(cached.knn(q, k, where), plain.knn(q, k, where))
    assert cached.vector_cache is not None and cached.vector_cache.rows == 400
    assert plain.vector_cache is None


def test_own_writes_update_the_cache_in_place(db: Path) -> None:
    store = opened(db)
    ms = memories(20)
    vectors = unit(20, 3)
    store.insert(ms, vectors)
    assert store.knn(vectors[7], 1, MemoryFilter(namespace=None))[0][0] == ms[7].id
    cache = store.vector_cache
    assert cache is not None
    extra = memories(1, start=100)
    store.insert(extra, unit(1, 4))
    assert store.knn(unit(1, 4)[0], 1, MemoryFilter(namespace=None))[0][0] == extra[0].id
    store.update_fields(ms[7].id, {"deleted_at": T0})
    assert ms[7].id not in dict(store.knn(vectors[7], 5, MemoryFilter(namespace=None)))
    store.update_fields(ms[7].id, {"deleted_at": None, "type": MemoryType.PROCEDURAL})
    hits = store.knn(vectors[7], 1, MemoryFilter(namespace=None, types=frozenset({MemoryType.PROCEDURAL})))
    assert hits[0][0] == ms[7].id
    assert store.purge([ms[7].id]) == 1
    assert ms[7].id not in dict(store.knn(vectors[7], 30, MemoryFilter(namespace=None, include_deleted=True)))
    assert store.vector_cache is cache  # followed, not reloaded
    assert cache.rows == 20
    store.close()


def test_rollback_leaves_the_cache_as_sqlite(db: Path) -> None:
    store = opened(db)
    ms = memories(10)
    store.insert(ms, unit(10, 5))
    store.knn(unit(1, 6)[0], 3, MemoryFilter())
    cache = store.vector_cache
    assert cache is not None
    new = memories(1, start=50)
    with pytest.raises(RuntimeError), store.transaction():
        store.insert(new, unit(1, 7))
        store.update_fields(ms[1].id, {"deleted_at": T0})
        store.purge([ms[2].id])
        raise RuntimeError("boom")
    everything = MemoryFilter(namespace=None)
    ids = dict(store.knn(unit(1, 7)[0], 20, everything))
    assert new[0].id not in ids and ms[1].id in ids and ms[2].id in ids
    assert store.vector_cache is cache and cache.rows == 10
    store.close()


def test_an_inner_failure_caught_outside_keeps_what_the_outer_block_committed(db: Path) -> None:
    store = opened(db)
    store.insert(memories(5), unit(5, 8))
    store.knn(unit(1, 9)[0], 3, MemoryFilter())
    cache = store.vector_cache
    dup = memories(1, start=60)
    with store.transaction():
        store.insert(dup, unit(1, 10))
        try:
            with store.transaction():
                store.insert(memories(1, start=61), unit(1, 11))
                raise ValueError("inner")
        except ValueError:
            pass
    # The commit holds both inserts (an inner block is not a savepoint); the cache catches up with
    # both from cache_log instead of being reloaded.
    everything = MemoryFilter(namespace=None)
    assert store.knn(unit(1, 10)[0], 1, everything)[0][0] == dup[0].id
    assert store.vector_cache is cache and cache is not None and cache.rows == 7
    store.close()


def test_knn_inside_a_transaction_sees_uncommitted_writes(db: Path) -> None:
    store = opened(db)
    store.insert(memories(5), unit(5, 11))
    store.knn(unit(1, 12)[0], 3, MemoryFilter())
    new = memories(1, start=70)
    with store.transaction():
        store.insert(new, unit(1, 13))
        assert store.knn(unit(1, 13)[0], 1, MemoryFilter(namespace=None))[0][0] == new[0].id
    assert store.knn(unit(1, 13)[0], 1, MemoryFilter(namespace=None))[0][0] == new[0].id
    store.close()


def test_another_process_commit_is_replayed_into_the_cache(db: Path) -> None:
    store = opened(db)
    ms = memories(10)
    store.insert(ms, unit(10, 14))
    store.knn(unit(1, 15)[0], 3, MemoryFilter())
    first = store.vector_cache
    assert first is not None
    code = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        from datetime import datetime, UTC
        from mcp_memory_core import Memory
        from mcp_memory_sqlite_vec import SqliteVecStore
        s = SqliteVecStore(sys.argv[1]); s.open({MODEL!r}, {DIMS})
        v = np.random.default_rng(16).standard_normal((1, {DIMS})).astype(np.float32)
        s.insert([Memory(id="from-other-process", content="x")], v / np.linalg.norm(v))
        s.update_fields({ms[0].id!r}, {{"deleted_at": datetime(2024, 1, 1, tzinfo=UTC)}})
        s.close()
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(db)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    v = np.random.default_rng(16).standard_normal((1, DIMS)).astype(np.float32)[0]
    hits = store.knn(v / np.linalg.norm(v), 20, MemoryFilter(namespace=None))
    assert hits[0][0] == "from-other-process"
    assert ms[0].id not in dict(hits)
    assert store.vector_cache is first  # caught up from cache_log, not reloaded
    store.close()


def knn_ids(store: SqliteVecStore, q: np.ndarray, where: MemoryFilter, k: int = 8) -> list[str]:
    return [i for i, _ in store.knn(q, k, where)]


def assert_same_as_vec0(cached: SqliteVecStore, plain: SqliteVecStore, seed: int) -> None:
    for q in unit(3, seed):
        for where in FILTERS:
            assert knn_ids(cached, q, where) == knn_ids(plain, q, where), where


@pytest.mark.parametrize("mode", ["float32", "int8", "bits"])
def test_other_connections_writes_are_replayed_in_every_mode(db: Path, mode: str) -> None:
    """Inserts, tombstones, supersession, namespace/type/created changes and purges committed by
    another connection reach the cache through cache_log; answers stay those of vec0 and the cache
    object is kept."""
    thresholds = {"float32": {}, "int8": {"exact_threshold": 0}, "bits": {"coarse_threshold": 0}}[mode]
    reader = opened(db, **thresholds)
    writer = opened(db, vector_cache=False)
    plain = opened(db, vector_cache=False)
    ms = memories(40)
    writer.insert(ms, unit(40, 40))
    assert_same_as_vec0(reader, plain, 41)
    cache = reader.vector_cache
    assert cache is not None and cache.mode == mode
    writer.insert(memories(5, start=40), unit(5, 42))
    writer.update_fields(ms[1].id, {"deleted_at": T0})
    writer.update_fields(ms[2].id, {"superseded_by": ms[3].id})
    writer.update_fields(ms[4].id, {"namespace": "other", "type": MemoryType.PROCEDURAL})
    writer.update_fields(ms[5].id, {"created_at": T0 + timedelta(hours=120)})
    writer.purge([ms[6].id, ms[7].id])
    assert_same_as_vec0(reader, plain, 43)
    assert reader.vector_cache is cache
    assert cache.rows == 43
    reader.close()
    writer.close()
    plain.close()


def test_commits_that_change_nothing_cached_replay_nothing(db: Path) -> None:
    reader, writer = opened(db), opened(db, vector_cache=False)
    ms = memories(10)
    writer.insert(ms, unit(10, 44))
    reader.knn(unit(1, 45)[0], 3, MemoryFilter())
    cache = reader.vector_cache
    assert cache is not None
    before = cache.n
    writer.record_access({ms[0].id: 2}, T0)
    writer.update_fields(ms[1].id, {"tags": ("new",), "importance": 0.9, "pinned": True})
    assert knn_ids(reader, unit(1, 45)[0], MemoryFilter(namespace=None))
    assert reader.vector_cache is cache and cache.n == before  # no row dropped and read again
    reader.close()
    writer.close()


def test_a_reused_vector_row_is_never_served_stale(db: Path) -> None:
    """Purging the newest memory frees its vector rowid; the next insert may take it. The replay drops
    the purged memory's rows and reads the new memory's, so neither vector is mixed up."""
    reader, writer = opened(db), opened(db, vector_cache=False)
    ms = memories(10)
    vectors = unit(11, 46)
    writer.insert(ms, vectors[:10])
    reader.knn(vectors[0], 3, MemoryFilter())
    writer.purge([ms[9].id])
    new = memories(1, start=90)
    new[0] = new[0].model_copy(update={"namespace": "default"})
    writer.insert(new, vectors[10:])
    everything = MemoryFilter(namespace=None, include_deleted=True)
    assert knn_ids(reader, vectors[10], everything, 1) == [new[0].id]
    assert ms[9].id not in knn_ids(reader, vectors[9], everything, 10)
    reader.close()
    writer.close()


def test_a_cache_behind_the_pruned_log_or_too_many_changes_reloads(db: Path) -> None:
    reader, writer = opened(db), opened(db, vector_cache=False)
    writer.insert(memories(10), unit(10, 47))
    reader.knn(unit(1, 48)[0], 3, MemoryFilter())
    first = reader.vector_cache
    writer.insert(memories(2, start=10), unit(2, 49))
    with writer.transaction():  # as the pruning trigger does once the log holds CACHE_LOG_KEEP entries
        writer._db().execute("DELETE FROM cache_log")
    writer.insert(memories(1, start=12), unit(1, 50))
    assert len(reader.knn(unit(1, 50)[0], 20, MemoryFilter(namespace=None))) == 13
    second = reader.vector_cache
    assert second is not None and second is not first and second.rows == 13
    writer.insert(memories(1100, start=13), unit(1100, 51))  # more than 1024 and 10% of the rows
    assert reader.knn(unit(1, 51)[0], 1, MemoryFilter(namespace=None))
    assert reader.vector_cache is not second and reader.vector_cache is not None
    assert reader.vector_cache.rows == 1113
    reader.close()
    writer.close()


def test_disabled_by_environment_and_by_size_cap(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_MEMORY_SQLITE_VECTOR_CACHE", "0")
    store = opened(db)
    store.insert(memories(5), unit(5, 17))
    assert len(store.knn(unit(1, 18)[0], 3, MemoryFilter(namespace=None))) == 3
    assert store.vector_cache is None
    store.close()
    monkeypatch.delenv("MCP_MEMORY_SQLITE_VECTOR_CACHE")
    capped = opened(db, vector_cache_max_mb=0)
    assert len(capped.knn(unit(1, 18)[0], 3, MemoryFilter(namespace=None))) == 3
    assert capped.vector_cache is None
    capped.close()


def clustered_cache(mode: CacheMode, **kwargs: Any) -> tuple[VectorCache, np.ndarray, np.ndarray]:
    """5 000 clustered 384-d rows, two per memory, in a cache of ``mode`` reranking from ``data``."""
    rng = np.random.default_rng(20)
    centres = rng.standard_normal((20, 384)).astype(np.float32)
    data = centres[rng.integers(0, 20, 5000)] + 0.6 * rng.standard_normal((5000, 384)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    seqs = np.arange(5000) // 2  # two rows per memory
    cache = VectorCache(384, mode=mode, fetch=lambda vrows: data[np.asarray(vrows) - 1], **kwargs)
    cache.set_mean(data.mean(axis=0))
    zeros = np.zeros(5000, dtype=np.int64)
    cache.append(np.arange(1, 5001), seqs, data, zeros, zeros, zeros, zeros, zeros)
    return cache, data, seqs


def recall_against_exact(cache: VectorCache, data: np.ndarray, seqs: np.ndarray, flt: CacheFilter) -> float:
    """Mean recall@10 of ``cache`` over 30 perturbed data points, checking on the way that the answers
    are 10 distinct memories with exact similarities and that the source point is always first."""
    rng = np.random.default_rng(21)
    allowed = np.ones(len(data) // 2, dtype=bool) if flt.seqs is None else np.isin(np.arange(2500), flt.seqs)
    recalls = []
    for qi in rng.choice(np.flatnonzero(np.repeat(allowed, 2)), 30):
        q = data[qi] + 0.02 * rng.standard_normal(384).astype(np.float32)
        q /= np.linalg.norm(q)
        best = np.full(2500, -np.inf)
        np.maximum.at(best, seqs, data @ q)
        best[~allowed] = -np.inf
        exact = set(np.argsort(-best)[:10].tolist())
        got = cache.search(q, 10, flt)
        assert len(got) == 10 and len({s for s, _ in got}) == 10
        recalls.append(len(exact & {s for s, _ in got}) / 10)
        assert got[0][0] == int(np.argmax(best))  # the perturbed point's source is always found
        assert all(abs(sim - best[seq]) < 1e-5 for seq, sim in got)  # reranked exactly
    return float(np.mean(recalls))


def test_coarse_pass_finds_k_distinct_with_high_recall() -> None:
    """Binary coarse pass + exact rerank on clustered data, with a small candidate count."""
    cache, data, seqs = clustered_cache("bits", candidates=300)
    # Sign bits cannot order 250 near-equidistant cluster members from 300 candidates of 5 000: the
    # benchmark measures recall at realistic candidate counts; here it only has to be sane.
    assert recall_against_exact(cache, data, seqs, CacheFilter()) >= 0.6
    # k larger than the candidates hold: the candidate count grows until k distinct memories appear
    got = cache.search(data[0], 1000, CacheFilter())
    assert len({s for s, _ in got}) == 1000


@pytest.mark.parametrize("prefilter_min", [4096, 256])
@pytest.mark.parametrize("allowed", [None, "every third memory", "a tenth of the memories"])
def test_int8_pass_with_rerank_equals_exact_search(
    allowed: str | None, prefilter_min: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """int8 rows (a quarter of float32) + exact rerank of the 64 best: on clustered data, where many
    rows are near-equidistant, the top 10 is the exact top 10, with or without a filter (a filter on
    a third of the rows scans all rows masked; on a tenth it gathers them). With a prefilter minimum
    of 256 the sign bits pass only the nearest eighth of the matching rows to the int8 pass."""
    monkeypatch.setattr(vector_cache, "INT8_PREFILTER_MIN", prefilter_min)
    cache, data, seqs = clustered_cache("int8")
    assert cache.nbytes < 5000 * (384 + 100)  # int8 rows and sign bits, not float32
    memories = np.arange(2500)
    seq_filter = {None: None, "every third memory": memories[::3], "a tenth of the memories": memories[::10]}
    flt = CacheFilter(seqs=seq_filter[allowed])
    assert recall_against_exact(cache, data, seqs, flt) == 1.0
    got = cache.search(data[0], 1000, CacheFilter())  # the rerank count grows with k
    assert len({s for s, _ in got}) == 1000


def test_int8_rows_survive_growth_and_compaction() -> None:
    """Appends past the reserved size and a compaction after removals keep int8 rows and scales
    aligned with their memories."""
    cache, data, _ = clustered_cache("int8")
    cache.remove(list(range(0, 2500, 2)))  # half the memories: compacts (dead > 1024 and > n/4)
    assert cache.n == cache.rows == 2500
    extra = np.random.default_rng(22).standard_normal((3000, 384)).astype(np.float32)
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    data_all = np.vstack([data, extra])
    cache.fetch = lambda vrows: data_all[np.asarray(vrows) - 1]
    zeros = np.zeros(3000, dtype=np.int64)
    cache.append(np.arange(5001, 8001), np.arange(2500, 5500), extra, zeros, zeros, zeros, zeros, zeros)
    # rows of memories 1 and 1001 (odd: kept), and new rows of memories 2507 and 5499
    for probe, owner in ((data[3], 1), (data[2003], 1001), (extra[7], 2507), (extra[2999], 5499)):
        (seq, sim), *_ = cache.search(probe, 1, CacheFilter())
        assert (seq, sim) == (owner, pytest.approx(1.0, abs=1e-5))
    assert cache.search(data[0], 1, CacheFilter())[0][0] != 0  # memory 0's rows are removed


def test_cache_changes_mode_as_the_store_grows(db: Path) -> None:
    """float32 rows up to exact_threshold, int8 up to coarse_threshold, sign bits above; a cache that
    grows a quarter past its mode's limit is dropped after the commit and reloaded in the next mode,
    and answers stay those of vec0 throughout."""
    store = opened(db, exact_threshold=8, coarse_threshold=40)
    plain = opened(db, vector_cache=False)
    seen = []
    total = 0
    for count in (5, 6, 40):
        store.insert(memories(count, start=total), unit(count, 30 + total))
        total += count
        q = unit(1, 99 + total)[0]
        assert [i for i, _ in store.knn(q, 5, MemoryFilter())] == [
            i for i, _ in plain.knn(q, 5, MemoryFilter())
        ]
        assert store.vector_cache is not None
        seen.append(store.vector_cache.mode)
    assert seen == ["float32", "int8", "bits"]
    store.close()
    plain.close()
    with pytest.raises(ValueError, match="needs fetch"):
        VectorCache(DIMS, mode="int8")
    with pytest.raises(ValueError, match="mode"):
        VectorCache(DIMS, mode="float16")  # type: ignore[arg-type]


def test_warm_loads_the_vector_cache(db: Path) -> None:
    store = opened(db)
    store.insert(memories(10), unit(10, 52))
    assert store.vector_cache is None  # loaded lazily by the first KNN …
    store.warm()  # … or ahead of it, by the engine's warm-up
    cache = store.vector_cache
    assert cache is not None and cache.rows == 10
    store.knn(unit(1, 53)[0], 3, MemoryFilter())
    assert store.vector_cache is cache
    store.close()
    SqliteVecStore(db).warm()  # not opened: nothing to do


@pytest.mark.parametrize("mode", ["float32", "int8", "bits"])
@pytest.mark.parametrize("order", ["seq order", "shuffled"])
def test_a_filter_naming_a_few_memories_matches_the_full_scan(
    mode: CacheMode, order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search's thread neighbours name ~20 memories: their rows are looked up (binary search while
    rows arrive in seq order, one pass over the seq column otherwise) instead of masking every row.
    The answer is the one a full masked scan gives, with deleted, superseded and removed memories
    and the other filters still applied."""
    rng = np.random.default_rng(23)
    data = rng.standard_normal((5000, 384)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    seqs = np.arange(5000) // 2
    rows = np.arange(5000) if order == "seq order" else rng.permutation(5000)
    cache = VectorCache(384, mode=mode, fetch=lambda vrows: data[np.asarray(vrows) - 1])
    cache.set_mean(data.mean(axis=0))
    zeros = np.zeros(5000, dtype=np.int64)
    deleted = (seqs % 7 == 0).astype(np.int64)
    for part in np.array_split(rows, 5):  # several appends: the order flag follows each one
        cache.append(
            part + 1,
            seqs[part],
            data[part],
            zeros[part],
            deleted[part],
            zeros[part],
            zeros[part],
            zeros[part],
        )
    assert cache._seq_ordered is (order == "seq order")
    cache.remove([3, 5])
    named = np.array([0, 3, 5, 7, 11, 13, 14, 21, 100, 999, 2498, 2499, 4000])  # 0, 7, 14, 21: deleted
    q = data[25] + data[1999]
    q /= np.linalg.norm(q)
    for flt in (CacheFilter(seqs=named), CacheFilter(seqs=named, include_deleted=True)):
        few = cache.search(q, 5, flt)
        monkeypatch.setattr(vector_cache, "FEW_SEQS", 0)  # never "few": the full masked scan
        full = cache.search(q, 5, flt)
        monkeypatch.undo()
        assert [s for s, _ in few] == [s for s, _ in full]
        assert [sim for _, sim in few] == pytest.approx([sim for _, sim in full], abs=1e-5)
        allowed = {11, 13, 100, 999, 2498, 2499} | ({0, 7, 14, 21} if flt.include_deleted else set())
        assert {s for s, _ in few} <= allowed and len(few) == 5
