"""PostgreSQL + pgvector against the SQLite store and against PostgreSQL's own exact scan (issue 14),
every figure a ratio to a baseline measured in the same run, on a real PostgreSQL 16 started by the
tests (``mcp_memory_testing.postgres``):

(a) bulk import of 100k memories with their vectors into an empty store (``store.insert`` in batches
    of 5,000 inside ``bulk_load``, as ``mcp-memory import`` does: the HNSW index is dropped and built
    again at the end, the build included), memories per second, against the SQLite store; then 5,000
    more into the 100k store (the index kept and maintained row by row);
(b) KNN k=10 at 100k: p50 through the HNSW index, against PostgreSQL's exact scan of the same rows
    and against the SQLite store (its vector cache); recall@10 of the index against exact numpy;
(c) ``engine.store_memory`` p50 with 20 clients (threads) at once, real MiniLM, against the same on
    SQLite.

    pytest tests/bench/test_postgres_bench.py --benchmark-only -s

Figures are printed and kept in ``benchmark.extra_info``; no wall-clock thresholds.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mcp_memory_core import MemoryEngine, MemoryFilter
from mcp_memory_minilm.embedder import MiniLMEmbedder
from mcp_memory_postgres import PostgresStore
from mcp_memory_rankers import HybridRanker
from mcp_memory_sqlite_vec.store import SqliteVecStore

sys.path.insert(0, str(Path(__file__).parent))
from synthetic import clustered, exact_top_k, fact_sentences, fill, median_ms, queries

K = 10
SIZE = 100_000
DIMS = 384
MODEL = "bench-model"
CLIENTS = 20
STORES_PER_CLIENT = 5
ADDED = 5_000


def test_postgres_import_and_knn_at_100k(
    benchmark: pytest.FixtureRequest, postgres_url: str, tmp_path: Path
) -> None:
    data = clustered(SIZE, DIMS)
    sqlite = SqliteVecStore(tmp_path / "bench.db")
    sqlite.open(MODEL, DIMS)
    sqlite_s = fill(sqlite, data)  # type: ignore[arg-type]
    postgres = PostgresStore(postgres_url)
    postgres.open(MODEL, DIMS)
    began = time.perf_counter()
    with postgres.bulk_load(SIZE):
        load_s = fill(postgres, data)  # type: ignore[arg-type]
    postgres_s = time.perf_counter() - began
    with postgres._connection() as conn:
        conn.execute("ANALYZE mcp_memory.memories")
        conn.execute("ANALYZE mcp_memory.passages")
    exact = PostgresStore(postgres_url, exact_rows=10**9)
    exact.open(MODEL, DIMS)
    breadths = {ef: PostgresStore(postgres_url, ef_search=ef) for ef in (40, 100, 200, 400)}  # 40: pgvector's
    for store in breadths.values():
        store.open(MODEL, DIMS)

    qv = queries(data, 64)
    where = MemoryFilter()
    cycle = itertools.cycle(qv)
    truth = [{f"m{j:08d}" for j in exact_top_k(data, q, K)} for q in qv[:50]]

    def recall_of(store: PostgresStore) -> float:
        return float(
            np.mean(
                [len({i for i, _ in store.knn(q, K, where)} & t) / K for q, t in zip(qv, truth, strict=False)]
            )
        )

    recall = recall_of(postgres)
    by_breadth = {
        ef: (recall_of(store), median_ms(lambda store=store: store.knn(next(cycle), K, where)))  # type: ignore[misc]
        for ef, store in breadths.items()
    }
    agree = float(
        np.mean([postgres.knn(q, K, where) == exact.knn(q, K, where) for q in qv[:10]])
    )  # same ids, same order, same similarities
    sqlite.knn(qv[0], K, where)  # load the vector cache
    index_ms = median_ms(lambda: postgres.knn(next(cycle), K, where))
    exact_ms = median_ms(lambda: exact.knn(next(cycle), K, where), rounds=10)
    sqlite_ms = median_ms(lambda: sqlite.knn(next(cycle), K, where))
    keyword_ms = median_ms(lambda: postgres.keyword_search("alpha omega river", K, where))
    sqlite_keyword_ms = median_ms(lambda: sqlite.keyword_search("alpha omega river", K, where))
    benchmark.pedantic(lambda: postgres.knn(next(cycle), K, where), rounds=20)
    more = clustered(SIZE + ADDED, DIMS)[SIZE:]  # last: the figures above are of exactly 100k
    sqlite_added_s = fill(sqlite, more, first=SIZE)  # type: ignore[arg-type]
    with postgres.bulk_load(ADDED):  # fewer than the stored rows: the index is kept
        postgres_added_s = fill(postgres, more, first=SIZE)  # type: ignore[arg-type]
    info = {
        "import_rate_postgres": SIZE / postgres_s,
        "import_rows_s_postgres": load_s,
        "import_index_build_s_postgres": postgres_s - load_s,
        "import_rate_sqlite": SIZE / sqlite_s,
        "added_rate_postgres": ADDED / postgres_added_s,
        "added_rate_sqlite": ADDED / sqlite_added_s,
        "knn_index_p50_ms": index_ms,
        "knn_exact_p50_ms": exact_ms,
        "knn_sqlite_p50_ms": sqlite_ms,
        "recall_at_10": recall,
        **{f"recall_at_10_ef{ef}": r for ef, (r, _) in by_breadth.items()},
        **{f"knn_index_ef{ef}_p50_ms": ms for ef, (_, ms) in by_breadth.items()},
        "keyword_p50_ms": keyword_ms,
        "keyword_sqlite_p50_ms": sqlite_keyword_ms,
    }
    benchmark.extra_info.update(info)
    print(
        f"\nimport 100k: PostgreSQL {SIZE / postgres_s:.0f}/s ({load_s:.1f} s rows + "
        f"{postgres_s - load_s:.1f} s index build), SQLite {SIZE / sqlite_s:.0f}/s (ratio {sqlite_s / postgres_s:.2f})"
        f"\n{ADDED} more into 100k: PostgreSQL {ADDED / postgres_added_s:.0f}/s (index maintained), "
        f"SQLite {ADDED / sqlite_added_s:.0f}/s (ratio {sqlite_added_s / postgres_added_s:.2f})"
        f"\nknn k={K} at 100k: HNSW p50 {index_ms:.2f} ms; PostgreSQL exact scan {exact_ms:.1f} ms "
        f"(ratio {index_ms / exact_ms:.3f}); SQLite store {sqlite_ms:.2f} ms (ratio {index_ms / sqlite_ms:.2f}); "
        f"HNSW recall@10 {recall:.3f}; index = exact answer on {agree:.0%} of 10 queries"
        + "".join(
            f"\n  hnsw.ef_search {ef}: recall@10 {r:.3f}, p50 {ms:.2f} ms"
            for ef, (r, ms) in by_breadth.items()
        )
        + f"\nkeyword search at 100k: PostgreSQL p50 {keyword_ms:.2f} ms, SQLite {sqlite_keyword_ms:.2f} ms "
        f"(ratio {keyword_ms / sqlite_keyword_ms:.2f})"
    )
    for store in (postgres, exact, sqlite, *breadths.values()):
        store.close()


def concurrent_store_p50(engine: MemoryEngine) -> float:
    """p50 of ``store_memory`` while CLIENTS threads store STORES_PER_CLIENT memories each at once."""
    times: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(CLIENTS)
    texts = fact_sentences(7)
    contents = [[f"{next(texts)} (client {c})" for _ in range(STORES_PER_CLIENT)] for c in range(CLIENTS)]

    def client(c: int) -> None:
        start.wait()
        for content in contents[c]:
            began = time.perf_counter()
            engine.store_memory(content)
            with lock:
                times.append(time.perf_counter() - began)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(times) == CLIENTS * STORES_PER_CLIENT
    return statistics.median(times) * 1000


def test_store_p50_with_20_clients(
    benchmark: pytest.FixtureRequest, postgres_url: str, tmp_path: Path
) -> None:
    embedder = MiniLMEmbedder()
    embedder.load()

    def engine_on(make: Callable[[], object]) -> MemoryEngine:
        engine = MemoryEngine(make(), embedder, HybridRanker())  # type: ignore[arg-type]
        engine.warm()
        engine.store_memory("warm-up: the first write of each engine")
        return engine

    sqlite = engine_on(lambda: SqliteVecStore(tmp_path / "clients.db"))
    postgres = engine_on(lambda: PostgresStore(postgres_url))
    sqlite_ms = concurrent_store_p50(sqlite)
    postgres_ms = concurrent_store_p50(postgres)
    assert postgres.count() == sqlite.count() == 1 + CLIENTS * STORES_PER_CLIENT  # every write landed
    benchmark.pedantic(lambda: postgres.store_memory("one more, alone"), rounds=1)
    benchmark.extra_info.update({"postgres_p50_ms": postgres_ms, "sqlite_p50_ms": sqlite_ms})
    print(
        f"\nstore_memory p50 with {CLIENTS} clients at once (real MiniLM): PostgreSQL {postgres_ms:.1f} ms, "
        f"SQLite {sqlite_ms:.1f} ms (ratio {postgres_ms / sqlite_ms:.2f})"
    )
    sqlite.close()
    postgres.close()
