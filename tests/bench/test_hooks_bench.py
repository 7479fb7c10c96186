"""The Claude Code hooks' wall time (a process per prompt), as a ratio against ``mcp-memory --version``
(the same interpreter, script and click, doing nothing) measured in the same run, interleaved.

On the default stack (sqlite-vec, all-MiniLM-L6-v2, hybrid ranker) with 1,000 memories in the
project. Not run by default (the root config passes ``--benchmark-skip``); run with
``pytest tests/bench/test_hooks_bench.py --benchmark-only -s``. The figures go to
``benchmark.extra_info`` and are printed; docs/hooks.md quotes them. ``test_hook_stages`` shows
where a user-prompt-submit's time goes, in one process, stage by stage.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from synthetic import fact_sentences

ROUNDS = int(os.environ.get("MCP_MEMORY_BENCH_ROUNDS", "7"))
MEMORIES = 1_000
SCRIPT = str(Path(sys.executable).parent / "mcp-memory")
PROMPT = "Which database does the team use in staging?"


def hook_env(db: Path) -> dict[str, str]:
    """This environment without MCP_MEMORY_* settings (and with bytecode cached, as installed)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MCP_MEMORY_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["MCP_MEMORY_DB_PATH"] = str(db)
    return env


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A project folder with 1,000 memories stored in its namespace by the real engine."""
    from mcp_memory_core.settings import Settings
    from mcp_memory_server.runtime.assembly import build_engine

    root = tmp_path_factory.mktemp("hooks-bench")
    folder = root / "shop-backend"
    (folder / ".git").mkdir(parents=True)
    env = hook_env(root / "memories.db")
    facts = fact_sentences(seed=16)
    old = os.getcwd()
    os.chdir(folder)
    try:
        engine = build_engine(Settings(db_path=root / "memories.db", namespace=None))
        try:
            for _ in range(MEMORIES):
                engine.store_memory(next(facts))
        finally:
            engine.close()
    finally:
        os.chdir(old)
    return folder, env


def timed(command: list[str], env: dict[str, str], stdin: bytes, cwd: Path) -> tuple[float, bytes]:
    started = time.perf_counter()
    result = subprocess.run(command, input=stdin, capture_output=True, env=env, cwd=cwd, timeout=120)
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, result.stderr.decode()
    return elapsed, result.stdout


def compare(
    benchmark: pytest.FixtureRequest,
    name: str,
    run_hook: Callable[[], tuple[float, bytes]],
    baseline: Callable[[], float],
) -> None:
    run_hook()  # warm the OS file cache, the .pyc files and the plugin cache
    baseline()
    base: list[float] = []
    mine: list[float] = []

    def measure_the_baseline_first() -> None:
        base.append(baseline())  # interleaved: a change in machine load hits both alike

    def measure_the_hook() -> float:
        mine.append(run_hook()[0])
        return mine[-1]

    benchmark.pedantic(measure_the_hook, setup=measure_the_baseline_first, rounds=ROUNDS, iterations=1)  # type: ignore[attr-defined]
    ours, reference = statistics.median(mine), statistics.median(base)
    benchmark.extra_info.update(  # type: ignore[attr-defined]
        {
            "hook_median_s": ours,
            "version_median_s": reference,
            "ratio_vs_version": ours / reference,
            "rounds": ROUNDS,
        }
    )
    print(
        f"\n{name}: median {ours * 1000:.0f} ms; `mcp-memory --version` {reference * 1000:.0f} ms; "
        f"ratio {ours / reference:.2f}x ({MEMORIES} memories, {ROUNDS} rounds)"
    )


def test_user_prompt_submit_vs_version(
    benchmark: pytest.FixtureRequest, project: tuple[Path, dict[str, str]]
) -> None:
    folder, env = project
    payload = json.dumps(
        {"hook_event_name": "UserPromptSubmit", "cwd": str(folder), "prompt": PROMPT}
    ).encode()

    def run_hook() -> tuple[float, bytes]:
        elapsed, out = timed([SCRIPT, "hook", "user-prompt-submit"], env, payload, folder)
        assert "PostgreSQL 16" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
        return elapsed, out

    compare(
        benchmark, "user-prompt-submit", run_hook, lambda: timed([SCRIPT, "--version"], env, b"", folder)[0]
    )


def test_session_start_vs_version(
    benchmark: pytest.FixtureRequest, project: tuple[Path, dict[str, str]]
) -> None:
    folder, env = project
    payload = json.dumps(
        {"hook_event_name": "SessionStart", "cwd": str(folder), "source": "startup"}
    ).encode()

    def run_hook() -> tuple[float, bytes]:
        elapsed, out = timed([SCRIPT, "hook", "session-start"], env, payload, folder)
        assert json.loads(out)["hookSpecificOutput"]["additionalContext"]
        return elapsed, out

    compare(benchmark, "session-start", run_hook, lambda: timed([SCRIPT, "--version"], env, b"", folder)[0])


STAGES = """
import json, os, sys, time
t = [time.perf_counter()]
from mcp_memory_core.settings import Settings
from mcp_memory_server.integrations.claude_code import hooks
from mcp_memory_server.runtime.assembly import build_engine, load_plugins
t.append(time.perf_counter())
settings = Settings()
os.chdir(sys.argv[1])
t.append(time.perf_counter())
plugins = load_plugins(settings) if sys.argv[2] == "all" else hooks.hook_plugins(settings)
t.append(time.perf_counter())
engine = build_engine(settings, plugins)
engine.open()
t.append(time.perf_counter())
engine.embedder.load()
t.append(time.perf_counter())
text = engine.recall(sys.argv[3], 800).text
t.append(time.perf_counter())
assert text
names = ["imports", "settings", "plugins", "build+open", "model load", "recall"]
print(json.dumps({n: b - a for n, a, b in zip(names, t, t[1:])}))
"""


def test_hook_stages(benchmark: pytest.FixtureRequest, project: tuple[Path, dict[str, str]]) -> None:
    """Where the time goes (medians over the rounds, in one process each), with the hook's plugin
    selection and with every installed plugin loaded as the server does."""
    folder, env = project
    runs: dict[str, list[dict[str, float]]] = {"selected": [], "all": []}
    for _ in range(ROUNDS):
        for plugins, found in runs.items():  # interleaved: a change in machine load hits both alike
            out = subprocess.run(
                [sys.executable, "-c", STAGES, str(folder), plugins, PROMPT],
                capture_output=True,
                env=env,
                timeout=120,
                check=True,
            ).stdout
            found.append(json.loads(out))
    figures = {
        plugins: {stage: statistics.median(r[stage] for r in found) for stage in found[0]}
        for plugins, found in runs.items()
    }
    benchmark.extra_info.update(figures)  # type: ignore[attr-defined]
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)  # type: ignore[attr-defined]
    for plugins, stages in figures.items():
        print(
            f"\nstages ({plugins} plugins): " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in stages.items())
        )
