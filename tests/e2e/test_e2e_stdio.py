"""The real server over stdio, driven by the MCP SDK's ClientSession: every tool, chains, deletes, errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import (
    INITIALIZE,
    INITIALIZED,
    RawServer,
    ctrl_c_reaches_children,
    error_text,
    module_command,
    payload,
    script_command,
    server_env,
    stdio_session,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("default_plugins")]

TOOLS = {
    "store_memory",
    "search_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "list_memories",
    "pin_memory",
    "list_namespaces",
    "clear_memories",
}


async def call(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await session.call_tool(tool, args))


async def search_ids(session: Any, query: str, limit: int = 10) -> list[str]:
    return [r["id"] for r in (await call(session, "search_memories", query=query, limit=limit))["results"]]


@pytest.mark.parametrize("launcher", ["module", "script"])
async def test_every_tool_over_stdio(launcher: str, db_path: Path, tmp_path: Path) -> None:
    command = module_command() if launcher == "module" else script_command()
    errlog = tmp_path / "server.err"
    async with stdio_session(command, server_env(db_path), errlog) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == TOOLS

        # store → search finds it
        coffee = await call(
            session,
            "store_memory",
            content="The user takes their coffee black, no sugar",
            metadata={"kind": "pref"},
        )
        assert coffee["status"] == "stored" and uuid.UUID(coffee["id"])
        await call(
            session, "store_memory", content="The CI pipeline runs on GitHub Actions with a nightly job"
        )
        await call(session, "store_memory", content="Maria is the tech lead of the payments team")
        found = await call(session, "search_memories", query="how does the user like their coffee?", limit=3)
        hits = found["results"]
        assert hits[0]["id"] == coffee["id"]
        assert set(hits[0]) == {"id", "content", "namespace", "occurred_at", "score"}  # compact
        full = (
            await call(
                session,
                "search_memories",
                query="how does the user like their coffee?",
                limit=3,
                verbose=True,
            )
        )["results"]
        metadata = dict(full[0]["metadata"])
        context = metadata.pop("context")  # seed 001's automatic context, attached by the server
        assert metadata == {"kind": "pref"} and full[0]["similarity"] > 0.4
        assert set(context) == {"cwd", "project", "platform"}

        # update A → B → C; a search in A's wording returns C
        a = await call(
            session, "store_memory", content="The staging database runs PostgreSQL 13 on host db-stage-1"
        )
        b = await call(
            session, "update_memory", id=a["id"], content="Staging moved to PostgreSQL 15 on db-stage-2"
        )
        assert b["status"] == "updated" and b["superseded"] == a["id"]
        c = await call(
            session, "update_memory", id=b["id"], content="Staging now uses managed Postgres 16 in AWS RDS"
        )
        result = (
            await call(session, "search_memories", query="PostgreSQL 13 staging database on db-stage-1")
        )["results"]
        chain_hits = [r for r in result if r["id"] in {a["id"], b["id"], c["id"]}]
        assert [r["id"] for r in chain_hits] == [c["id"]]  # one result for the chain: its head
        assert chain_hits[0]["content"].startswith("Staging now uses managed Postgres 16")
        assert chain_hits[0]["matched_id"] in {a["id"], b["id"]}

        # get on a superseded memory: as-is, with status and head
        old = await call(session, "get_memory", id=a["id"])
        assert old["status"] == "superseded" and old["head_id"] == c["id"]
        assert old["content"].startswith("The staging database runs PostgreSQL 13")
        assert old["superseded_by"] == b["id"]
        assert (await call(session, "get_memory", id=c["id"]))["status"] == "current"

        # delete → never in search again (not even through its chain's old wording)
        deleted = await call(session, "delete_memory", id=c["id"])
        assert deleted == {"id": c["id"], "status": "deleted", "success": True}
        assert (await call(session, "delete_memory", id=c["id"]))["status"] == "already_deleted"
        for query in ("managed Postgres 16 in AWS RDS", "PostgreSQL 13 staging database", "staging database"):
            assert not {a["id"], b["id"], c["id"]} & set(await search_ids(session, query, limit=20))
        gone = await call(session, "get_memory", id=c["id"])
        assert gone["status"] == "deleted" and gone["deleted"] is True

        # list: current memories only, paged
        page = await call(session, "list_memories", limit=2)
        assert page["total"] == 3 and len(page["memories"]) == 2 and page["next_cursor"]
        rest = await call(session, "list_memories", limit=2, cursor=page["next_cursor"])
        assert len(rest["memories"]) == 1 and rest["next_cursor"] is None

        # the resource
        resource = await session.read_resource(f"memory://{coffee['id']}")
        assert json.loads(resource.contents[0].text)["content"].startswith("The user takes their coffee")

        # error paths are tool errors (isError), with the engine's message
        unknown = "00000000-0000-4000-8000-000000000000"
        assert "non-empty" in error_text(await session.call_tool("store_memory", {"content": ""}))
        assert "not a memory id" in error_text(await session.call_tool("get_memory", {"id": "x"}))
        assert "No memory with id" in error_text(await session.call_tool("get_memory", {"id": unknown}))
        assert "No memory with id" in error_text(await session.call_tool("delete_memory", {"id": unknown}))
        assert "from 1 to 100" in error_text(
            await session.call_tool("search_memories", {"query": "x", "limit": 1000})
        )
        assert "cursor is not valid" in error_text(
            await session.call_tool("list_memories", {"cursor": "abc"})
        )
        superseded = error_text(await session.call_tool("update_memory", {"id": a["id"], "content": "fork"}))
        assert "superseded" in superseded

    stderr = errlog.read_text()
    assert "serving over stdio" in stderr  # logs went to stderr (stdout would have broken the session)
    assert "Warm-up done" in stderr


async def test_memories_persist_across_restarts_and_the_cli_reads_them(db_path: Path, tmp_path: Path) -> None:
    env = server_env(db_path)
    async with stdio_session(module_command(), env, tmp_path / "one.err") as session:
        stored = await call(session, "store_memory", content="The user's dog is a corgi named Biscuit")
    async with stdio_session(module_command(), env, tmp_path / "two.err") as session:
        assert (await search_ids(session, "what breed is the user's pet?"))[0] == stored["id"]
    assert db_path.exists()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mcp_memory_server", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    listed = json.loads(cli("list", "--json").stdout)
    assert [m["id"] for m in listed["memories"]] == [stored["id"]]
    found = cli("search", "pet dog breed")
    assert found.returncode == 0 and stored["id"] in found.stdout.splitlines()[0]
    shown = json.loads(cli("get", stored["id"], "--json").stdout)
    assert shown["content"] == "The user's dog is a corgi named Biscuit" and shown["status"] == "current"
    missing = cli("get", "00000000-0000-4000-8000-000000000000")
    assert (
        missing.returncode == 1
        and "No memory with id" in missing.stderr
        and "Traceback" not in missing.stderr
    )


def _stdout_lines(server: RawServer) -> list[bytes]:
    lines = []
    while not server.lines.empty():
        lines.append(server.lines.get_nowait())
    return lines


@pytest.mark.usefixtures("ctrl_c_reaches_servers")
@pytest.mark.parametrize("args", [(), ("serve",)], ids=["default", "serve"])
def test_ctrl_c_stops_the_stdio_server_with_130_and_no_traceback(
    args: tuple[str, ...], db_path: Path, tmp_path: Path
) -> None:
    errlog = tmp_path / "server.err"
    with RawServer([*script_command(), *args], server_env(db_path), errlog) as server:
        assert "result" in server.request(INITIALIZE)
        server.send(INITIALIZED)
        server.proc.send_signal(signal.SIGINT)
        assert server.proc.wait(timeout=120) == 130, errlog.read_text()
        leftover = _stdout_lines(server)
    stderr = errlog.read_text()
    assert "Traceback" not in stderr, stderr
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in leftover)  # stdout stays protocol only
    assert "meant to be started by an MCP client" not in stderr  # stdin is a pipe: a client runs it


@pytest.mark.usefixtures("ctrl_c_reaches_servers")
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a pseudo-terminal on stdin")
def test_on_a_terminal_the_stdio_server_says_what_it_is_and_ctrl_c_stops_it(
    db_path: Path, tmp_path: Path
) -> None:
    import os
    import pty

    controller, terminal = pty.openpty()
    errlog = tmp_path / "server.err"
    with errlog.open("w") as err:
        proc = subprocess.Popen(
            script_command(), env=server_env(db_path), stdin=terminal, stdout=subprocess.PIPE, stderr=err
        )
    os.close(terminal)
    try:
        deadline = time.monotonic() + 120  # only bounds a failing run
        while "mcp-memory ui" not in errlog.read_text():  # the line is written before serving
            assert proc.poll() is None and time.monotonic() < deadline, errlog.read_text()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130, errlog.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(controller)
    assert proc.stdout is not None and proc.stdout.read() == b""
    told = [line for line in errlog.read_text().splitlines() if "mcp-memory ui" in line]
    assert len(told) == 1 and "MCP server" in told[0] and "`mcp-memory config`" in told[0], told
    assert "Traceback" not in errlog.read_text()


def test_children_take_ctrl_c_even_when_this_run_ignores_it() -> None:
    """A run started with SIGINT ignored (a script's background job) still gets its Ctrl-C tests
    right: the servers they start take SIGINT as from a terminal."""
    probe = [
        sys.executable,
        "-c",
        "import signal, sys; sys.exit(0 if signal.getsignal(signal.SIGINT) is signal.default_int_handler else 3)",
    ]
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert subprocess.run(probe, check=False).returncode == 3  # ignored, and passed on
        with ctrl_c_reaches_children():
            assert subprocess.run(probe, check=False).returncode == 0
    finally:
        signal.signal(signal.SIGINT, previous)
