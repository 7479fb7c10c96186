"""Rerankers through the server: MCP_MEMORY_RERANKERS picks them, a failing one never fails a search
(its result says so in ``warnings``), and ``mcp-memory plugins`` lists them."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from server_helpers import payload

import mcp_memory_server.runtime.assembly as assembly
from mcp_memory_core.errors import PluginError, UnknownBackendError
from mcp_memory_core.plugins import PluginManager, module_plugin
from mcp_memory_core.settings import Settings
from mcp_memory_core.specs import RerankerSpec
from mcp_memory_server.cli import cli
from mcp_memory_server.mcp.app import build_app
from mcp_memory_testing import FailingReranker, ReversingReranker


class HeavyReranker(ReversingReranker):
    """Records the thread its model loads in."""

    built: ClassVar[list[HeavyReranker]] = []

    def __init__(self) -> None:
        super().__init__(name="heavy", heavy=True)
        self.load_threads: list[str] = []
        HeavyReranker.built.append(self)

    def load(self) -> None:
        self.load_threads.append(threading.current_thread().name)
        super().load()


def rerankers_hook() -> Iterator[RerankerSpec]:
    yield RerankerSpec(
        name="failing", factory=lambda settings: FailingReranker("raise"), description="Always raises"
    )
    yield RerankerSpec(
        name="reverse", factory=lambda settings: ReversingReranker(), description="Reverses the best ten"
    )
    yield RerankerSpec(name="heavy", factory=lambda settings: HeavyReranker(), description="Loads a model")
    yield RerankerSpec(
        name="misnamed", factory=lambda settings: ReversingReranker(name="other"), description="Misnamed"
    )


@pytest.fixture
def with_test_rerankers(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed plugins plus one registering the test rerankers, wherever the server loads them."""
    real = assembly.load_plugins

    def load(settings: Settings) -> PluginManager:
        manager = real(settings)
        manager.register(
            module_plugin("test-rerankers", mcp_memory_rerankers=rerankers_hook),
            name="test-rerankers",
            package="test-rerankers-package",
            version="9.9",
        )
        return manager

    monkeypatch.setattr(assembly, "load_plugins", load)


async def search(monkeypatch: pytest.MonkeyPatch, rerankers: str, **arguments: Any) -> dict[str, Any]:
    """Store three memories and search them through a real in-process MCP client session, with
    ``MCP_MEMORY_RERANKERS=rerankers`` read by the server as it starts."""
    from mcp import Client

    monkeypatch.setenv("MCP_MEMORY_RERANKERS", rerankers)
    app = build_app()  # settings read after the handshake, as in serve mode
    try:
        async with Client(app, mode="legacy") as client:
            for text in ("green tea every morning", "green tea with lemon", "black tea in the evening"):
                payload(await client.call_tool("store_memory", {"content": text}))
            return payload(await client.call_tool("search_memories", {"query": "green tea", **arguments}))
    finally:
        app.memory_service.close()


