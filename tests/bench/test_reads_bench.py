"""Reads that used to decode every memory, at 20k memories in SQLite, each against a read of the same
store measured in the same run:

- ``get_memory`` by the first 8 characters of an id (what a person types from the CLI's or the UI's
  short ids) against ``get_memory`` by the whole id;
- the web UI's tag counts (``tag_counts``: every tag of the memories a scope may read) against
  counting those memories (``count``: one ``count(*)``).

    pytest tests/bench/test_reads_bench.py --benchmark-only -s

Both asked the engine to read and decode every readable memory before the store matched prefixes
(``MemoryFilter.id_prefix``) and counted tags (``TagCounting``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from synthetic import median_ms

from mcp_memory_core import Memory, MemoryEngine
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_sqlite_vec.store import SqliteVecStore
from mcp_memory_testing import HashEmbedder

SIZE = 20_000
BATCH = 2_000
T0 = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryEngine]:
    path = Path(tmp_path_factory.mktemp("reads")) / "reads.db"
    embedder = HashEmbedder()
    engine = MemoryEngine(SqliteVecStore(path), embedder, SimilarityRanker())
    engine.warm()
    rng = np.random.default_rng(0)
    for start in range(0, SIZE, BATCH):
        when = [T0 + timedelta(seconds=i) for i in range(start, start + BATCH)]
        memories = [
            Memory(
                content=f"note {i} about topic {i % 97}",
                tags=(f"topic-{i % 20}", f"team-{i % 7}"),
                created_at=t,
                updated_at=t,
                occurred_at=t,
            )
            for i, t in zip(range(start, start + BATCH), when, strict=True)
        ]
        vectors = rng.standard_normal((BATCH, embedder.dimensions)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        engine.store.insert(memories, vectors)
    yield engine
    engine.close()


def report(benchmark: pytest.FixtureRequest, name: str, ours_ms: float, floor_ms: float, floor: str) -> None:
    ratio = ours_ms / floor_ms
    benchmark.extra_info.update({f"{name}_p50_ms": ours_ms, f"{floor}_p50_ms": floor_ms, "ratio": ratio})
    print(f"\n{name} at {SIZE} memories: p50 {ours_ms:.2f} ms; {floor} {floor_ms:.2f} ms; ratio {ratio:.1f}")


def test_get_by_id_prefix_vs_whole_id(benchmark: pytest.FixtureRequest, engine: MemoryEngine) -> None:
    ids = _some_ids(engine)
    prefixes = [i[:8] for i in ids]
    assert all(engine.get_memory(p).memory.id == i for p, i in zip(prefixes, ids, strict=True))
    whole = iter(ids * 10)
    short = iter(prefixes * 10)
    floor = median_ms(lambda: engine.get_memory(next(whole)), rounds=40)
    ours = median_ms(lambda: engine.get_memory(next(short)), rounds=40)
    benchmark.pedantic(lambda: engine.get_memory(next(short)), rounds=10)
    report(benchmark, "get_memory by 8 characters", ours, floor, "get_memory by the whole id")


def test_tag_counts_vs_counting_the_memories(benchmark: pytest.FixtureRequest, engine: MemoryEngine) -> None:
    counts = engine.tag_counts(None)
    assert counts["topic-0"] == SIZE // 20 and counts["team-0"] == -(-SIZE // 7)
    floor = median_ms(lambda: engine.count(None), rounds=10)
    ours = median_ms(lambda: engine.tag_counts(None), rounds=10)
    benchmark.pedantic(lambda: engine.tag_counts(None), rounds=5)
    report(benchmark, "tag_counts", ours, floor, "count")


def _some_ids(engine: MemoryEngine) -> list[str]:
    """Ids spread over the oldest 500 memories: every 10th."""
    return [m.id for m in engine.list_memories(limit=500, order="oldest").memories][::10]
