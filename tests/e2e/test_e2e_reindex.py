"""``mcp-memory reindex`` across a model change, as a user runs it: a store written with the testing
embedder (``hash``), the default MiniLM configured, the first run stopped with Ctrl-C (SIGINT) half
way, the store still answering with the old model meanwhile, a second run going on from there, then
search by the new model finds the right memory and the old configuration is refused."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from e2e_helpers import script_command, server_env

from mcp_memory_core import MemoryEngine
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_testing import HashEmbedder, SimilarityRanker

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("default_plugins")]

FACTS = {
    "which port does the staging database use?": "The staging database listens on port 5432",
    "who runs the payments team?": "Maria leads the payments team since March",
    "when do backups happen?": "Nightly backups start at two in the morning",
}
FILLER = 600


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*script_command(), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def new_rows(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        try:
            return int(conn.execute("SELECT count(DISTINCT seq) FROM passages_next").fetchone()[0])
        except sqlite3.OperationalError:  # not created yet
            return 0


def test_reindex_from_the_fake_to_minilm_resumes_after_ctrl_c(tmp_path: Path) -> None:
    db = tmp_path / "memories.db"
    old = MemoryEngine(SqliteVecStore(db), HashEmbedder(), SimilarityRanker(), namespace="e2e")
    for fact in FACTS.values():
        old.store_memory(fact)
    for i in range(FILLER):
        old.store_memory(f"Filler note {i}: the {i % 7}th shelf holds box {i}")
    old.close()
    total = len(FACTS) + FILLER
    hashed = server_env(db, MCP_MEMORY_EMBEDDER="hash", MCP_MEMORY_NAMESPACE="e2e")
    minilm = server_env(db, MCP_MEMORY_NAMESPACE="e2e")

    refused = run(minilm, "search", "backups")
    assert refused.returncode == 1 and "`mcp-memory reindex`" in refused.stderr, refused.stderr

    first = subprocess.Popen(
        [*script_command(), "reindex", "--batch-size", "16"],
        env=minilm,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    while new_rows(db) < 64 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 130, err
    assert "Interrupted:" in err and "Run `mcp-memory reindex` again to go on" in err
    kept = new_rows(db)
    assert 64 <= kept < total

    meanwhile = run(hashed, "search", "backups", "--json")  # the old model still answers
    assert meanwhile.returncode == 0, meanwhile.stderr

    second = run(minilm, "reindex", "--json")
    assert second.returncode == 0, second.stderr
    summary = json.loads(second.stdout)
    assert summary["kind"] == "reembed" and summary["previous"] == "hash-64"
    assert summary["model"].startswith("sentence-transformers/all-MiniLM-L6-v2")
    assert summary["embedded"] == total - kept  # nothing embedded twice

    for query, fact in FACTS.items():
        found = run(minilm, "search", query, "--json", "--limit", "3")
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"][0]["content"] == fact
    stale = run(hashed, "search", "backups")
    assert stale.returncode == 1 and "mcp-memory reindex" in stale.stderr
    again = run(minilm, "reindex")
    assert again.returncode == 0 and "nothing to re-embed" in again.stdout
