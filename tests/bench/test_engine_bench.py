"""store_memory and search_memories with the real parts (sqlite-vec + MiniLM) at 1k memories, each
against its physical floor measured in the same run: the embedding call alone.

    uv run nox -s bench      (or: pytest tests/bench --benchmark-only -s)

The ratio (engine call / embedding alone) is printed and kept in ``extra_info``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from synthetic import fact_sentences as sentences
from synthetic import median_ms

from mcp_memory_core import Memory, MemoryEngine
from mcp_memory_minilm.embedder import MiniLMEmbedder
from mcp_memory_rankers import HybridRanker
from mcp_memory_sqlite_vec.store import SqliteVecStore

SIZE = 1_000


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryEngine]:
    path = Path(tmp_path_factory.mktemp("bench")) / "bench.db"
    engine = MemoryEngine(SqliteVecStore(path), MiniLMEmbedder(), HybridRanker())  # the default ranker
    engine.warm()
    texts = sentences(1)
    # In threads of 20, as MCP sessions store them: search brings each candidate's neighbours.
    engine.import_memories(Memory(content=next(texts), thread=f"session {i // 20}") for i in range(SIZE))
    yield engine
    engine.close()


def report(benchmark: pytest.FixtureRequest, name: str, ours_ms: float, floor_ms: float, floor: str) -> None:
    ratio = ours_ms / floor_ms
    benchmark.extra_info.update({f"{name}_p50_ms": ours_ms, f"{floor}_p50_ms": floor_ms, "ratio": ratio})
    print(
        f"\n{name} at {SIZE} memories: p50 {ours_ms:.2f} ms; {floor} alone {floor_ms:.2f} ms; ratio {ratio:.2f}"
    )


def test_store_memory_vs_embedding(benchmark: pytest.FixtureRequest, engine: MemoryEngine) -> None:
    texts = sentences(2)
    floor = median_ms(lambda: engine.embedder.embed_documents([next(texts)]), rounds=60)
    ours = median_ms(lambda: engine.store_memory(next(texts)), rounds=60)
    benchmark.pedantic(lambda: engine.store_memory(next(texts)), rounds=20)
    report(benchmark, "store_memory", ours, floor, "embed_documents")


def test_search_memories_vs_embedding(benchmark: pytest.FixtureRequest, engine: MemoryEngine) -> None:
    queries = itertools.cycle(
        ["what does the user prefer", "which database", "how do we deploy", "Alice tests"]
    )
    floor = median_ms(lambda: engine.embedder.embed_query(next(queries)), rounds=60)
    ours = median_ms(lambda: engine.search_memories(next(queries), limit=10), rounds=60)
    benchmark.pedantic(lambda: engine.search_memories(next(queries), limit=10), rounds=20)
    report(benchmark, "search_memories", ours, floor, "embed_query")
