"""Synthetic memories for search benchmarks: clustered unit vectors and short texts, written straight
through the store (no embedder), so 100k rows build in seconds and 1M in minutes.

Vectors: ``CENTRES`` gaussian centres in ``dims`` dimensions, each point a centre plus gaussian noise,
normalized (cosine to its own centre ≈ 0.7, to another cluster's points ≈ 0). Queries are perturbed
data points (cosine ≈ 0.9 to the point they came from), so each has a clear nearest neighbour and a
cluster of near-ties behind it: a hard case for quantized search.
"""

from __future__ import annotations

import itertools
import random
import statistics
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import numpy as np

from mcp_memory_core import Memory, MemoryType
from mcp_memory_sqlite_vec.store import SqliteVecStore

CENTRES = 200
NOISE = 0.045  # per dimension, against unit-norm-ish centres (centre entries ~ N(0, 1/dims))
QUERY_NOISE = 0.02
BATCH = 5_000
THREAD_SIZE = 20  # memories per conversation: a thread, as MCP sessions store them
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
    "river",
    "stone",
    "cloud",
    "lamp",
]
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def clustered(n: int, dims: int = 384, seed: int = 0) -> np.ndarray:
    """``n`` float32 unit vectors around ``CENTRES`` gaussian centres (generated in 100k chunks)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((CENTRES, dims)).astype(np.float32) / np.float32(np.sqrt(dims))
    out = np.empty((n, dims), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        chunk = centres[rng.integers(0, CENTRES, stop - start)]
        chunk += NOISE * rng.standard_normal((stop - start, dims), dtype=np.float32)
        chunk /= np.linalg.norm(chunk, axis=1, keepdims=True)
        out[start:stop] = chunk
    return out


def queries(data: np.ndarray, n: int, seed: int = 1) -> np.ndarray:
    """``n`` perturbed copies of random data points, normalized."""
    rng = np.random.default_rng(seed)
    q = data[rng.integers(0, len(data), n)] + QUERY_NOISE * rng.standard_normal(
        (n, data.shape[1]), dtype=np.float32
    )
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q.astype(np.float32)


SPEAKERS = ("Ada", "Ben")  # two speakers taking turns: every text is a turn of a conversation


def texts(n: int, seed: int = 2) -> Iterator[str]:
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(WORDS), (n, 6))
    for i, row in enumerate(picks):
        yield f"{SPEAKERS[i % 2]}: " + " ".join(WORDS[j] for j in row) + f" (note {i})"


def fill(store: SqliteVecStore, vectors: np.ndarray, *, batch: int = BATCH, first: int = 0) -> float:
    """Insert one memory per vector row (one transaction per ``batch``; ids and times numbered from
    ``first``); returns seconds taken."""
    started = time.perf_counter()
    types = list(MemoryType)
    words = texts(len(vectors))
    for start in range(first, first + len(vectors), batch):
        stop = min(first + len(vectors), start + batch)
        memories = [
            Memory.model_construct(
                id=f"m{i:08d}",
                content=next(words),
                metadata={},
                created_at=T0 + timedelta(seconds=i),
                updated_at=T0 + timedelta(seconds=i),
                occurred_at=T0 + timedelta(seconds=i),
                thread=f"conversation {i // THREAD_SIZE}",  # search brings each hit's neighbours
                superseded_by=None,
                deleted_at=None,
                namespace="default",
                type=types[i % len(types)],
                tags=(),
                importance=0.5,
                pinned=False,
                access_count=0,
                last_accessed=None,
            )
            for i in range(start, stop)
        ]
        with store.transaction():
            store.insert(memories, vectors[start - first : stop - first])
    return time.perf_counter() - started


def exact_top_k(data: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    """Exact top-k row indices (one vector per memory): the numpy brute-force baseline."""
    sims = data @ query
    part = np.argpartition(-sims, k - 1)[:k]
    out: np.ndarray = part[np.argsort(-sims[part])]
    return out


SUBJECTS = ["The user", "The team", "Alice", "The build", "Our API", "The database", "Bob", "The client"]
VERBS = ["prefers", "uses", "avoids", "needs", "deploys", "tests", "migrated to", "documents", "fixed"]
OBJECTS = [
    "pytest",
    "dark mode",
    "PostgreSQL 16",
    "tabs",
    "Rust for the parser",
    "weekly releases",
    "the blue theme",
    "type hints",
    "uv for packaging",
    "small pull requests",
    "Kubernetes",
    "SQLite",
]
WHEN = ["on Mondays", "since March", "for the mobile app", "in staging", "after the outage", ""]


def fact_sentences(seed: int) -> Iterator[str]:
    """Short memory-like facts ("The team uses pytest since March (note 7)."), endless, reproducible."""
    rng = random.Random(seed)
    for i in itertools.count():
        yield f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(WHEN)} (note {i})."


def median_ms(fn: Callable[[], object], rounds: int = 40) -> float:
    """Median wall time of ``fn`` over ``rounds`` calls, in milliseconds."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000
