"""Writes with the real parts (sqlite-vec + MiniLM fp32) at 10k memories, each against its physical floor
measured in the same run.

    pytest tests/bench/test_write_bench.py --benchmark-only -s

- Bulk import: 10k short synthetic memories through ``engine.import_memories`` (batched embedding, one
  transaction per batch), in memories/s, against ``embed_documents`` of the same texts in the same batches
  (goal: >= 250 memories/s on 2 cores).
- ``store_memory`` warm p50 at 10k (goal: <= 8 ms) against ``embed_documents([text])`` p50, with the
  parts of a store measured on their own (near-duplicate knn + get, the insert commit) so a miss says where
  the time goes. All ratios are printed and kept in ``extra_info``.
"""

from __future__ import annotations

import itertools
import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from synthetic import fact_sentences as sentences

from mcp_memory_core import Memory, MemoryEngine, MemoryFilter
from mcp_memory_minilm.embedder import MiniLMEmbedder
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_sqlite_vec.store import SqliteVecStore

pytestmark = pytest.mark.model

SIZE = int(os.environ.get("MCP_MEMORY_BENCH_WRITE_SIZE", "10000"))
IMPORT_BATCH = 64  # engine.import_memories' default


@dataclass
class Loaded:
    engine: MemoryEngine
    import_rate: float  # memories/s through engine.import_memories
    embed_rate: float  # texts/s through embed_documents, same texts, same batches


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    path = Path(tmp_path_factory.mktemp("write-bench")) / "bench.db"
    engine = MemoryEngine(SqliteVecStore(path), MiniLMEmbedder(), SimilarityRanker())
    engine.warm()
    texts = list(itertools.islice(sentences(1), SIZE))
    engine.embedder.embed_documents(texts[:IMPORT_BATCH])  # warm-up

    started = time.perf_counter()
    for start in range(0, SIZE, IMPORT_BATCH):
        engine.embedder.embed_documents(texts[start : start + IMPORT_BATCH])
    embed_rate = SIZE / (time.perf_counter() - started)

    memories = [Memory(content=t) for t in texts]
    progress: list[int] = []
    started = time.perf_counter()
    outcome = engine.import_memories(memories, on_batch=progress.append)
    import_rate = SIZE / (time.perf_counter() - started)
    assert outcome.inserted == SIZE and sum(progress) == SIZE
    yield Loaded(engine, import_rate, embed_rate)
    engine.close()


def test_bulk_import_rate(benchmark: pytest.FixtureRequest, loaded: Loaded) -> None:
    ratio = loaded.import_rate / loaded.embed_rate
    benchmark.extra_info.update(  # type: ignore[attr-defined]
        {
            "size": SIZE,
            "import_memories_per_s": loaded.import_rate,
            "embed_documents_texts_per_s": loaded.embed_rate,
            "ratio_import_vs_embed": ratio,
        }
    )
    benchmark.pedantic(lambda: None, rounds=1)  # type: ignore[attr-defined]
    print(
        f"\nimport_memories of {SIZE} short memories: {loaded.import_rate:.0f} memories/s; "
        f"embed_documents alone (same texts, batches of {IMPORT_BATCH}) {loaded.embed_rate:.0f} texts/s; "
        f"ratio {ratio:.2f} (goal >= 250 memories/s)"
    )


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def test_store_memory_p50_at_10k(benchmark: pytest.FixtureRequest, loaded: Loaded) -> None:
    engine = loaded.engine
    store = engine.store
    texts = sentences(2)
    where = MemoryFilter(namespace=engine.namespace, include_superseded=False)
    vector = engine.embedder.embed_query("The user prefers tabs on Mondays (note 7).")
    samples: dict[str, list[float]] = {"store_memory": [], "embed": [], "knn+get": [], "insert": []}

    def knn_and_get() -> None:
        pairs = store.knn(vector, 5, where)
        store.get([memory_id for memory_id, _ in pairs])

    def insert_one() -> None:
        store.insert([Memory(content=next(texts))], vector.reshape(1, -1))

    for _ in range(60):  # interleaved, so a change in machine load hits every part alike
        samples["embed"].append(timed(lambda: engine.embedder.embed_documents([next(texts)])))
        samples["store_memory"].append(timed(lambda: engine.store_memory(next(texts))))
        samples["knn+get"].append(timed(knn_and_get))
        samples["insert"].append(timed(insert_one))
    p50 = {name: statistics.median(values) for name, values in samples.items()}
    benchmark.pedantic(lambda: engine.store_memory(next(texts)), rounds=20)  # type: ignore[attr-defined]
    ratio = p50["store_memory"] / p50["embed"]
    benchmark.extra_info.update(  # type: ignore[attr-defined]
        {
            "size": store.count(MemoryFilter(namespace=None)),
            "store_memory_p50_ms": p50["store_memory"],
            "embed_documents_p50_ms": p50["embed"],
            "knn_and_get_p50_ms": p50["knn+get"],
            "insert_commit_p50_ms": p50["insert"],
            "ratio_store_vs_embed": ratio,
            "store_memory_p90_ms": float(np.percentile(samples["store_memory"], 90)),
        }
    )
    print(
        f"\nstore_memory at {SIZE} memories: p50 {p50['store_memory']:.2f} ms (goal <= 8 ms); "
        f"embed_documents([text]) alone {p50['embed']:.2f} ms; ratio {ratio:.2f}; parts: "
        f"near-duplicate knn(k=5)+get {p50['knn+get']:.2f} ms, insert+commit {p50['insert']:.2f} ms"
    )
