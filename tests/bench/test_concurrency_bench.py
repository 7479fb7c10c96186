"""Concurrency through real HTTP servers and real MCP SDK clients (sqlite-vec + MiniLM fp32), each figure
against a baseline measured in the same run.

    pytest tests/bench/test_concurrency_bench.py --benchmark-only -s

- A small ``search_memories`` while another client pages through 1,000 large memories with
  ``list_memories``: its p50 as a ratio to its idle p50 on the same server (goal: <= 2x).
- ``store_memory`` from 20 clients at once, 10 through each of two HTTP servers on one SQLite file: the
  p50 (goal: <= 100 ms) against one client storing alone, and every error counted (goal: none, and
  never "database is locked"); every acknowledged memory is then read back.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

import anyio
import anyio.streams.text
import numpy as np
import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "e2e"))
from e2e_helpers import http_server, payload  # noqa: E402
from test_startup_first_search_bench import OURS, server_engine, server_env  # noqa: E402

pytestmark = pytest.mark.model

NAMESPACE = "bench"
LARGE = 1_000  # memories the listing client pages through
LARGE_CHARS = 4_000
LIST_LIMIT = 100  # pages of ~0.8 MB of JSON: the SDK client refuses server-sent events over 1 MB
SMALL = 200  # short memories the searching client finds
SEARCHES = int(os.environ.get("MCP_MEMORY_BENCH_SEARCHES", "40"))
CLIENTS = 20
STORES_PER_CLIENT = int(os.environ.get("MCP_MEMORY_BENCH_STORES", "10"))
QUESTIONS = [
    "which database does the team use?",
    "what editor theme does Alice like?",
    "how often do we release?",
    "what does the build run on?",
]


def _large_text(i: int) -> str:
    """One long sentence (one vector: the bench is about listing them, not about embedding them)."""
    clause = f"meeting notes {i} on budgets, hiring plans and the roadmap, "
    return (clause * (LARGE_CHARS // len(clause) + 1))[:LARGE_CHARS]


def _seeded(path: Path, large: int) -> Path:
    """``large`` memories of LARGE_CHARS and SMALL short ones, written by the engine the server builds
    from this environment."""
    from mcp_memory_core import Memory

    engine = server_engine(path, NAMESPACE)
    subjects = ["The team", "Alice", "Bob", "The build", "Our API"]
    objects = ["PostgreSQL 16", "SQLite", "dark mode", "uv", "weekly releases", "Kubernetes"]
    small = [f"{subjects[i % 5]} uses {objects[i % 6]} (note {i})." for i in range(SMALL)]
    memories = [Memory(content=_large_text(i), namespace=NAMESPACE) for i in range(large)]
    memories += [Memory(content=t, namespace=NAMESPACE) for t in small]
    outcome = engine.import_memories(memories)
    assert outcome.inserted == large + SMALL
    engine.close()
    return path


@pytest.fixture(scope="module")
def large_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _seeded(Path(tmp_path_factory.mktemp("concurrency")) / "large.db", LARGE)


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    return _seeded(tmp_path / "small.db", 0)


async def _session(stack: AsyncExitStack, url: str) -> Any:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(httpx2.AsyncClient(timeout=120))
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def _timed_call(session: Any, tool: str, args: dict[str, Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await session.call_tool(tool, args)
    return (time.perf_counter() - started) * 1000, result


async def _searches(session: Any, n: int) -> list[float]:
    samples = []
    for i in range(n):
        ms, result = await _timed_call(session, "search_memories", {"query": QUESTIONS[i % 4], "limit": 5})
        assert payload(result)["results"]
        samples.append(ms)
    return samples


LISTER = """
import json, os, sys, anyio
sys.path.insert(0, sys.argv[2])
import test_concurrency_bench as bench
from contextlib import AsyncExitStack

async def main(url, stop):
    pages, memories, ms = 0, 0, []
    async with AsyncExitStack() as stack:
        session = await bench._session(stack, url)
        while not os.path.exists(stop):
            cursor = None
            while not os.path.exists(stop):
                args = {"limit": bench.LIST_LIMIT, **({"cursor": cursor} if cursor else {})}
                took, result = await bench._timed_call(session, "list_memories", args)
                page = bench.payload(result)
                pages, memories, cursor = pages + 1, memories + len(page["memories"]), page.get("next_cursor")
                ms.append(took)
                if pages == 1:
                    print("listing", flush=True)
                if not cursor:
                    break
    print(json.dumps({"pages": pages, "memories": memories, "ms": ms}), flush=True)

