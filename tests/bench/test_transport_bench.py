"""One sequential ``store_memory`` over streamable HTTP against the same over stdio: real servers
(``serve --transport http --no-auth`` on loopback, and ``python -m mcp_memory_server`` over stdio),
real MCP SDK clients, MiniLM fp32, each server on its own SQLite file seeded alike.

    pytest tests/bench/test_transport_bench.py --benchmark-only -s

The two are interleaved call by call (HTTP, stdio, HTTP, stdio …) so machine load hits both alike;
the figure is the ratio of their p50s (goal: <= 1.2x). A ``ping`` pair first gives each transport's
own round trip, and the servers' CPU time per call (from /proc) says where the difference is spent.
No wall-clock thresholds: figures are printed and kept in ``extra_info``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "e2e"))
from e2e_helpers import http_server  # noqa: E402
from test_concurrency_bench import _seeded, _session  # noqa: E402
from test_startup_first_search_bench import OURS, server_env  # noqa: E402

pytestmark = pytest.mark.model

CALLS = int(os.environ.get("MCP_MEMORY_BENCH_CALLS", "100"))
WARM = 5


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_pids() -> dict[str, int]:
    """This process's children: the HTTP server (``… serve …``) and the stdio one."""
    pids: dict[str, int] = {}
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        for pid in map(int, children.read_text().split()):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            pids["http" if b"serve" in argv else "stdio"] = pid
    return pids


async def _interleaved(
    sessions: dict[str, Any], call: Callable[[Any, str, int], Awaitable[Any]]
) -> dict[str, Any]:
    """``CALLS`` calls on each session in turn (after ``WARM`` unmeasured ones): latencies in ms and
    each server's CPU ms per call."""
    samples: dict[str, list[float]] = {name: [] for name in sessions}
    pids = _server_pids()
    cpu: dict[str, float] = {}
    for i in range(WARM + CALLS):
        if i == WARM:
            cpu = {name: _cpu_seconds(pids[name]) for name in sessions}
        for name, session in sessions.items():
            started = time.perf_counter()
            result = await call(session, name, i)
            took = (time.perf_counter() - started) * 1000
            assert not getattr(result, "is_error", False), result
            if i >= WARM:
                samples[name].append(took)
    cpu_ms = {name: (_cpu_seconds(pids[name]) - cpu[name]) * 1000 / CALLS for name in sessions}
    return {"samples": samples, "cpu_ms": cpu_ms}


async def _store(session: Any, name: str, i: int) -> Any:
    colour = ("blue", "green", "red")[i % 3]
    return await session.call_tool("store_memory", {"content": f"{name} {i}: we ship the {colour} build."})


async def _ping(session: Any, name: str, i: int) -> Any:
    return await session.send_ping()


async def _both(url: str, stdio_env: dict[str, str], errlog: Path) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async with AsyncExitStack() as stack:
        http = await _session(stack, url)
        params = StdioServerParameters(command=OURS[0], args=OURS[1:], env=stdio_env)
        err = stack.enter_context(errlog.open("w"))
        read, write = await stack.enter_async_context(stdio_client(params, errlog=err))
        stdio = await stack.enter_async_context(ClientSession(read, write))
        await stdio.initialize()
        sessions = {"http": http, "stdio": stdio}
        for name, session in sessions.items():  # the warm-up (model, vector cache) done before timing
            await _store(session, name, -1)
        return {"ping": await _interleaved(sessions, _ping), "store": await _interleaved(sessions, _store)}


def test_one_sequential_store_over_http_against_stdio(
    benchmark: pytest.FixtureRequest, tmp_path: Path
) -> None:
    http_db = _seeded(tmp_path / "http.db", 0)
    stdio_db = _seeded(tmp_path / "stdio.db", 0)
    with http_server(OURS, server_env(http_db), tmp_path / "http.log", "--no-auth") as url:
        runs = anyio.run(_both, url, server_env(stdio_db), tmp_path / "stdio.log")
    info: dict[str, float] = {}
    for kind, run in runs.items():
        for name, samples in run["samples"].items():
            info[f"{kind}_{name}_p50_ms"] = statistics.median(samples)
            info[f"{kind}_{name}_server_cpu_ms"] = run["cpu_ms"][name]
        info[f"{kind}_ratio_http_vs_stdio"] = info[f"{kind}_http_p50_ms"] / info[f"{kind}_stdio_p50_ms"]
    benchmark.extra_info.update(info)  # type: ignore[attr-defined]
    benchmark.pedantic(lambda: None, rounds=1)  # type: ignore[attr-defined]
    print(
        "".join(
            f"\n{kind}: HTTP p50 {info[f'{kind}_http_p50_ms']:.2f} ms (server CPU "
            f"{info[f'{kind}_http_server_cpu_ms']:.2f} ms a call), stdio {info[f'{kind}_stdio_p50_ms']:.2f} ms "
            f"({info[f'{kind}_stdio_server_cpu_ms']:.2f} ms); ratio {info[f'{kind}_ratio_http_vs_stdio']:.2f}"
            for kind in runs
        )
        + " (goal for store <= 1.2)"
    )
