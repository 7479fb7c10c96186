"""Where a search's time goes, without the model: each engine stage and store call, p50 per search.

The query vectors are embedded once and served from a cache, so what is timed is the engine's own
work (the sources, thread expansion, ranker, floor, access statistics), which a noisy shared machine
disturbs far less than the model. Two stores, as the latency benchmarks build them
(``tests/bench/synthetic.py``):

- ``1k``: 1,000 ``fact_sentences`` imported through the engine, in threads of 20. They carry no
  speaker label, so no thread expansion runs.
- ``100k``: 100,000 clustered vectors with ``texts`` ("Ada: … (note N)", turns of two speakers)
  in threads of 20: every search expands the threads of its leading candidates (the worst case).

    uv run python benchmarks/search_parts.py --size 1k [--searches 300]

Run it on two checkouts one after the other to compare them; the 100k store is built in a
temporary directory each run (about 30 s).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "bench"))

from synthetic import clustered, fact_sentences, fill  # noqa: E402

from mcp_memory_core import Memory, MemoryEngine  # noqa: E402
from mcp_memory_minilm.embedder import MiniLMEmbedder  # noqa: E402
from mcp_memory_rankers import HybridRanker  # noqa: E402
from mcp_memory_sqlite_vec.store import SqliteVecStore  # noqa: E402

QUERIES = [
    "what does the user prefer for testing",
    "which database do we use",
    "how do we deploy the service",
    "what did Alice say about the release",
    "deadline for the release",
    "favourite food",
]
STORE_CALLS = ("knn", "keyword_search", "thread_neighbours", "get", "record_access")
ENGINE_STAGES = ("_gather", "_with_neighbours", "_above_floor", "_rerank", "_record_access")


def build(size: str, directory: Path, embedder: MiniLMEmbedder) -> MemoryEngine:
    path = directory / f"parts-{size}.db"
    if size == "100k":
        store = SqliteVecStore(path)
        store.open(embedder.model_id, embedder.dimensions)
        fill(store, clustered(100_000, embedder.dimensions))
        store.close()
    engine = MemoryEngine(SqliteVecStore(path), embedder, HybridRanker())
    engine.warm()
    if size == "1k":
        texts = fact_sentences(1)
        engine.import_memories(Memory(content=next(texts), thread=f"session {i // 20}") for i in range(1000))
    return engine


def timed(times: dict[str, list[float]], owner: Any, name: str) -> None:
    """Replace ``owner.name`` by a wrapper that records its wall time in ``times[name]``."""
    inner: Callable[..., Any] | None = getattr(owner, name, None)
    if inner is None:
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            times[name].append((time.perf_counter() - started) * 1000)

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["1k", "100k"], default="1k")
    parser.add_argument("--searches", type=int, default=300)
    args = parser.parse_args()
    embedder = MiniLMEmbedder()
    embedder.load()
    with tempfile.TemporaryDirectory() as tmp:
        engine = build(args.size, Path(tmp), embedder)
        vectors = {q: embedder.embed_query(q) for q in QUERIES}
        engine.embedder.embed_query = vectors.__getitem__  # type: ignore[method-assign]
        # the engine's embedding batches ask an embedder that batches queries for several at once
        engine.embedder.embed_queries = lambda texts: np.stack([vectors[t] for t in texts])  # type: ignore[method-assign]
        times: dict[str, list[float]] = collections.defaultdict(list)
        for name in STORE_CALLS:
            timed(times, engine.store, name)
        timed(times, engine.ranker, "rank")
        for name in ENGINE_STAGES:
            timed(times, engine, name)
        queries = itertools.cycle(QUERIES)
        for _ in range(30):  # warm-up
            engine.search_memories(next(queries), limit=10)
        times.clear()
        total = []
        for _ in range(args.searches):
            started = time.perf_counter()
            engine.search_memories(next(queries), limit=10)
            total.append((time.perf_counter() - started) * 1000)
        engine.close()
    print(
        f"{args.size}: search without the model p50 {statistics.median(total):.2f} ms ({args.searches} searches)"
    )
    for name, values in times.items():
        calls = len(values) / args.searches
        # per call kind: a store call made twice a search (the channel, then the neighbours) is
        # reported per occurrence, first and second
        per = [values[i :: round(calls)] for i in range(round(calls))] if calls >= 1 else [values]
        medians = " / ".join(f"{statistics.median(v):.2f}" for v in per if v)
        print(f"  {name}: p50 {medians} ms, {calls:.1f} calls a search")


if __name__ == "__main__":
    main()