anyio.run(main, sys.argv[1], sys.argv[3])
"""


async def _search_beside_a_list(url: str, stop: Path) -> dict[str, Any]:
    """The searching client here; the listing client in a process of its own, as another user's is."""
    async with AsyncExitStack() as stack:
        searcher = await _session(stack, url)
        await _searches(searcher, 5)  # warm: model, vector cache, code paths
        idle = await _searches(searcher, SEARCHES)
        async with await anyio.open_process(
            [sys.executable, "-c", LISTER, url, str(HERE), str(stop)]
        ) as lister:
            assert lister.stdout is not None
            output = ""
            async for chunk in anyio.streams.text.TextReceiveStream(lister.stdout):
                output += chunk
                if "listing" in output:
                    break  # the lister is in its stride
            loaded = await _searches(searcher, SEARCHES)
            stop.touch()
            async for chunk in anyio.streams.text.TextReceiveStream(lister.stdout):
                output += chunk
            assert await lister.wait() == 0
    return {"idle": idle, "loaded": loaded, "listed": json.loads(output.splitlines()[-1])}


def test_search_p50_while_another_client_lists_1000_large_memories(
    benchmark: pytest.FixtureRequest, large_db: Path, tmp_path: Path
) -> None:
    env = server_env(large_db, NAMESPACE)
    with http_server(OURS, env, tmp_path / "server.log", "--no-auth") as url:
        runs = anyio.run(_search_beside_a_list, url, tmp_path / "stop")
    idle, loaded = statistics.median(runs["idle"]), statistics.median(runs["loaded"])
    listed = runs["listed"]
    ratio = loaded / idle
    benchmark.extra_info.update(  # type: ignore[attr-defined]
        {
            "search_idle_p50_ms": idle,
            "search_beside_list_p50_ms": loaded,
            "search_beside_list_p90_ms": float(np.percentile(runs["loaded"], 90)),
            "ratio_beside_list_vs_idle": ratio,
            "list_pages_served_meanwhile": listed["pages"],
            "list_page_p50_ms": statistics.median(listed["ms"]),
            "memories_per_list_page": listed["memories"] / max(1, listed["pages"]),
        }
    )
    benchmark.pedantic(lambda: None, rounds=1)  # type: ignore[attr-defined]
    print(
        f"\nsmall search p50: idle {idle:.1f} ms; while another client lists {LARGE} memories of "
        f"{LARGE_CHARS} chars ({listed['pages']} pages of ~{listed['memories'] / max(1, listed['pages']):.0f} "
        f"served meanwhile, p50 {statistics.median(listed['ms']):.0f} ms a page) {loaded:.1f} ms "
        f"(p90 {np.percentile(runs['loaded'], 90):.1f}); ratio {ratio:.2f} (goal <= 2)"
    )


async def _stores(urls: list[str], clients: int, per_client: int) -> dict[str, Any]:
    samples: list[float] = []
    errors: list[str] = []
    stored: dict[str, str] = {}
    async with AsyncExitStack() as stack:
        sessions = [await _session(stack, urls[c % len(urls)]) for c in range(clients)]

        async def client(c: int) -> None:
            for i in range(per_client):
                text = f"Client {c} decided on option {i}: ship the {['blue', 'green', 'red'][i % 3]} build."
                ms, result = await _timed_call(sessions[c], "store_memory", {"content": text})
                if result.is_error:
                    errors.append(" ".join(getattr(b, "text", "") for b in result.content))
                    continue
                samples.append(ms)
                stored[json.loads(result.content[0].text)["id"]] = urls[c % len(urls)]

        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for c in range(clients):
                tg.start_soon(client, c)
        seconds = time.perf_counter() - started
        # Every acknowledged write, read back through the other server.
        missing = 0
        for memory_id, via in stored.items():
            other = (
                next(s for c, s in enumerate(sessions) if urls[c % len(urls)] != via)
                if len(urls) > 1
                else sessions[0]
            )
            got = await other.call_tool("get_memory", {"id": memory_id})
            missing += bool(got.is_error)
    return {
        "samples": samples,
        "errors": errors,
        "stored": len(stored),
        "missing": missing,
        "seconds": seconds,
    }


