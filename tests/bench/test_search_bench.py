"""Search at scale (issue 5), each figure against a baseline measured in the same run:

(a) ``store.knn`` (vector cache, default mode: float32 at 10k, int8 + exact rerank at 100k) vs numpy
    brute force over the same float32 matrix, at 10k and 100k; the float32 and sign-bit cache modes
    and the vec0 path (cache off) are measured alongside for reference.
(b) ``engine.search_memories`` end to end as shipped (real MiniLM, the default hybrid ranker, keyword
    channel, access tracking on) vs ``embed_query`` + numpy brute force, at 100k. Goal: ratio <= 1.5.
(c) RSS of a fresh process that opens the 100k file, loads the model and searches (VmRSS).
(d) opt-in (``MCP_MEMORY_BENCH_1M=1``): 1M memories, p50 and recall@10 against exact numpy search.

    pytest tests/bench/test_search_bench.py --benchmark-only -s

Figures are printed and kept in ``benchmark.extra_info``; no wall-clock thresholds.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import anyio
import numpy as np
import pytest

from mcp_memory_core import Memory, MemoryEngine, MemoryFilter
from mcp_memory_minilm.embedder import MiniLMEmbedder
from mcp_memory_rankers import HybridRanker
from mcp_memory_sqlite_vec.store import SqliteVecStore

sys.path.insert(0, str(Path(__file__).parent))
from synthetic import clustered, exact_top_k, fill, median_ms, queries
from synthetic import texts as synthetic_texts
from test_startup_first_search_bench import OURS, server_env, timeline

K = 10
TEXT_QUERIES = [
    "what does the user prefer for testing",
    "which database do we use",
    "how do we deploy the service",
    "notes about alpha and omega",
    "river stone cloud",
    "what did Alice say about the release",
]


class Built:
    def __init__(self, path: Path, data: np.ndarray, model_id: str, build_s: float) -> None:
        self.path, self.data, self.model_id, self.build_s = path, data, model_id, build_s


def build(tmp: Path, n: int, model_id: str, dims: int) -> Built:
    path = tmp / f"search-{n}.db"
    data = clustered(n, dims)
    store = SqliteVecStore(path)
    store.open(model_id, dims)
    seconds = fill(store, data)
    store.close()
    print(f"\nbuilt {n} memories in {seconds:.1f} s")
    return Built(path, data, model_id, seconds)


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    e = MiniLMEmbedder()
    e.load()
    return e


@pytest.fixture(scope="module")
def built_100k(tmp_path_factory: pytest.TempPathFactory, embedder: MiniLMEmbedder) -> Built:
    return build(Path(tmp_path_factory.mktemp("bench100k")), 100_000, embedder.model_id, embedder.dimensions)


@pytest.fixture(scope="module")
def built_10k(tmp_path_factory: pytest.TempPathFactory, embedder: MiniLMEmbedder) -> Built:
    return build(Path(tmp_path_factory.mktemp("bench10k")), 10_000, embedder.model_id, embedder.dimensions)


def numpy_floor(data: np.ndarray, qs: Iterator[np.ndarray]) -> Callable[[], object]:
    return lambda: exact_top_k(data, next(qs), K)


@pytest.mark.parametrize("size", ["10k", "100k"])
def test_knn_cache_vs_numpy(
    benchmark: pytest.FixtureRequest, request: pytest.FixtureRequest, size: str
) -> None:
    built: Built = request.getfixturevalue(f"built_{size}")
    qv = queries(built.data, 64)
    where = MemoryFilter()
    store = SqliteVecStore(built.path)
    store.open(built.model_id, built.data.shape[1])
    started = time.perf_counter()
    store.knn(qv[0], K, where)
    load_s = time.perf_counter() - started
    cycle = itertools.cycle(qv)
    floor = median_ms(numpy_floor(built.data, cycle))
    ours = median_ms(lambda: store.knn(next(cycle), K, where))
    plain = SqliteVecStore(built.path, vector_cache=False)
    plain.open(built.model_id, built.data.shape[1])
    vec0 = median_ms(lambda: plain.knn(next(cycle), K, where), rounds=10)
    # same answers as exact numpy (one vector per memory)
    agree = np.mean(
        [
            [i for i, _ in store.knn(q, K, where)] == [f"m{j:08d}" for j in exact_top_k(built.data, q, K)]
            for q in qv[:20]
        ]
    )
    # the coarse mode (sign bits + exact rerank from SQLite) on the same data: its memory/recall trade
    coarse = SqliteVecStore(built.path, coarse_threshold=0)
    coarse.open(built.model_id, built.data.shape[1])
    exact_sets = [{f"m{j:08d}" for j in exact_top_k(built.data, q, K)} for q in qv]
    coarse_recall = float(
        np.mean(
            [
                len({i for i, _ in coarse.knn(q, K, where)} & e) / K
                for q, e in zip(qv, exact_sets, strict=True)
            ]
        )
    )
    coarse_ms = median_ms(lambda: coarse.knn(next(cycle), K, where))
    coarse.close()
    # the float32 mode on the same data (the default below 50k rows): what the int8 rows trade
    exact = SqliteVecStore(built.path, exact_threshold=10**9)
    exact.open(built.model_id, built.data.shape[1])
    float32_ms = median_ms(lambda: exact.knn(next(cycle), K, where))
    exact.close()
    mode = store.vector_cache.mode if store.vector_cache is not None else "off"
    benchmark.pedantic(lambda: store.knn(next(cycle), K, where), rounds=20)
    info = {
        "cache_mode": mode,
        "float32_mode_p50_ms": float32_ms,
        "coarse_p50_ms": coarse_ms,
        "coarse_recall_at_10": coarse_recall,
        "size": size,
        "knn_cache_p50_ms": ours,
        "numpy_p50_ms": floor,
        "ratio": ours / floor,
        "vec0_p50_ms": vec0,
        "cache_load_s": load_s,
        "exact_agreement": float(agree),
    }
    benchmark.extra_info.update(info)
    print(
        f"\nknn at {size}: cache ({mode}) p50 {ours:.2f} ms; numpy brute force {floor:.2f} ms; "
        f"ratio {ours / floor:.2f}; float32 mode {float32_ms:.2f} ms; "
        f"vec0 {vec0:.1f} ms; cache load {load_s:.2f} s; identical top-{K} {agree:.0%}; "
        f"coarse mode {coarse_ms:.2f} ms, recall@10 {coarse_recall:.3f}"
    )
    store.close()
    plain.close()


def test_search_memories_vs_embed_plus_numpy(
    benchmark: pytest.FixtureRequest, built_100k: Built, embedder: MiniLMEmbedder
) -> None:
    data = built_100k.data
    store = SqliteVecStore(built_100k.path)
    engine = MemoryEngine(store, embedder, HybridRanker())  # the defaults: hybrid, access tracking on
    engine.open()
    engine.search_memories("warm up", limit=K)
    texts = itertools.cycle(TEXT_QUERIES)

    def floor_once() -> object:
        return exact_top_k(data, embedder.embed_query(next(texts)), K)

    floor = median_ms(floor_once)
    ours = median_ms(lambda: engine.search_memories(next(texts), limit=K))
    embed = median_ms(lambda: embedder.embed_query(next(texts)))
    qv = embedder.embed_query("warm up")
    knn = median_ms(lambda: store.knn(qv, 4 * K if 4 * K > 32 else 32, MemoryFilter()))
    kw = median_ms(lambda: store.keyword_search(next(texts), 40, MemoryFilter()))
    # The synthetic texts draw 6 of 15 words: a query sharing words with them (2 of the 6 queries)
    # matches about a third of all memories, and FTS5 scores every match. Report those apart.
    broad = [q for q in TEXT_QUERIES if store.keyword_search(q, 1, MemoryFilter())]
    words = [set(t.split()) for t in synthetic_texts(len(data))]
    matched = max(sum(1 for w in words if w & set(q.lower().split())) for q in broad) / len(data)
    broad_cycle = itertools.cycle(broad)
    broad_ms = median_ms(lambda: engine.search_memories(next(broad_cycle), limit=K), rounds=10)
    broad_kw = median_ms(lambda: store.keyword_search(next(broad_cycle), 40, MemoryFilter()), rounds=10)
    benchmark.pedantic(lambda: engine.search_memories(next(texts), limit=K), rounds=20)
    ratio = ours / floor
    benchmark.extra_info.update(
        {
            "search_memories_p50_ms": ours,
            "embed_plus_numpy_p50_ms": floor,
            "ratio": ratio,
            "embed_query_p50_ms": embed,
            "store_knn_k40_p50_ms": knn,
            "keyword_search_k40_p50_ms": kw,
            "broad_queries": len(broad),
            "broad_query_memories_matched": matched,
            "broad_search_memories_p50_ms": broad_ms,
            "broad_keyword_search_k40_p50_ms": broad_kw,
        }
    )
    print(
        f"\nsearch_memories at 100k: p50 {ours:.2f} ms; embed_query + numpy {floor:.2f} ms; ratio {ratio:.2f} "
        f"(goal <= 1.5). Parts: embed_query {embed:.2f} ms, store.knn(k=40) {knn:.2f} ms, "
        f"keyword_search(k=40) {kw:.2f} ms. The {len(broad)} queries whose words match {matched:.0%} of "
        f"the memories: search_memories {broad_ms:.1f} ms, keyword_search {broad_kw:.1f} ms"
    )
    engine.close()


RSS_SCRIPT = """
import sys
from mcp_memory_server.runtime.process_tuning import tune_process
tune_process()  # as the server's main() does
from mcp_memory_core import MemoryEngine
from mcp_memory_minilm.embedder import MiniLMEmbedder
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_sqlite_vec.store import SqliteVecStore

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

