"""Export and import end to end: memories written through a real MCP stdio client (sqlite-vec + MiniLM),
``mcp-memory export`` → ``mcp-memory import`` into a fresh database → export again gives the same
bytes, and a fresh MCP session on the imported database finds the memories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import module_command, payload, server_env, stdio_session

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("default_plugins")]

EPOCH = "1767225600"  # SOURCE_DATE_EPOCH: exported_at = 2026-01-01T00:00:00Z in both exports


async def call(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await session.call_tool(tool, args))


def cli(db_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = server_env(db_path, MCP_MEMORY_NAMESPACE="e2e", SOURCE_DATE_EPOCH=EPOCH)
    proc = subprocess.run(
        [*module_command(), *args], env=env, capture_output=True, text=True, timeout=180, encoding="utf-8"
    )
    assert proc.returncode == 0, proc.stderr
    return proc


async def test_export_import_export_is_identical_and_searchable(tmp_path: Path) -> None:
    original, fresh = tmp_path / "a" / "memories.db", tmp_path / "b" / "memories.db"
    env = server_env(original, MCP_MEMORY_NAMESPACE="e2e")
    async with stdio_session(module_command(), env, tmp_path / "a.err") as session:
        a = await call(
            session, "store_memory", content="The staging database runs PostgreSQL 13 on db-stage-1"
        )
        b = await call(
            session, "update_memory", id=a["id"], content="Staging moved to PostgreSQL 15 on db-stage-2"
        )
        coffee = await call(
            session,
            "store_memory",
            content="Zoë takes her coffee black — no sugar ☕",
            metadata={"source": "chat", "tags_note": "ünïcödé"},
            tags=["preference"],
        )
        await call(session, "pin_memory", id=coffee["id"])
        gone = await call(session, "store_memory", content="The VPN password rotates every Friday")
        await call(session, "delete_memory", id=gone["id"])
        await call(session, "search_memories", query="coffee", limit=1)  # access statistics

    first = tmp_path / "first.jsonl"
    exported = cli(original, "export", "--all-namespaces", "--output", str(first))
    assert "Exported 4 memories" in exported.stderr
    lines = first.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["count"] == 4
    records = {r["id"]: r for r in map(json.loads, lines[1:])}
    assert records[a["id"]]["superseded_by"] == b["id"]
    assert records[gone["id"]]["deleted_at"] is not None
    assert records[coffee["id"]]["pinned"] is True and records[coffee["id"]]["access_count"] == 1

    imported = cli(fresh, "import", str(first))
    assert imported.stdout.strip() == "imported 4, skipped 0 (already present)"
    again = cli(fresh, "import", str(first))
    assert again.stdout.strip() == "imported 0, skipped 4 (already present)"
    second = tmp_path / "second.jsonl"
    cli(fresh, "export", "--all-namespaces", "-o", str(second))
    assert second.read_bytes() == first.read_bytes()
    assert cli(fresh, "export", "--all-namespaces").stdout.encode("utf-8") == first.read_bytes()

    env = server_env(fresh, MCP_MEMORY_NAMESPACE="e2e")
    async with stdio_session(module_command(), env, tmp_path / "b.err") as session:
        hits = (await call(session, "search_memories", query="how does Zoë like her coffee?", limit=3))[
            "results"
        ]
        assert hits[0]["id"] == coffee["id"]
        # the old wording, re-embedded on import, still finds the head of its chain
        hits = (await call(session, "search_memories", query="PostgreSQL 13 on db-stage-1", limit=3))[
            "results"
        ]
        assert hits[0]["id"] == b["id"] and hits[0]["matched_id"] == a["id"]
        hits = (await call(session, "search_memories", query="VPN password", limit=5))["results"]
        assert gone["id"] not in [h["id"] for h in hits]


async def test_sqlite_to_postgres_and_back_is_lossless(tmp_path: Path, postgres_url: str) -> None:
    """Moving between stores: ``mcp-memory export`` from SQLite → ``import`` into PostgreSQL → export
    gives the same bytes (ids, chains, tombstones, pins, access statistics, dates, threads, owners
    and scopes, and the vectors: exported with --vectors, reused on import, not embedded again), and
    so does the way back into a fresh SQLite file."""
    source, back = tmp_path / "a" / "memories.db", tmp_path / "c" / "memories.db"
    env = server_env(source, MCP_MEMORY_NAMESPACE="e2e")
    async with stdio_session(module_command(), env, tmp_path / "a.err") as session:
        first = await call(
            session, "store_memory", content="Deploys run from ops/deploy.sh", thread="ops chat"
        )
        await call(session, "update_memory", id=first["id"], content="Deploys run from ops/release.sh")
        shared = await call(
            session,
            "store_memory",
            content="Caroline: the pottery class starts in May",
            occurred_at="2023-05-08T13:56:00Z",
            thread="session 1",
            privacy_scope="public",
            tags=["pottery", "ünï"],
            metadata={"n": 1, "flag": True, "none": None},
        )
        await call(session, "pin_memory", id=shared["id"])
        gone = await call(session, "store_memory", content="The VPN password rotates every Friday")
        await call(session, "delete_memory", id=gone["id"])

    exported = tmp_path / "sqlite.jsonl"
    cli(source, "export", "--all-namespaces", "--vectors", "--output", str(exported))
    postgres = {"MCP_MEMORY_STORE": "postgres", "MCP_MEMORY_DATABASE_URL": postgres_url}

    def pg(*args: str) -> subprocess.CompletedProcess[str]:
        env = server_env(
            tmp_path / "unused.db", MCP_MEMORY_NAMESPACE="e2e", SOURCE_DATE_EPOCH=EPOCH, **postgres
        )
        done = subprocess.run(
            [*module_command(), *args], env=env, capture_output=True, text=True, timeout=180, encoding="utf-8"
        )
        assert done.returncode == 0, done.stderr
        return done

    assert pg("import", str(exported)).stdout.strip() == (
        "imported 4, skipped 0 (already present); reused the file's vectors for 4 (not embedded again)"
    )
    from_pg = tmp_path / "postgres.jsonl"
    pg("export", "--all-namespaces", "--vectors", "--output", str(from_pg))
    assert from_pg.read_bytes() == exported.read_bytes()
    assert pg("import", str(exported)).stdout.strip() == "imported 0, skipped 4 (already present)"

    assert "reused the file's vectors for 4" in cli(back, "import", str(from_pg)).stdout
    again = tmp_path / "again.jsonl"
    cli(back, "export", "--all-namespaces", "--vectors", "--output", str(again))
    assert again.read_bytes() == exported.read_bytes()

    # and the imported memories are found in PostgreSQL by meaning, with the vectors they came with
    found = json.loads(pg("search", "when does the pottery class start?", "--json").stdout)["results"]
    assert found[0]["id"] == shared["id"]