def test_store_p50_of_20_clients_through_two_http_servers_on_one_file(
    benchmark: pytest.FixtureRequest, small_db: Path, tmp_path: Path
) -> None:
    env = server_env(small_db, NAMESPACE)
    with ExitStack() as servers:
        urls = [
            servers.enter_context(http_server(OURS, env, tmp_path / f"server{i}.log", "--no-auth"))
            for i in range(2)
        ]
        alone = anyio.run(_stores, urls[:1], 1, 2 * STORES_PER_CLIENT)
        crowd = anyio.run(_stores, urls, CLIENTS, STORES_PER_CLIENT)
    for run in (alone, crowd):
        assert not run["errors"], run["errors"][:3]
        assert run["missing"] == 0
    alone_p50 = statistics.median(alone["samples"][2:])  # the first calls warm the model and caches
    crowd_p50 = statistics.median(crowd["samples"])
    ratio = crowd_p50 / alone_p50
    benchmark.extra_info.update(  # type: ignore[attr-defined]
        {
            "store_one_client_p50_ms": alone_p50,
            "store_20_clients_p50_ms": crowd_p50,
            "store_20_clients_p90_ms": float(np.percentile(crowd["samples"], 90)),
            "store_20_clients_max_ms": max(crowd["samples"]),
            "ratio_20_clients_vs_one": ratio,
            "stores_per_s_20_clients": crowd["stored"] / crowd["seconds"],
            "stores_per_s_one_client": alone["stored"] / alone["seconds"],
            "errors": len(crowd["errors"]),
            "acknowledged": crowd["stored"],
        }
    )
    benchmark.pedantic(lambda: None, rounds=1)  # type: ignore[attr-defined]
    print(
        f"\nstore_memory p50: one client alone {alone_p50:.1f} ms; {CLIENTS} clients through two HTTP servers "
        f"on one file {crowd_p50:.1f} ms (p90 {np.percentile(crowd['samples'], 90):.1f}, max "
        f"{max(crowd['samples']):.0f}); ratio {ratio:.1f}; throughput {crowd['stored'] / crowd['seconds']:.0f} stores/s "
        f"(one client: {alone['stored'] / alone['seconds']:.0f}/s); {crowd['stored']} acknowledged, all read back "
        f"through the other server; errors {len(crowd['errors'])} (goal p50 <= 100 ms, no errors)"
    )


# -- the team server's stores: 20 clients of 4 users against the embedder's own batch throughput ----------

USERS = 4
TEAM_CLIENTS = int(os.environ.get("MCP_MEMORY_BENCH_TEAM_CLIENTS", "20"))  # 5 a user at 20
TEAM_STORES = int(
    os.environ.get("MCP_MEMORY_BENCH_TEAM_STORES", "25")
)  # distinct one-sentence stores a client
ALONE_STORES = 50
THINGS = ["the billing service", "the parser", "the web UI", "the nightly export", "the search API"]
DEEDS = [
    "moved to Fridays",
    "needs a second reviewer",
    "runs on two cores",
    "ships behind a flag",
    "got faster",
]


def team_text(user: int, client: int, i: int) -> str:
    """One distinct sentence (no near-duplicate of another: the bench measures stores, not the dedup answer)."""
    return (
        f"User {user} on laptop {client} noted item {i}: {THINGS[i % 5]} {DEEDS[(i // 5) % 5]} "
        f"since sprint {100 + i * 7 + client * 3}."
    )


async def _user_session(stack: AsyncExitStack, url: str, token: str) -> Any:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    )
    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def _team_stores(url: str, tokens: list[str], texts: list[list[str]]) -> dict[str, Any]:
    """Client ``c`` (user ``c % len(tokens)``) stores ``texts[c]`` one after the other, all clients at
    once; then every acknowledged memory is read back by its owner, through another session."""
    samples: list[float] = []
    errors: list[str] = []
    stored: dict[str, int] = {}  # memory id -> the client that stored it
    async with AsyncExitStack() as stack:
        sessions = [await _user_session(stack, url, tokens[c % len(tokens)]) for c in range(len(texts))]
        await sessions[0].call_tool(
            "search_memories", {"query": "warm-up", "limit": 1}
        )  # the model is loaded

        async def client(c: int) -> None:
            for text in texts[c]:
                ms, result = await _timed_call(sessions[c], "store_memory", {"content": text})
                answer = json.loads(result.content[0].text) if not result.is_error else None
                if answer is None or answer.get("status") != "stored":
                    errors.append(" ".join(getattr(b, "text", "") for b in result.content))
                    continue
                samples.append(ms)
                stored[answer["id"]] = c

        server = _server_pid(url)
        cpu_before = (_cpu_seconds(server), _cpu_seconds(os.getpid()))
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for c in range(len(texts)):
                tg.start_soon(client, c)
        seconds = time.perf_counter() - started
        cpu = (_cpu_seconds(server) - cpu_before[0], _cpu_seconds(os.getpid()) - cpu_before[1])
        missing = 0
        for memory_id, c in stored.items():
            same_user = [r for r in range(c % len(tokens), len(sessions), len(tokens)) if r != c] or [c]
            reader = sessions[same_user[0]]  # the same user, through another client when there is one
            got = await reader.call_tool("get_memory", {"id": memory_id})
            missing += bool(got.is_error) or payload(got)["content"] not in texts[c]
    return {
        "samples": samples,
        "errors": errors,
        "stored": len(stored),
        "missing": missing,
        "seconds": seconds,
        "server_cpu_ms": cpu[0] * 1000 / max(1, len(stored)),
        "client_cpu_ms": cpu[1] * 1000 / max(1, len(stored)),
    }