engine = MemoryEngine(SqliteVecStore(sys.argv[1]), MiniLMEmbedder(), SimilarityRanker(), track_access=False)
engine.open()
engine.embedder.load()  # not engine.warm(): it would load the vector cache too
before = rss_mb()
for q in ["which database do we use", "alpha beta", "how do we deploy", "river stone cloud"] * 5:
    engine.search_memories(q, limit=10)
print(before, rss_mb())
"""


def rss(path: Path, **env: str) -> tuple[float, float]:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RSS_SCRIPT), str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stderr
    before, after = (float(x) for x in result.stdout.split())
    return before, after


def test_rss_at_100k(benchmark: pytest.FixtureRequest, built_100k: Built) -> None:
    before, after = rss(built_100k.path)
    _, coarse = rss(built_100k.path, MCP_MEMORY_SQLITE_VECTOR_CACHE_COARSE_ROWS="0")
    _, vec0 = rss(built_100k.path, MCP_MEMORY_SQLITE_VECTOR_CACHE="0")
    benchmark.extra_info.update(
        {
            "rss_model_loaded_mb": before,
            "rss_after_search_mb": after,
            "rss_after_search_coarse_mb": coarse,
            "rss_after_search_vec0_mb": vec0,
        }
    )
    benchmark.pedantic(lambda: None, rounds=1)
    print(
        f"\nRSS at 100k: {before:.0f} MB with the model loaded; after 20 searches {after:.0f} MB (default cache), "
        f"{coarse:.0f} MB (coarse cache), {vec0:.0f} MB (no cache, vec0) (goal <= 300)"
    )


def test_catching_up_with_another_process_at_100k(
    benchmark: pytest.FixtureRequest, built_100k: Built, tmp_path: Path
) -> None:
    """Two servers on one file: after the other one commits, the next KNN first catches its vector
    cache up (cache_log replay). Baseline, same run: the same KNN with nothing to catch up, and a full
    cache reload (what every foreign commit cost before cache_log)."""
    import shutil

    path = tmp_path / "shared.db"
    shutil.copyfile(built_100k.path, path)
    dims = built_100k.data.shape[1]
    reader, writer = SqliteVecStore(path), SqliteVecStore(path, vector_cache=False)
    reader.open(built_100k.model_id, dims)
    writer.open(built_100k.model_id, dims)
    qv = itertools.cycle(queries(built_100k.data, 64))
    where = MemoryFilter()
    reader.knn(next(qv), K, where)
    warm = median_ms(lambda: reader.knn(next(qv), K, where))
    fresh = itertools.count()
    vectors = queries(built_100k.data, 64)

    def after_a_store() -> object:
        i = next(fresh)
        writer.insert(
            [Memory(id=f"other-{i}", content=f"from the other process {i}")], vectors[i % 64 : i % 64 + 1]
        )
        started = time.perf_counter()
        reader.knn(next(qv), K, where)
        return time.perf_counter() - started

    def after_access_stats() -> object:
        writer.record_access({"m00000001": 1}, datetime.now(UTC))
        started = time.perf_counter()
        reader.knn(next(qv), K, where)
        return time.perf_counter() - started

    store_ms = float(np.median([after_a_store() for _ in range(15)])) * 1000
    access_ms = float(np.median([after_access_stats() for _ in range(15)])) * 1000
    cache = reader.vector_cache
    started = time.perf_counter()
    reader._drop_cache()  # what a foreign commit used to cost: a full reload
    reader.knn(next(qv), K, where)
    reload_ms = (time.perf_counter() - started) * 1000
    assert cache is not None and reader.vector_cache is not cache
    benchmark.pedantic(lambda: reader.knn(next(qv), K, where), rounds=5)
    benchmark.extra_info.update(
        {
            "warm_knn_ms": warm,
            "knn_after_other_store_ms": store_ms,
            "knn_after_other_access_stats_ms": access_ms,
            "knn_with_full_reload_ms": reload_ms,
        }
    )
    print(
        f"\ncatching up at 100k: knn after another connection stored a memory {store_ms:.1f} ms "
        f"({store_ms / warm:.2f}x a warm knn of {warm:.1f} ms); after it recorded access stats "
        f"{access_ms:.1f} ms ({access_ms / warm:.2f}x); with a full reload {reload_ms:.0f} ms "
        f"({reload_ms / warm:.0f}x)"
    )
    reader.close()
    writer.close()


def children_rss_mb(marker: str) -> float:
    """VmRSS of this process's child whose command line contains ``marker`` (Linux /proc)."""
    me = str(os.getpid())
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = (proc / "stat").read_text().rsplit(")", 1)[1].split()[1]
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if ppid == me and marker in cmdline:
                for line in (proc / "status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except (OSError, IndexError):
            continue
    raise LookupError(f"no child process running {marker}")


async def server_rss(path: Path, errlog: Path) -> tuple[float, float]:
    """RSS of the real server (stdio, default plugins) on ``path``: after initialize and the warm-up
    (model and vector cache), and after 24 ``search_memories`` calls."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = server_env(path, namespace="default", pass_through=())  # the file's model: fp32 defaults
    params = StdioServerParameters(command=OURS[0], args=OURS[1:], env=env)
    with errlog.open("a") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("list_namespaces", {})  # answered without the model
            await anyio.sleep(3)  # the warm-up thread loads the model after the handshake
            before = children_rss_mb("mcp_memory_server")
            for query in TEXT_QUERIES * 4:
                result = await session.call_tool("search_memories", {"query": query, "limit": K})
                assert not result.is_error, result.content
            return before, children_rss_mb("mcp_memory_server")


def test_first_search_at_100k(benchmark: pytest.FixtureRequest, built_100k: Built, tmp_path: Path) -> None:
    """Spawn → first search_memories result on the 100k file: model load and vector cache load included
    (the issue's < 1.5 s goal is measured on 300 memories in test_startup_first_search_bench)."""
    env = server_env(built_100k.path, namespace="default", pass_through=())  # the file's model: fp32
    errlog = tmp_path / "server.err"
    anyio.run(timeline, OURS, env, errlog, True)  # warm the OS file cache
    runs = [anyio.run(timeline, OURS, env, errlog, True) for _ in range(3)]
    first = float(np.median([search for _, search in runs])) * 1000
    initialize = float(np.median([init for init, _ in runs])) * 1000
    benchmark.extra_info.update({"first_search_100k_median_ms": first, "initialize_median_ms": initialize})
    benchmark.pedantic(lambda: None, rounds=1)
    print(
        f"\nfirst search at 100k: spawn → result median {first:.0f} ms (initialize {initialize:.0f} ms), 3 rounds"
    )


def test_server_rss_at_100k(benchmark: pytest.FixtureRequest, built_100k: Built, tmp_path: Path) -> None:
    """The goal's process: the MCP server itself (SDK, transports and all plugins loaded)."""
    before, after = anyio.run(server_rss, built_100k.path, tmp_path / "server.err")
    benchmark.extra_info.update({"server_rss_warm_mb": before, "server_rss_after_search_mb": after})
    benchmark.pedantic(lambda: None, rounds=1)
    print(
        f"\nserver RSS at 100k: {before:.0f} MB after start and warm-up (model, vector cache); {after:.0f} MB after "
        f"24 search_memories calls over stdio (goal <= 300)"
    )


@pytest.mark.skipif(os.environ.get("MCP_MEMORY_BENCH_1M") != "1", reason="set MCP_MEMORY_BENCH_1M=1")
def test_knn_1m_coarse_recall(
    benchmark: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    dims = 384
    built = build(Path(tmp_path_factory.mktemp("bench1m")), 1_000_000, "synthetic-384", dims)
    qv = queries(built.data, 100, seed=7)
    where = MemoryFilter()
    store = SqliteVecStore(built.path)
    store.open(built.model_id, dims)
    started = time.perf_counter()
    store.knn(qv[0], K, where)
    load_s = time.perf_counter() - started
    cache = store.vector_cache
    mode = "off" if cache is None else cache.mode
    recalls = []
    for q in qv:
        exact = {f"m{j:08d}" for j in exact_top_k(built.data, q, K)}
        got = {i for i, _ in store.knn(q, K, where)}
        recalls.append(len(exact & got) / K)
    cycle = itertools.cycle(qv)
    floor = median_ms(numpy_floor(built.data, cycle), rounds=15)
    ours = median_ms(lambda: store.knn(next(cycle), K, where), rounds=30)
    benchmark.pedantic(lambda: store.knn(next(cycle), K, where), rounds=10)
    recall = float(np.mean(recalls))
    info = {
        "knn_1m_p50_ms": ours,
        "numpy_1m_p50_ms": floor,
        "recall_at_10": recall,
        "min_recall_at_10": float(np.min(recalls)),
        "cache_mode": mode,
        "cache_mb": 0 if cache is None else cache.nbytes / 2**20,
        "cache_load_s": load_s,
        "build_s": built.build_s,
    }
    benchmark.extra_info.update(info)
    print(
        f"\nknn at 1M ({mode}): p50 {ours:.1f} ms (goal <= 120); numpy brute force {floor:.1f} ms; "
        f"recall@10 {recall:.4f} (min {np.min(recalls):.1f}; goal >= 0.99); cache {info['cache_mb']:.0f} MB, "
        f"loaded in {load_s:.1f} s; built in {built.build_s:.0f} s"
    )
    store.close()
