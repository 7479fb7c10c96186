"""Retrieval through a real MCP client: filters, hybrid ranking, explain, and the third-party example
ranker selected with MCP_MEMORY_RANKER — on the real sqlite-vec store and MiniLM."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import module_command, payload, server_env, stdio_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.usefixtures("default_plugins")]


async def store(session: Any, content: str, **fields: Any) -> str:
    return str(payload(await session.call_tool("store_memory", {"content": content, **fields}))["id"])


async def search(session: Any, query: str, **args: Any) -> list[dict[str, Any]]:
    return list(payload(await session.call_tool("search_memories", {"query": query, **args}))["results"])


async def test_filtered_search_never_comes_back_short(db_path: Path, tmp_path: Path) -> None:
    # What the filter leaves is unrelated to the query, so the relevance floor would (rightly) hold it
    # back: switched off, this checks that over-fetching fills the limit past filtered-out matches.
    env = server_env(db_path, MCP_MEMORY_RELEVANCE_FLOOR="false")
    async with stdio_session(module_command(), env, tmp_path / "err.log") as session:
        for i in range(25):  # closer to the query, but filtered out
            await store(session, f"Deploy checklist item {i}: run the database migration", tags=["deploy"])
        wanted = [
            await store(session, "Rotate the API keys every quarter", tags=["security"], type="procedural"),
            await store(session, "The on-call rota lives in the wiki", tags=["security", "ops"]),
            await store(
                session, "Backups are encrypted with age", tags=["security"], metadata={"team": "infra"}
            ),
        ]
        hits = await search(session, "deploy checklist database migration", limit=3, tags=["security"])
        assert sorted(h["id"] for h in hits) == sorted(wanted)
        hits = await search(session, "deploy checklist", limit=5, tags=["security", "ops"], tags_match="all")
        assert [h["id"] for h in hits] == [wanted[1]]
        hits = await search(session, "deploy checklist", limit=5, types=["procedural"])
        assert [h["id"] for h in hits] == [wanted[0]]
        hits = await search(session, "deploy checklist", limit=5, metadata={"team": "infra"})
        assert [h["id"] for h in hits] == [wanted[2]]
        listed = payload(await session.call_tool("list_memories", {"tags": ["security"]}))
        assert listed["total"] == 3


async def test_hybrid_ranker_finds_the_exact_rare_word(db_path: Path, tmp_path: Path) -> None:
    env = server_env(db_path, MCP_MEMORY_RANKER="hybrid")
    async with stdio_session(module_command(), env, tmp_path / "err.log") as session:
        target = await store(session, "The staging cluster is called kx-7731 in the console")
        for text in (
            "The staging cluster runs in the Frankfurt region",
            "Staging is rebuilt every night from main",
            "The production cluster has three nodes",
        ):
            await store(session, text)
        hits = await search(session, "kx-7731", explain=True)
        assert hits[0]["id"] == target
        assert hits[0]["score_parts"]["keyword"] > 0 and hits[0]["score_parts"]["vector"] > 0


@pytest.mark.skipif(
    importlib.util.find_spec("mcp_memory_ranker_mmr") is None,
    reason="examples/mcp-memory-ranker-mmr not installed",
)
async def test_example_third_party_ranker_is_selectable(db_path: Path, tmp_path: Path) -> None:
    env = server_env(db_path, MCP_MEMORY_RANKER="mmr", MCP_MEMORY_MMR_DIVERSITY="0.5")
    async with stdio_session(module_command(), env, tmp_path / "err.log") as session:
        first = await store(session, "The team deploys the API on Tuesday mornings")
        repeat = await store(session, "The team deploys the API on Tuesday mornings, usually")
        other = await store(session, "Rollbacks of the API need the on-call engineer")
        hits = await search(session, "when does the team deploy the API", explain=True)
        order = [h["id"] for h in hits]
        assert set(order) == {first, repeat, other}
        assert order.index(other) < max(order.index(first), order.index(repeat))  # the near-repeat went down
        assert "redundancy" in hits[0]["score_parts"]
    assert "ranker=mmr" in (tmp_path / "err.log").read_text()
