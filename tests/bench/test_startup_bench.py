"""Spawn → ``initialize`` reply: our server against an empty MCPServer, in the same run.

Not run by default (the root config passes ``--benchmark-skip``); run with
``pytest tests/bench --benchmark-only -s``. The ratio (ours / empty) is printed and stored in
``benchmark.extra_info["ratio_vs_empty_server"]``. doobidoo's mcp-memory-service measured 15.6× here.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "e2e"))
from e2e_helpers import INITIALIZE, rpc_line  # noqa: E402
from test_startup_first_search_bench import EMPTY, OURS, server_env  # noqa: E402

ROUNDS = int(os.environ.get("MCP_MEMORY_BENCH_ROUNDS", "7"))


def spawn_to_initialize(command: list[str], env: dict[str, str]) -> float:
    """Seconds from spawning ``command`` to reading its ``initialize`` reply on stdout."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(rpc_line(INITIALIZE))
        proc.stdin.flush()
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - started
        assert json.loads(line)["id"] == 1, line
        return elapsed
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # As installed: bytecode is cached after the first run (a session's PYTHONDONTWRITEBYTECODE would
    # make every spawn recompile the SDK and our sources, ~0.5 s, for both servers).
    return server_env(tmp_path / "bench.db", pass_through=())


def test_startup_initialize_vs_empty_server(benchmark: pytest.FixtureRequest, env: dict[str, str]) -> None:
    spawn_to_initialize(OURS, env)  # warm the OS file cache and .pyc files for both
    spawn_to_initialize(EMPTY, env)
    empty: list[float] = []
    mine: list[float] = []

    def measure_the_baseline_first() -> None:
        # Interleaved (empty, ours, empty, ours …) so a change in machine load hits both alike.
        empty.append(spawn_to_initialize(EMPTY, env))

    def measure_ours() -> float:
        # The figure is spawn → reply, as for the baseline: pedantic's own timing would also count
        # the process's shutdown after the reply.
        mine.append(spawn_to_initialize(OURS, env))
        return mine[-1]

    result = benchmark.pedantic(  # type: ignore[attr-defined]
        measure_ours, setup=measure_the_baseline_first, rounds=ROUNDS, iterations=1
    )
    ours = statistics.median(mine)
    baseline = statistics.median(empty)
    ratio = ours / baseline
    benchmark.extra_info.update(  # type: ignore[attr-defined]
        {
            "ours_median_s": ours,
            "empty_server_median_s": baseline,
            "ratio_vs_empty_server": ratio,
            "rounds": ROUNDS,
        }
    )
    print(
        f"\nspawn→initialize median: mcp-memory {ours * 1000:.0f} ms, empty MCPServer "
        f"{baseline * 1000:.0f} ms, ratio {ratio:.2f}×"
    )
    assert result > 0
