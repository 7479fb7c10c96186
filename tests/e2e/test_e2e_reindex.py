"""``mcp-memory reindex`` across a model change, as a user runs it: a store written with the testing
embedder (``hash``), the default MiniLM configured, the first run stopped with Ctrl-C (SIGINT) half
way, the store still answering with the old model meanwhile, a second run going on from there, then
search by the new model finds the right memory and the old configuration is refused."""

from __future__ import annotations

import contextlib
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


def count_new_rows(conn: sqlite3.Connection) -> int:
    """Memories with a row of the new model so far. A file locked longer than the connection's busy
    timeout raises, as any other error does: only a side table not created yet counts as none."""
    try:
        return int(conn.execute("SELECT count(DISTINCT seq) FROM passages_next").fetchone()[0])
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return 0


def new_rows(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)) as conn:
        return count_new_rows(conn)


def interrupt_once_committed(proc: subprocess.Popen[str], db: Path, rows: int) -> int:
    """Send Ctrl-C (SIGINT) to a running reindex once it has committed ``rows`` rows of the new model,
    and return how many it had. Each look holds the file's write lock (waiting for a commit under way),
    so the run can neither commit another batch nor finish between the count and the signal."""
    with contextlib.closing(sqlite3.connect(db, timeout=60, isolation_level=None)) as conn:
        while proc.poll() is None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                seen = count_new_rows(conn)
                if seen >= rows:
                    proc.send_signal(signal.SIGINT)
                    return seen
            finally:
                conn.execute("ROLLBACK")
            time.sleep(0.02)  # let the run take the lock for its next batch
    raise AssertionError(f"reindex ended (status {proc.returncode}) before {rows} rows were seen")


@pytest.mark.usefixtures("ctrl_c_reaches_servers")
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
    try:
        seen = interrupt_once_committed(first, db, 64)
    finally:
        _, err = first.communicate(timeout=300)
    assert first.returncode == 130, err
    assert "Interrupted:" in err and "Run `mcp-memory reindex` again to go on" in err
    kept = new_rows(db)
    assert 64 <= seen <= kept < total

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


def test_a_locked_file_is_not_read_as_no_rows_yet(tmp_path: Path) -> None:
    """The poller above waits on a locked file (its busy timeout) and fails when it stays locked; it
    never takes the lock for "no rows yet" and so misses the moment to interrupt."""
    db = tmp_path / "locked.db"
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("CREATE TABLE passages_next (vrow INTEGER PRIMARY KEY, seq INTEGER, embedding BLOB)")
        writer.execute("INSERT INTO passages_next VALUES (1, 1, x'00')")
        assert new_rows(db) == 1
        writer.execute("PRAGMA locking_mode=EXCLUSIVE")
        writer.execute("BEGIN EXCLUSIVE")  # held until the end of the block: readers are locked out
        reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0)
        with contextlib.closing(reader), pytest.raises(sqlite3.OperationalError, match="locked"):
            count_new_rows(reader)
        writer.execute("ROLLBACK")
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as reader:
        assert count_new_rows(reader) == 1
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    assert new_rows(empty) == 0  # the side table not created yet: no rows, the one case read as zero
