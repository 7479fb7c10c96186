"""The lifecycle surface through a real MCP client over stdio, on the real sqlite-vec store and MiniLM:
TTL and pins, hard delete, clear, dedup and conflicts, namespaces, history, context, the stats
resource and the memory_injection prompt."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import error_text, module_command, payload, server_env, stdio_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.usefixtures("default_plugins")]


async def call(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await session.call_tool(tool, args))


async def search_ids(session: Any, query: str, **args: Any) -> list[str]:
    return [r["id"] for r in (await call(session, "search_memories", query=query, **args))["results"]]


async def test_ttl_pin_and_expiry(db_path: Path, tmp_path: Path) -> None:
    env = server_env(db_path, MCP_MEMORY_TTL_WORKING="2s", MCP_MEMORY_NAMESPACE="ttl")
    async with stdio_session(module_command(), env, tmp_path / "err.log") as session:
        scratch = await call(
            session, "store_memory", content="Scratch note: rebasing branch feature-x", type="working"
        )
        pinned = await call(
            session,
            "store_memory",
            content="Scratch note: keep branch feature-y",
            type="working",
            pinned=True,
        )
        fact = await call(session, "store_memory", content="Scratch note: branches are squashed on merge")
        scratch_full = await call(session, "get_memory", id=scratch["id"])
        pinned_full = await call(session, "get_memory", id=pinned["id"])
        assert scratch_full["expires_at"] is not None and pinned_full["expires_at"] is None
        assert scratch_full["age"] == "just now"
        assert set(await search_ids(session, "scratch note branch")) == {
            scratch["id"],
            pinned["id"],
            fact["id"],
        }
        await asyncio.sleep(2.5)
        assert set(await search_ids(session, "scratch note branch")) == {pinned["id"], fact["id"]}
        listed = await call(session, "list_memories")
        assert {m["id"] for m in listed["memories"]} == {pinned["id"], fact["id"]}
        assert (await call(session, "get_memory", id=scratch["id"]))["status"] == "expired"
        unpinned = await call(session, "pin_memory", id=pinned["id"], pinned=False)
        assert unpinned["pinned"] is False and unpinned["expires_at"] is not None
        await asyncio.sleep(0.1)
        assert set(await search_ids(session, "scratch note branch")) == {fact["id"]}


async def test_hard_delete_clear_and_namespaces(db_path: Path, tmp_path: Path) -> None:
    env = server_env(db_path, MCP_MEMORY_NAMESPACE="alpha")
    async with stdio_session(module_command(), env, tmp_path / "err.log") as session:
        a = await call(session, "store_memory", content="The user's home address is 1 Elm Street")
        b = await call(
            session, "update_memory", id=a["id"], content="The user's home address is 2 Oak Avenue"
        )
        other = await call(
            session, "store_memory", content="Project beta deploys on Fridays", namespace="beta"
        )
        assert other["id"] not in await search_ids(session, "deploys on Fridays")  # not across namespaces
        assert (await search_ids(session, "deploys on Fridays", namespace="*"))[0] == other["id"]
        spaces = await call(session, "list_namespaces")
        assert spaces["default"] == "alpha"
        assert {"name": "beta", "memories": 1} in spaces["namespaces"]
        purged = await call(session, "delete_memory", id=b["id"], hard=True)
        assert purged["status"] == "purged" and set(purged["purged"]) == {a["id"], b["id"]}
        assert "No memory with id" in error_text(await session.call_tool("get_memory", {"id": a["id"]}))
        assert await search_ids(session, "home address Elm Oak") == []
        refused = await session.call_tool("clear_memories", {"namespace": "beta", "confirm": "sure"})
        assert "confirm" in error_text(refused)
        cleared = await call(session, "clear_memories", namespace="beta", confirm="beta")
        assert cleared["purged"] == 1
        assert other["id"] not in await search_ids(session, "deploys on Fridays", namespace="*")
        bad = await session.call_tool("store_memory", {"content": "x", "namespace": "Not Valid"})
        assert "namespace" in error_text(bad)


async def test_dedup_and_conflicts(db_path: Path, tmp_path: Path) -> None:
    async with stdio_session(module_command(), server_env(db_path), tmp_path / "err.log") as session:
        first = await call(session, "store_memory", content="The user prefers dark mode in every editor")
        again = await call(session, "store_memory", content="the user prefers DARK mode in every editor ")
        assert again["status"] == "duplicate" and again["id"] == first["id"]
        near = await call(
            session, "store_memory", content="The user prefers dark mode in all of their editors"
        )
        assert near["status"] == "stored"
        assert near["similar"] and near["similar"][0]["id"] == first["id"]
        assert (
            0.9 <= near["similar"][0]["similarity"] <= 1.0 and near["similar"][0]["relation"] == "duplicate"
        )
    policy = server_env(tmp_path / "policy.db", MCP_MEMORY_CONFLICT_POLICY="supersede")
    async with stdio_session(module_command(), policy, tmp_path / "err2.log") as session:
        old = await call(session, "store_memory", content="The user prefers dark mode in every editor")
        new = await call(
            session, "store_memory", content="The user prefers dark mode in all of their editors"
        )
        assert new["status"] == "superseded" and new["superseded"] == old["id"]
        assert (await call(session, "get_memory", id=old["id"]))["head_id"] == new["id"]
    assert "conflict policy 'supersede' replaces" in (tmp_path / "err2.log").read_text()


async def test_history_context_resources_and_prompt(db_path: Path, tmp_path: Path) -> None:
    async with stdio_session(module_command(), server_env(db_path), tmp_path / "err.log") as session:
        a = await call(session, "store_memory", content="The team standup is at 9:00", tags=["team"])
        b = await call(session, "update_memory", id=a["id"], content="The team standup is at 9:30")
        c = await call(session, "update_memory", id=b["id"], content="The team standup moved to 10:00")
        view = await call(session, "get_memory", id=a["id"], history=True)
        assert [v["id"] for v in view["history"]] == [a["id"], b["id"], c["id"]]
        assert [v["current"] for v in view["history"]] == [False, False, True]
        context = (await call(session, "get_memory", id=c["id"]))["metadata"]["context"]
        assert set(context) == {"cwd", "project", "platform"}

        stats = json.loads((await session.read_resource("memory://stats")).contents[0].text)
        assert stats["current_in_namespace"] == 1 and stats["embedder"].startswith(
            "sentence-transformers/all-MiniLM"
        )

        for i in range(12):
            await call(session, "store_memory", content=f"Team fact number {i}: the retro happens on day {i}")
        prompt = await session.get_prompt(
            "memory_injection", {"query": "when is the standup?", "token_budget": "60"}
        )
        text = prompt.messages[0].content.text
        assert text.startswith("Relevant memories") and "standup moved to 10:00" in text.splitlines()[1]
        assert len(text.splitlines()) < 13  # the budget cut the list
        big = await session.get_prompt("memory_injection", {"query": "team", "token_budget": "4000"})
        assert len(big.messages[0].content.text.splitlines()) == 14  # header + all 13 current memories
