"""Measure KNN-with-filter strategies for sqlite-vec 0.1.9 (the numbers behind SqliteVecStore's design).

Usage: python scripts/bench_knn_filter.py [N ...]   (default 10000 100000)
Compares, for k=10, 384-d cosine, 90 % live rows in the queried namespace out of 2 namespaces:
  meta   vec0 metadata columns (namespace, deleted, superseded) filtered inside the KNN
  store  SqliteVecStore.knn end to end (integer namespace id + deleted/superseded metadata columns)
  part   namespace as partition key + deleted/superseded metadata columns
  rowin  plain vec0 + ``rowid IN (SELECT rowid FROM memories WHERE ...)``
  none   unfiltered vec0 KNN (lower bound) and numpy brute force (reference)
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
import sqlean as sqlite3
import sqlite_vec

DIMS = 384


def median_ms(fn, repeat: int = 9) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def store_ms(vecs, ns, deleted, superseded, q) -> float:  # type: ignore[no-untyped-def]
    """Median ms of SqliteVecStore.knn(k=10, default namespace, no tombstones) over the same data."""
    import tempfile
    from datetime import UTC, datetime

    from mcp_memory_core import Memory, MemoryFilter
    from mcp_memory_sqlite_vec import SqliteVecStore

    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteVecStore(f"{tmp}/bench.db")
        store.open("bench", DIMS)
        t0 = datetime(2024, 1, 1, tzinfo=UTC)
        memories = [
            Memory(
                content=f"m{i}",
                namespace=str(ns[i]),
                deleted_at=t0 if deleted[i] else None,
                superseded_by="x" if superseded[i] else None,
            )
            for i in range(len(vecs))
        ]
        store.insert(memories, vecs)
        where = MemoryFilter()
        ms = median_ms(lambda: store.knn(q, 10, where))
        store.close()
    return ms


def main(sizes: list[int]) -> None:
    rng = np.random.default_rng(0)
    for n in sizes:
        bench_one(n, rng)


def bench_one(n: int, rng: np.random.Generator) -> None:
    vecs = rng.standard_normal((n, DIMS)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ns = np.where(rng.random(n) < 0.9, "default", "other")
    deleted = (rng.random(n) < 0.1).astype(int)
    superseded = (rng.random(n) < 0.1).astype(int)
    q = vecs[0] + 0.1 * rng.standard_normal(DIMS).astype(np.float32)
    q = (q / np.linalg.norm(q)).astype(np.float32)
    con = sqlite3.connect(":memory:")
    con.enable_load_extension(True)
    sqlite_vec.load(con)
    con.execute(
        "create table memories(rowid integer primary key, namespace text, deleted int, superseded int)"
    )
    con.execute(f"create virtual table v_plain using vec0(embedding float[{DIMS}] distance_metric=cosine)")
    con.execute(
        f"create virtual table v_meta using vec0(embedding float[{DIMS}] distance_metric=cosine,"
        " namespace text, deleted integer, superseded integer)"
    )
    con.execute(
        f"create virtual table v_part using vec0(embedding float[{DIMS}] distance_metric=cosine,"
        " namespace text partition key, deleted integer, superseded integer)"
    )
    rows = [(i + 1, str(ns[i]), int(deleted[i]), int(superseded[i])) for i in range(n)]
    con.executemany("insert into memories values (?,?,?,?)", rows)
    blobs = [(i + 1, vecs[i].tobytes()) for i in range(n)]
    con.executemany("insert into v_plain(rowid, embedding) values (?,?)", blobs)
    full = [(i + 1, vecs[i].tobytes(), *rows[i][1:]) for i in range(n)]
    con.executemany(
        "insert into v_meta(rowid, embedding, namespace, deleted, superseded) values (?,?,?,?,?)", full
    )
    con.executemany(
        "insert into v_part(rowid, embedding, namespace, deleted, superseded) values (?,?,?,?,?)", full
    )
    con.commit()
    qb = q.tobytes()
    mask = (ns == "default") & (deleted == 0)
    sub = vecs[mask]

    def brute() -> None:
        sims = sub @ q
        np.argpartition(-sims, 10)[:10]

    res = {
        "none": lambda: con.execute(
            "select rowid, distance from v_plain where embedding match ? and k = 10", (qb,)
        ).fetchall(),
        "meta": lambda: con.execute(
            "select rowid, distance from v_meta where embedding match ? and k = 10"
            " and namespace = 'default' and deleted = 0",
            (qb,),
        ).fetchall(),
        "part": lambda: con.execute(
            "select rowid, distance from v_part where embedding match ? and k = 10"
            " and namespace = 'default' and deleted = 0",
            (qb,),
        ).fetchall(),
        "rowin": lambda: con.execute(
            "select rowid, distance from v_plain where embedding match ? and k = 10 and rowid in"
            " (select rowid from memories where namespace = 'default' and deleted = 0)",
            (qb,),
        ).fetchall(),
    }
    out = {name: median_ms(fn) for name, fn in res.items()}
    out["store"] = store_ms(vecs, ns, deleted, superseded, q)
    out["numpy"] = median_ms(brute)
    a = [r[0] for r in res["meta"]()]
    b = [r[0] for r in res["rowin"]()]
    c = [r[0] for r in res["part"]()]
    assert a == b == c, (a, b, c)
    print(f"n={n:>7}: " + "  ".join(f"{k} {v:7.2f} ms" for k, v in out.items()), flush=True)
    con.close()


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [10_000, 100_000])
