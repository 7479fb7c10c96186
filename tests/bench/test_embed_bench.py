"""MiniLM fp32 against int8 (per-channel dynamic quantization), in the same run: single-query latency
and batch throughput, reported as ratios int8 / fp32.

    pytest tests/bench/test_embed_bench.py --benchmark-only -s

Needs ``mcp-memory-minilm[int8]`` (onnx) for the int8 model; the quantization (once, into a temporary
cache dir) is not timed.
"""

from __future__ import annotations

import itertools
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_memory_minilm.embedder import MiniLMEmbedder

pytestmark = pytest.mark.model

SUBJECTS = ["The user", "The team", "Alice", "The build", "Our API", "The database", "Bob", "The client"]
VERBS = ["prefers", "uses", "avoids", "needs", "deploys", "tests", "migrated to", "documents"]
OBJECTS = ["pytest", "dark mode", "PostgreSQL 16", "tabs", "Rust for the parser", "weekly releases", "SQLite"]
QUERIES = ["what does the user prefer", "which database", "how do we deploy", "Alice tests", "theme?"]
BATCH = 512


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} (note {i})." for i in range(n)]


@pytest.fixture(scope="module")
def embedders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, MiniLMEmbedder]:
    pytest.importorskip("onnx", reason="the int8 model needs mcp-memory-minilm[int8] (onnx)")
    cache = Path(tmp_path_factory.mktemp("minilm-cache"))
    out = {"fp32": MiniLMEmbedder(), "int8": MiniLMEmbedder(precision="int8", cache_dir=cache)}
    for e in out.values():
        e.load()
        e.embed_documents(texts(64, 0))  # warm the session's allocations
    return out


def median_s(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def test_single_query_int8_vs_fp32(
    benchmark: pytest.FixtureRequest, embedders: dict[str, MiniLMEmbedder]
) -> None:
    queries = itertools.cycle(QUERIES)
    p50: dict[str, list[float]] = {"fp32": [], "int8": []}
    for _ in range(5):  # interleaved blocks, so a change in machine load hits both alike
        for name, e in embedders.items():
            p50[name].append(median_s(lambda e=e: e.embed_query(next(queries)), 40))  # type: ignore[misc]
    fp32 = statistics.median(p50["fp32"]) * 1000
    int8 = statistics.median(p50["int8"]) * 1000
    benchmark.pedantic(lambda: embedders["int8"].embed_query(next(queries)), rounds=20)  # type: ignore[attr-defined]
    ratio = int8 / fp32
    benchmark.extra_info.update({"fp32_p50_ms": fp32, "int8_p50_ms": int8, "ratio_int8_fp32": ratio})  # type: ignore[attr-defined]
    print(f"\nembed_query p50: fp32 {fp32:.2f} ms, int8 {int8:.2f} ms, ratio int8/fp32 {ratio:.2f}")


def test_batch_throughput_int8_vs_fp32(
    benchmark: pytest.FixtureRequest, embedders: dict[str, MiniLMEmbedder]
) -> None:
    batch = texts(BATCH, 1)
    rates: dict[str, list[float]] = {"fp32": [], "int8": []}
    for _ in range(3):
        for name, e in embedders.items():
            started = time.perf_counter()
            e.embed_documents(batch)
            rates[name].append(BATCH / (time.perf_counter() - started))
    fp32 = statistics.median(rates["fp32"])
    int8 = statistics.median(rates["int8"])
    benchmark.pedantic(lambda: embedders["int8"].embed_documents(batch[:64]), rounds=5)  # type: ignore[attr-defined]
    ratio = int8 / fp32
    benchmark.extra_info.update(  # type: ignore[attr-defined]
        {"fp32_texts_per_s": fp32, "int8_texts_per_s": int8, "ratio_int8_fp32": ratio}
    )
    print(
        f"\nembed_documents({BATCH} short texts): fp32 {fp32:.0f}/s, int8 {int8:.0f}/s, "
        f"ratio int8/fp32 {ratio:.2f} (threads {embedders['fp32'].threads})"
    )
