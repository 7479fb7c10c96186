"""Tidying end to end, on the real sqlite-vec store and MiniLM: memories stored through a real MCP
client over stdio (near-duplicates, junk, facts), then `mcp-memory tidy --json` and
`tidy --apply --yes` in subprocesses, then the result read back through MCP: duplicates folded into
chains, junk tombstoned, nothing else touched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import cli, module_command, payload, server_env, stdio_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.usefixtures("default_plugins")]

DUPLICATES = [
    ("Maya's manager is Dana Kim", "Dana Kim is Maya's manager"),
    ("Deploys go out on Fridays.", "deploys go out on fridays!"),
]
JUNK = ["thanks!", "ok", "let me think about it"]
FACTS = ["Maya is vegetarian", "Use uv", "The staging database is PostgreSQL 15", "Maya is allergic to cats"]


async def call(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await session.call_tool(tool, args))


async def test_tidy_folds_duplicates_and_tombstones_junk_and_nothing_else(
    db_path: Path, tmp_path: Path
) -> None:
    env = server_env(db_path, MCP_MEMORY_NAMESPACE="tidy", MCP_MEMORY_AUTO_CONTEXT="false")
    async with stdio_session(module_command(), env, tmp_path / "err.log") as session:
        ids = {}
        for text in [t for pair in DUPLICATES for t in pair] + JUNK + FACTS:
            ids[text] = (await call(session, "store_memory", content=text))["id"]
        before = {text: await call(session, "get_memory", id=ids[text]) for text in FACTS}

    shown = cli(env, "tidy", "--json")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    clusters = [p for p in report["proposals"] if p["kind"] == "duplicates"]
    assert sorted(tuple(p["ids"]) for p in clusters) == sorted((ids[a], ids[b]) for a, b in DUPLICATES)
    assert sorted(i for p in report["proposals"] if p["kind"] == "junk" for i in p["ids"]) == sorted(
        ids[t] for t in JUNK
    )
    refused = cli(env, "tidy", "--apply")
    assert refused.returncode == 2 and "--yes" in refused.stderr and refused.stdout == ""

    done = cli(env, "tidy", "--apply", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    applied = json.loads(done.stdout)["applied"]
    assert applied["folded"] == {ids[b]: [ids[a]] for a, b in DUPLICATES}
    assert sorted(applied["junk"]) == sorted(ids[t] for t in JUNK) and applied["skipped"] == []

    async with stdio_session(module_command(), env, tmp_path / "err2.log") as session:
        for older, newer in DUPLICATES:
            view = await call(session, "get_memory", id=ids[older], history=True)
            assert view["status"] == "superseded" and view["head_id"] == ids[newer]
            assert [m["id"] for m in view["history"]] == [ids[older], ids[newer]]
        for text in JUNK:
            assert (await call(session, "get_memory", id=ids[text]))["status"] == "deleted"
        for text in FACTS:
            now = await call(session, "get_memory", id=ids[text])
            assert now["status"] == "current" and now["updated_at"] == before[text]["updated_at"]
    assert json.loads(cli(env, "tidy", "--json").stdout)["proposals"] == []