def _server_pid(url: str) -> int:
    """The server process listening at ``url`` (a child of this one, found by its ``--port``)."""
    port = url.rsplit(":", 1)[1].split("/")[0]
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                args = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in args and port.encode() in args:
                return int(proc.name)
    raise AssertionError(f"no server process found for {url}")


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _embedder_batch_rate(texts: list[str], rounds: int = 3) -> tuple[float, float]:
    """The default embedder's own ``embed_documents`` throughput (texts/s) on ``texts``, best of
    ``rounds``, and the CPU it spent a text (ms, over all rounds: a figure the machine's load moves less)."""
    from mcp_memory_minilm.embedder import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed_documents(texts[:64])  # warm
    best, cpu = float("inf"), _cpu_seconds(os.getpid())
    for _ in range(rounds):
        started = time.perf_counter()
        embedder.embed_documents(texts)
        best = min(best, time.perf_counter() - started)
    cpu = _cpu_seconds(os.getpid()) - cpu
    embedder.close()
    return len(texts) / best, cpu * 1000 / (rounds * len(texts))


def test_stores_of_20_clients_of_4_users_against_the_embedders_batch_throughput(
    benchmark: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from e2e_helpers import create_token

    env = {
        **server_env(tmp_path / "team.db", NAMESPACE),
        "MCP_MEMORY_TOKENS_PATH": str(tmp_path / "tokens.db"),
    }
    tokens = [create_token(env, f"user{u}") for u in range(USERS)]
    crowd_texts = [[team_text(c % USERS, c, i) for i in range(TEAM_STORES)] for c in range(TEAM_CLIENTS)]
    alone_texts = [[f"Alone: {team_text(0, 99, i)}" for i in range(ALONE_STORES)]]
    everything = [t for texts in crowd_texts for t in texts]
    assert len(set(everything)) == len(everything)
    embed_rate, embed_cpu_ms = _embedder_batch_rate(everything)
    with http_server(OURS, env, tmp_path / "server.log") as url:
        alone = anyio.run(_team_stores, url, tokens[:1], alone_texts)
        crowd = anyio.run(_team_stores, url, tokens, crowd_texts)
    for run in (alone, crowd):
        assert not run["errors"], run["errors"][:3]
        assert run["missing"] == 0
    assert crowd["stored"] == TEAM_CLIENTS * TEAM_STORES
    assert alone["stored"] == ALONE_STORES
    crowd_rate, alone_rate = crowd["stored"] / crowd["seconds"], alone["stored"] / alone["seconds"]
    p50, p95 = statistics.median(crowd["samples"]), float(np.percentile(crowd["samples"], 95))
    figures = {
        "embed_documents_batch_texts_per_s": embed_rate,
        "embed_documents_batch_cpu_ms_per_text": embed_cpu_ms,
        "stores_per_s_20_clients": crowd_rate,
        "stores_per_s_one_client": alone_rate,
        "ratio_20_clients_vs_embedder_batch": crowd_rate / embed_rate,
        "ratio_20_clients_vs_one_client": crowd_rate / alone_rate,
        "store_20_clients_p50_ms": p50,
        "store_20_clients_p95_ms": p95,
        "store_one_client_p50_ms": statistics.median(alone["samples"]),
        "store_one_client_p95_ms": float(np.percentile(alone["samples"], 95)),
        "server_cpu_ms_per_store_20_clients": crowd["server_cpu_ms"],
        "client_cpu_ms_per_store_20_clients": crowd["client_cpu_ms"],
        "server_cpu_ms_per_store_one_client": alone["server_cpu_ms"],
        "errors": len(crowd["errors"]),
        "acknowledged_and_read_back": crowd["stored"],
    }
    benchmark.extra_info.update(figures)  # type: ignore[attr-defined]
    benchmark.pedantic(lambda: None, rounds=1)  # type: ignore[attr-defined]
    print(
        f"\n{TEAM_CLIENTS} clients of {USERS} users, {TEAM_STORES} stores each: {crowd_rate:.0f} stores/s "
        f"against embed_documents' {embed_rate:.0f} texts/s: {crowd_rate / embed_rate:.2f}x (goal >= 0.5); "
        f"one client alone {alone_rate:.0f} stores/s: {crowd_rate / alone_rate:.2f}x (goal >= 2); "
        f"store p50 {p50:.0f} / p95 {p95:.0f} ms (one client p50 {figures['store_one_client_p50_ms']:.1f} ms); "
        f"{crowd['stored']} acknowledged, all read back by their owners; errors {len(crowd['errors'])}; "
        f"CPU per store: server {crowd['server_cpu_ms']:.1f} ms (one client: {alone['server_cpu_ms']:.1f}), "
        f"clients {crowd['client_cpu_ms']:.1f} ms; embed_documents' own {embed_cpu_ms:.1f} ms a text; wall per store {1000 / crowd_rate:.1f} ms on {os.cpu_count()} cores"
    )
