"""A long memory is acknowledged before its sentences' vectors are written; a server killed with
SIGKILL while they wait loses nothing it acknowledged, and the next server adds them.

The first server runs with ``MCP_MEMORY_PASSAGE_FILL_IDLE=3600``: its filler waits for an hour
without requests before embedding anything, so every sentence is still pending when it is killed
(deterministic, not a race). The restarted server, with the default settings, finishes the backlog
after its warm-up; the test reads the file (plain SQLite tables) until no mark is left.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import INITIALIZE, INITIALIZED, RawServer, module_command, server_env

from mcp_memory_core.passages import split_passages

pytestmark = pytest.mark.e2e

LONG_MEMORIES = (
    "Maya moved to Lisbon in March for the new job. She works as a data engineer at a small fintech. "
    "Her team ships the billing service every Tuesday.",
    "The staging cluster runs on three ARM nodes. Its database is PostgreSQL 16 with pgvector. "
    "Backups go to an S3 bucket every night at two.",
    "Tom keeps bees on the roof of his flat. He sells the honey at the Saturday market. "
    "The jars sell out before noon most weeks.",
    "The release train leaves on the first Monday of each month. Hotfixes skip the train entirely. "
    "Each release needs two approvals from the core team.",
)


def call(number: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": number,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def answer(server: RawServer, number: int, tool: str, **arguments: Any) -> dict[str, Any]:
    reply = server.request(call(number, tool, **arguments), timeout=120)
    assert "result" in reply and not reply["result"].get("isError"), reply
    return dict(json.loads(reply["result"]["content"][0]["text"]))


def read(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """A query on the file's plain tables, through a connection of the test's own."""
    with sqlite3.connect(db, timeout=30) as conn:
        return conn.execute(sql, params).fetchall()


def pending(db: Path) -> set[str]:
    rows = read(db, "SELECT m.id FROM pending_passages p JOIN memories m ON m.seq = p.seq")
    return {row[0] for row in rows}


def vector_rows(db: Path, memory_id: str) -> int:
    rows = read(
        db, "SELECT count(*) FROM passages p JOIN memories m ON m.seq = p.seq WHERE m.id = ?", memory_id
    )
    return int(rows[0][0])


def test_a_server_killed_while_sentences_wait_loses_nothing_and_the_next_server_adds_them(
    default_plugins: None, db_path: Path, tmp_path: Path
) -> None:
    held = server_env(db_path, MCP_MEMORY_PASSAGE_FILL_IDLE="3600")
    acknowledged: dict[str, str] = {}
    with RawServer(module_command(), held, tmp_path / "killed.err") as server:
        assert "result" in server.request(INITIALIZE)
        server.send(INITIALIZED)
        for number, text in enumerate(LONG_MEMORIES, start=10):
            receipt = answer(server, number, "store_memory", content=text)
            assert receipt["status"] == "stored", receipt
            acknowledged[receipt["id"]] = text
        assert pending(db_path) == set(acknowledged)  # each answered with its whole text's vector only
        assert all(vector_rows(db_path, memory_id) == 1 for memory_id in acknowledged)
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=30)
    assert server.proc.returncode == -signal.SIGKILL

    with RawServer(module_command(), server_env(db_path), tmp_path / "restarted.err") as server:
        assert "result" in server.request(INITIALIZE)
        server.send(INITIALIZED)
        for number, (memory_id, text) in enumerate(acknowledged.items(), start=20):
            assert answer(server, number, "get_memory", id=memory_id)["content"] == text
        deadline = time.monotonic() + 120  # the warm-up resumes the backlog: wait until it is done
        while pending(db_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pending(db_path) == set(), (tmp_path / "restarted.err").read_text()
        for number, (memory_id, text) in enumerate(acknowledged.items(), start=30):
            assert vector_rows(db_path, memory_id) == len(split_passages(text)) == 4
            sentence = split_passages(text)[2]
            hits = answer(server, number, "search_memories", query=sentence, limit=3)["results"]
            assert hits and hits[0]["id"] == memory_id, sentence
    assert "Adding the sentence vectors" not in (tmp_path / "restarted.err").read_text()  # no failure


def test_a_search_right_after_the_stores_finds_each_sentence_though_the_filler_never_ran(
    default_plugins: None, db_path: Path, tmp_path: Path
) -> None:
    """An agent that stores and asks at once never leaves the filler idle (here it waits an hour):
    the search itself first adds the waiting sentences, so it ranks what it would have ranked had
    every sentence been embedded before the answer."""
    held = server_env(db_path, MCP_MEMORY_PASSAGE_FILL_IDLE="3600")
    with RawServer(module_command(), held, tmp_path / "held.err") as server:
        assert "result" in server.request(INITIALIZE)
        server.send(INITIALIZED)
        ids = [
            answer(server, number, "store_memory", content=text)["id"]
            for number, text in enumerate(LONG_MEMORIES, start=10)
        ]
        assert pending(db_path) == set(ids)
        sentence = split_passages(LONG_MEMORIES[2])[2]  # "He sells the honey at the Saturday market."
        found = answer(server, 20, "search_memories", query=sentence, limit=3, verbose=True)["results"]
        assert pending(db_path) == set()
        assert found[0]["id"] == ids[2] and found[0]["similarity"] > 0.99, found[0]
        assert all(vector_rows(db_path, memory_id) == 4 for memory_id in ids)
