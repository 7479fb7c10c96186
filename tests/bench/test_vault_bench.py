"""The markdown vault at 10k notes against the sqlite-vec store holding the same 10k memories, real
MiniLM in both, measured in the same run:

- first index: a vault of 10k notes indexed from nothing vs the same memories imported into SQLite
  (both embed every text);
- a call when nothing changed: the refresh every engine call makes first (inotify, and the scan used
  without it) vs a search on the sqlite-vec store;
- one note edited: the next refresh (read, parse, embed one text, index) vs store_memory on SQLite;
- search p50: the vault's engine (refresh included) vs the sqlite-vec engine.

    OPENBLAS_NUM_THREADS=1 uv run pytest tests/bench/test_vault_bench.py --benchmark-only -s -p no:cacheprovider
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from synthetic import fact_sentences, median_ms

from mcp_memory_core import Memory, MemoryEngine
from mcp_memory_markdown import MarkdownStore
from mcp_memory_markdown.layout import free_path, note_name
from mcp_memory_markdown.notes import render_note
from mcp_memory_minilm.embedder import MiniLMEmbedder
from mcp_memory_rankers import HybridRanker
from mcp_memory_sqlite_vec.store import SqliteVecStore

SIZE = 10_000
QUERIES = ["what does the user prefer", "which database", "how do we deploy", "Alice tests"]
FOLDERS = ["Concepts", "Skills", "Reflections", "Projects"]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    root = Path(tmp_path_factory.mktemp("vault-bench"))
    embedder = MiniLMEmbedder()
    embedder.load()
    texts = fact_sentences(7)
    memories = [Memory(content=next(texts), namespace="bench") for _ in range(SIZE)]
    vault = root / "vault"
    taken: set[str] = set()
    for i, memory in enumerate(memories):
        # Named as the store names a new note (first words; "name 2.md" when taken): one file each.
        relative = free_path(FOLDERS[i % len(FOLDERS)], note_name(memory.content), taken)
        taken.add(relative)
        (vault / relative).parent.mkdir(parents=True, exist_ok=True)
        (vault / relative).write_text(render_note(memory), encoding="utf-8")

    sqlite = MemoryEngine(SqliteVecStore(root / "bench.db"), embedder, HybridRanker(), namespace="bench")
    sqlite.open()
    started = time.perf_counter()
    sqlite.import_memories(memories)
    sqlite_s = time.perf_counter() - started

    store = MarkdownStore(vault, namespace="bench", owner="local")
    markdown = MemoryEngine(store, embedder, HybridRanker(), namespace="bench")
    markdown.open()
    started = time.perf_counter()
    report = markdown.refresh()
    vault_s = time.perf_counter() - started
    assert report.indexed == SIZE and not report.problems
    print(
        f"\nfirst index of {SIZE} notes: vault {vault_s:.1f} s ({SIZE / vault_s:.0f}/s); sqlite-vec import "
        f"{sqlite_s:.1f} s ({SIZE / sqlite_s:.0f}/s); ratio {vault_s / sqlite_s:.2f}"
    )
    yield {
        "sqlite": sqlite,
        "markdown": markdown,
        "store": store,
        "vault": vault,
        "first": (vault_s, sqlite_s),
        "memories": memories,
    }
    sqlite.close()
    markdown.close()


def report(benchmark: pytest.FixtureRequest, name: str, ours_ms: float, base_ms: float, base: str) -> None:
    ratio = ours_ms / base_ms
    benchmark.extra_info.update({f"{name}_ms": ours_ms, f"{base}_ms": base_ms, "ratio": ratio})
    print(f"\n{name} at {SIZE} notes: {ours_ms:.3f} ms; {base} {base_ms:.3f} ms; ratio {ratio:.3f}")


def test_first_index(benchmark: pytest.FixtureRequest, setup: dict[str, object]) -> None:
    vault_s, sqlite_s = setup["first"]  # type: ignore[misc]
    benchmark.pedantic(lambda: None, rounds=1)
    report(benchmark, "first_index", vault_s * 1000, sqlite_s * 1000, "sqlite_vec_import")


def test_refresh_with_nothing_changed(benchmark: pytest.FixtureRequest, setup: dict[str, object]) -> None:
    sqlite: MemoryEngine = setup["sqlite"]  # type: ignore[assignment]
    markdown: MemoryEngine = setup["markdown"]  # type: ignore[assignment]
    vault: Path = setup["vault"]  # type: ignore[assignment]
    queries = itertools.cycle(QUERIES)
    base = median_ms(lambda: sqlite.search_memories(next(queries), limit=10), rounds=40)
    watched = median_ms(markdown.refresh, rounds=200)
    report(benchmark, "refresh_inotify", watched, base, "sqlite_vec_search")
    scanning = MarkdownStore(vault, namespace="bench", owner="local", watch=False)
    engine = MemoryEngine(scanning, markdown.embedder, HybridRanker(), namespace="bench")
    engine.open()
    try:
        engine.refresh()  # the first call of a process always scans
        scanned = median_ms(engine.refresh, rounds=20)
        benchmark.pedantic(engine.refresh, rounds=5)
    finally:
        engine.close()
    report(benchmark, "refresh_scan", scanned, base, "sqlite_vec_search")


def test_one_note_edited(benchmark: pytest.FixtureRequest, setup: dict[str, object]) -> None:
    sqlite: MemoryEngine = setup["sqlite"]  # type: ignore[assignment]
    markdown: MemoryEngine = setup["markdown"]  # type: ignore[assignment]
    store: MarkdownStore = setup["store"]  # type: ignore[assignment]
    memories: list[Memory] = setup["memories"]  # type: ignore[assignment]
    texts = fact_sentences(11)
    base = median_ms(lambda: sqlite.store_memory(next(texts)), rounds=30)
    notes = itertools.cycle(memories[:30])
    times = []
    for _ in range(30):
        memory = next(notes)
        path = store.path_of(memory.id)
        assert path is not None
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("(note", "(edited note", 1), encoding="utf-8")
        started = time.perf_counter()
        result = markdown.refresh()
        times.append(time.perf_counter() - started)
        assert result.indexed == 1
    times.sort()
    ours = times[len(times) // 2] * 1000
    benchmark.pedantic(lambda: None, rounds=1)
    report(benchmark, "one_note_edited_refresh", ours, base, "sqlite_vec_store_memory")


def test_search_p50(benchmark: pytest.FixtureRequest, setup: dict[str, object]) -> None:
    sqlite: MemoryEngine = setup["sqlite"]  # type: ignore[assignment]
    markdown: MemoryEngine = setup["markdown"]  # type: ignore[assignment]
    queries = itertools.cycle(QUERIES)
    for _ in range(8):  # both warm
        sqlite.search_memories(next(queries), limit=10)
        markdown.search_memories(next(queries), limit=10)
    base = median_ms(lambda: sqlite.search_memories(next(queries), limit=10), rounds=60)
    ours = median_ms(lambda: markdown.search_memories(next(queries), limit=10), rounds=60)
    benchmark.pedantic(lambda: markdown.search_memories(next(queries), limit=10), rounds=10)
    report(benchmark, "search", ours, base, "sqlite_vec_search")
