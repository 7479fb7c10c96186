"""KNN timings per filter field through SqliteVecStore vs numpy brute force (k=10, 384-d).

Usage: python scripts/bench_filters.py [N ...]   (default 10000 100000)
"""

import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta

import numpy as np

from mcp_memory_core import Memory, MemoryFilter, MemoryType
from mcp_memory_sqlite_vec import SqliteVecStore

D = 384


def med(fn, r=7):
    fn()
    ts = []
    for _ in range(r):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts)


for n in [int(a) for a in sys.argv[1:]] or [10000, 100000]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, D)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    types = list(MemoryType)
    mems = [
        Memory(
            content=f"m{i}",
            created_at=t0 + timedelta(seconds=i),
            type=types[i % 4],
            tags=(f"t{i % 10}", f"r{i % 100}"),
            metadata={"g": i % 10, "h": i % 100},
        )
        for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        s = SqliteVecStore(f"{tmp}/b.db")
        s.open("bench", D)
        t = time.perf_counter()
        for a in range(0, n, 2000):
            s.insert(mems[a : a + 2000], X[a : a + 2000])
        print(f"n={n}: insert {time.perf_counter() - t:.1f}s", flush=True)
        q = rng.standard_normal(D).astype(np.float32)
        q /= np.linalg.norm(q)
        tcode = np.array([i % 4 for i in range(n)])
        g = np.arange(n) % 10
        h = np.arange(n) % 100
        cases = [
            ("no filter", MemoryFilter(), np.ones(n, bool)),
            ("type (25%)", MemoryFilter(types=frozenset({types[1]})), tcode == 1),
            ("tag 10%", MemoryFilter(tags_any=frozenset({"t3"})), g == 3),
            ("tag 1%", MemoryFilter(tags_any=frozenset({"r7"})), h == 7),
            ("metadata 10%", MemoryFilter(metadata=(("g", 3),)), g == 3),
            ("metadata 1%", MemoryFilter(metadata=(("h", 7),)), h == 7),
            (
                "created last 10%",
                MemoryFilter(created_after=t0 + timedelta(seconds=int(n * 0.9))),
                np.arange(n) >= int(n * 0.9),
            ),
        ]
        for label, where, mask in cases:
            ms = med(lambda s=s, q=q, where=where: s.knn(q, 10, where))
            idx = np.flatnonzero(mask)

            def brute(X=X, idx=idx, q=q):  # type: ignore[no-untyped-def]
                sims = X[idx] @ q
                top = np.argpartition(-sims, 10)[:10]
                return idx[top[np.argsort(-sims[top])]]

            exp = brute()
            got = [
                int(m[1:])
                for m in (
                    s.get([i for i, _ in s.knn(q, 10, where)])[i].content for i, _ in s.knn(q, 10, where)
                )
            ]
            print(
                f"  {label:18s} store {ms:7.1f} ms   numpy(mask given) {med(brute):6.1f} ms   same={list(exp) == got}",
                flush=True,
            )
        s.close()