@pytest.mark.anyio
async def test_a_failing_reranker_yields_warnings_and_the_results_still_come_back(
    with_test_rerankers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = await search(monkeypatch, "", explain=True)
    failing = await search(monkeypatch, "failing", explain=True)
    assert failing["count"] == plain["count"] == 3
    assert [r["content"] for r in failing["results"]] == [r["content"] for r in plain["results"]]
    assert failing["warnings"] == ["reranker 'failing' skipped: it raised ValueError: the model is confused"]
    assert "warnings" not in plain


@pytest.mark.anyio
async def test_a_reranker_reorders_the_results_and_explain_shows_its_part(
    with_test_rerankers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = await search(monkeypatch, "", explain=True)
    both = await search(monkeypatch, "failing, reverse", explain=True)
    assert [r["content"] for r in both["results"]] == [r["content"] for r in plain["results"]][::-1]
    assert all("reverse" in r["score_parts"] for r in both["results"])
    assert len(both["warnings"]) == 1 and both["warnings"][0].startswith("reranker 'failing' skipped")


@pytest.mark.anyio
async def test_a_heavy_reranker_loads_in_the_background_warmup_after_the_handshake(
    with_test_rerankers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    HeavyReranker.built.clear()
    found = await search(monkeypatch, "heavy")
    assert "warnings" not in found and found["count"] == 3
    [heavy] = HeavyReranker.built
    assert heavy.load_threads == ["mcp-memory-warmup"] and heavy.loads == 1
    assert len(heavy.seen) == 1


def test_an_unknown_reranker_names_the_installed_ones(
    with_test_rerankers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_RERANKERS", "reverse,crossencoder")
    # the workspace's own rerankers (the phrases example, fastembed's cross-encoder): not this test's
    monkeypatch.setenv("MCP_MEMORY_DISABLE_PLUGINS", "phrases,fastembed")
    with pytest.raises(UnknownBackendError) as info:
        assembly.build_engine(Settings(), assembly.load_plugins(Settings()))
    assert str(info.value).startswith(
        "The reranker 'crossencoder' is not recognized. Choose one of: failing, heavy, misnamed, reverse."
    )


def test_a_reranker_must_carry_the_name_it_registers_under(
    with_test_rerankers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_RERANKERS", "misnamed")
    with pytest.raises(
        PluginError, match="The reranker factory of 'misnamed' built ReversingReranker named 'other'"
    ):
        assembly.build_engine(Settings(), assembly.load_plugins(Settings()))


def test_the_configured_rerankers_reach_the_engine(
    with_test_rerankers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_RERANKERS", "reverse,failing")
    monkeypatch.setenv("MCP_MEMORY_RERANKER_TIMEOUT", "0.5")
    engine = assembly.build_engine(Settings())
    assert [r.name for r in engine.rerankers] == ["reverse", "failing"]
    assert engine.stats()["rerankers"] == ["reverse", "failing"]
    assert all(stage.timeout == 0.5 for stage in engine.rerank_stages)
    assert assembly.build_engine(Settings(rerankers=())).rerankers == ()


def test_cli_plugins_lists_rerankers_and_marks_the_selected_ones(
    with_test_rerankers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_RERANKERS", "reverse")
    human = CliRunner().invoke(cli, ["plugins"], catch_exceptions=False)
    assert human.exit_code == 0
    lines = human.output.splitlines()
    assert any(
        line.split()[:5] == ["*", "reverse", "reranker", "test-rerankers-package", "9.9"] for line in lines
    )
    assert any(line.split()[:3] == ["failing", "reranker", "test-rerankers-package"] for line in lines)
    data = json.loads(CliRunner().invoke(cli, ["plugins", "--json"], catch_exceptions=False).output)
    rows = {(b["kind"], b["name"]): b for b in data["backends"]}
    assert rows[("reranker", "reverse")]["selected"] is True
    assert rows[("reranker", "failing")]["selected"] is False
    assert rows[("reranker", "failing")]["description"] == "Always raises"
    assert data["selected"]["rerankers"] == ["reverse"]


def test_cli_search_says_when_a_reranker_was_skipped(
    with_test_rerankers: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")  # the CLI's engine must outlive one command
    monkeypatch.setenv("MCP_MEMORY_RERANKERS", "failing")
    runner = CliRunner()
    writer = assembly.build_engine(Settings())
    writer.store_memory("green tea every morning")
    writer.close()
    human = runner.invoke(cli, ["search", "green tea"], catch_exceptions=False)
    assert human.exit_code == 0
    assert "green tea every morning" in human.stdout
    assert "mcp-memory: warning: reranker 'failing' skipped: it raised ValueError" in human.stderr
    data = json.loads(runner.invoke(cli, ["search", "green tea", "--json"], catch_exceptions=False).stdout)
    assert data["count"] == 1 and data["warnings"][0].startswith("reranker 'failing' skipped")
