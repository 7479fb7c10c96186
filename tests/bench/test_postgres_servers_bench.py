"""``store_memory`` from 20 MCP SDK clients at once through two HTTP servers on one PostgreSQL database,
against the same through two HTTP servers on one SQLite file, in the same run: real servers
(``serve --transport http --no-auth``), MiniLM fp32, a real PostgreSQL 16 + pgvector started by the
tests (``mcp_memory_testing.postgres``, ``fsync=off``: test data).

    pytest tests/bench/test_postgres_servers_bench.py --benchmark-only -s

The two stores take turns (SQLite, PostgreSQL, SQLite, PostgreSQL … for ``MCP_MEMORY_BENCH_ROUNDS``
rounds) so machine load hits both alike; the figure is PostgreSQL's p50 over SQLite's (goal: <= 1.2x).
Every acknowledged memory is read back through the other server, and no call may fail. No
wall-clock thresholds: figures are printed and kept in ``extra_info``.
"""

from __future__ import annotations

import os
import statistics
import sys
from contextlib import ExitStack
from pathlib import Path

import anyio
import numpy as np
import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "e2e"))
from e2e_helpers import http_server  # noqa: E402
from test_concurrency_bench import CLIENTS, STORES_PER_CLIENT, _stores  # noqa: E402
from test_startup_first_search_bench import OURS, server_env  # noqa: E402

pytestmark = pytest.mark.model

ROUNDS = int(os.environ.get("MCP_MEMORY_BENCH_ROUNDS", "2"))


def test_store_p50_of_20_clients_on_two_servers_postgres_against_sqlite(
    benchmark: pytest.FixtureRequest, postgres_url: str, tmp_path: Path
) -> None:
    envs = {
        "sqlite": server_env(tmp_path / "shared.db"),
        "postgres": {
            **server_env(tmp_path / "unused.db"),
            "MCP_MEMORY_STORE": "postgres",
            "MCP_MEMORY_DATABASE_URL": postgres_url,
        },
    }
    samples: dict[str, list[float]] = {name: [] for name in envs}
    rates: dict[str, list[float]] = {name: [] for name in envs}
    with ExitStack() as servers:
        urls = {
            name: [
                servers.enter_context(http_server(OURS, env, tmp_path / f"{name}{i}.log", "--no-auth"))
                for i in range(2)
            ]
            for name, env in envs.items()
        }
        for name in envs:  # warm each server: model, store, code paths
            assert not anyio.run(_stores, urls[name], 2, 2)["errors"]
        for _ in range(ROUNDS):
            for name in envs:
                run = anyio.run(_stores, urls[name], CLIENTS, STORES_PER_CLIENT)
                assert not run["errors"], run["errors"][:3]
                assert run["missing"] == 0 and run["stored"] == CLIENTS * STORES_PER_CLIENT
                samples[name] += run["samples"]
                rates[name].append(run["stored"] / run["seconds"])
    p50 = {name: statistics.median(values) for name, values in samples.items()}
    ratio = p50["postgres"] / p50["sqlite"]
    info = {
        **{f"{name}_store_p50_ms": value for name, value in p50.items()},
        **{f"{name}_store_p90_ms": float(np.percentile(samples[name], 90)) for name in envs},
        **{f"{name}_stores_per_s": statistics.median(rates[name]) for name in envs},
        "ratio_postgres_vs_sqlite": ratio,
    }
    benchmark.extra_info.update(info)  # type: ignore[attr-defined]
    benchmark.pedantic(lambda: None, rounds=1)  # type: ignore[attr-defined]
    print(
        f"\nstore_memory p50, {CLIENTS} clients on two HTTP servers ({ROUNDS} rounds of "
        f"{CLIENTS * STORES_PER_CLIENT}): PostgreSQL {p50['postgres']:.1f} ms (p90 "
        f"{info['postgres_store_p90_ms']:.0f}, {info['postgres_stores_per_s']:.0f} stores/s), SQLite "
        f"{p50['sqlite']:.1f} ms (p90 {info['sqlite_store_p90_ms']:.0f}, {info['sqlite_stores_per_s']:.0f} "
        f"stores/s); ratio {ratio:.2f} (goal <= 1.2); errors 0, every write read back through the other server"
    )
