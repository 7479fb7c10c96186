"""Storage failures as one sentence (StorageError), never an acknowledged write that was not made, and
never a write into a file that is not ours. Each test failed before the store translated and guarded."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mcp_memory_core import Memory, MemoryEngine, MemoryFilter, StorageError
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_sqlite_vec import store as store_module
from mcp_memory_testing.fakes import HashEmbedder

MODEL, DIMS = "test-model-8", 8
ALL = MemoryFilter(namespace=None, include_deleted=True, include_superseded=True)


def vec() -> np.ndarray:
    return np.ones((1, DIMS), np.float32) / np.sqrt(DIMS)


def opened(path: Path, **kwargs: object) -> SqliteVecStore:
    s = SqliteVecStore(path, **kwargs)  # type: ignore[arg-type]
    s.open(MODEL, DIMS)
    return s


def one_sentence(exc: pytest.ExceptionInfo[StorageError]) -> str:
    text = str(exc.value)
    assert "\n" not in text and "Traceback" not in text
    return text


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` read-only for this process: chmod for a normal user; root ignores permissions, so
    the immutable attribute there (skip where the file system has none)."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(0o600)
        return
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot make a file read-only as root here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_new_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "memories.db"
    s = opened(path)
    s.insert([Memory(content="private")], vec())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(f"{path}-wal").stat().st_mode) == 0o600
    s.close()


def test_a_missing_file_is_not_created_when_creating_is_off(tmp_path: Path) -> None:
    path = tmp_path / "mistyped" / "memories.db"
    with pytest.raises(StorageError) as exc:
        opened(path, create=False)
    assert "no memory database" in one_sentence(exc)
    assert not path.exists() and not path.parent.exists()


def test_a_path_below_a_file_is_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(StorageError) as exc:
        opened(tmp_path / "notes.txt" / "memories.db")
    assert one_sentence(exc) == (
        f"{tmp_path / 'notes.txt' / 'memories.db'} cannot be a database: {tmp_path / 'notes.txt'} is a "
        "file, not a folder. Set MCP_MEMORY_DB_PATH to a file path in a folder you can write (e.g. "
        "…/memories.db)."
    )


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mknod needs root")
def test_a_device_is_never_opened_as_a_database(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # what /dev/null is
    for create in (True, False):
        with pytest.raises(StorageError) as exc:
            opened(null, create=create)
        assert "is a device or other special file, not a database file" in one_sentence(exc)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no -journal or -wal beside it
    with pytest.raises(StorageError, match="is a folder, not a database file"):
        opened(tmp_path)


def test_another_programs_database_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StorageError) as exc:
        opened(path)
    assert "another program's SQLite database (tables: notes)" in one_sentence(exc)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()


def test_a_file_that_is_not_sqlite_is_never_written(tmp_path: Path) -> None:
    path = tmp_path / "todo.txt"
    path.write_text("buy milk\n" * 200)
    before = path.read_bytes()
    with pytest.raises(StorageError) as exc:
        opened(path)
    assert "is damaged or is not a SQLite database" in one_sentence(exc)
    assert path.read_bytes() == before


def test_a_damaged_file_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    s = opened(path)
    s.insert([Memory(content=f"memory {i}") for i in range(50)], np.repeat(vec(), 50, axis=0))
    s.close()
    data = bytearray(path.read_bytes())
    data[100:] = os.urandom(len(data) - 100)  # everything after the header, sqlite_master included
    path.write_bytes(bytes(data))
    with pytest.raises(StorageError) as exc:
        s = opened(path)
        s.list(ALL, 100)
    assert "is damaged or is not a SQLite database" in one_sentence(exc)


def test_a_full_disk_is_one_sentence_and_nothing_is_written(tmp_path: Path) -> None:
    s = opened(tmp_path / "memories.db")
    s.insert([Memory(content="before")], vec())
    (pages,) = s._conn.execute("PRAGMA page_count").fetchone()
    s._conn.execute(f"PRAGMA max_page_count={pages}")  # SQLITE_FULL, as from a full disk
    with pytest.raises(StorageError) as exc:
        s.insert([Memory(content="x" * 20_000)], vec())
    assert "is full; nothing was written" in one_sentence(exc)
    assert [m.content for m in s.iter_all()] == ["before"]
    s.close()


HOLD_THE_WRITE_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin
conn.execute("ROLLBACK")
"""


def test_a_lock_held_too_long_is_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "memories.db"
    s = opened(path)
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.3)
    other = subprocess.Popen(  # another process (POSIX locks do not conflict within one process)
        [sys.executable, "-c", HOLD_THE_WRITE_LOCK, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        with pytest.raises(StorageError) as exc:
            s.insert([Memory(content="waits")], vec())
        assert "is busy: another process held its lock" in one_sentence(exc)
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(30)
    assert s.count(ALL) == 0
    s.close()


def test_a_file_deleted_under_a_running_store_never_acknowledges_a_write(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    s = opened(path)
    s.insert([Memory(content="kept")], vec())
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with pytest.raises(StorageError) as exc:
        s.insert([Memory(content="would vanish")], vec())
    assert "was deleted or replaced while mcp-memory was running; nothing was written" in one_sentence(exc)
    s.close()


def test_a_read_only_database_is_searched_and_refuses_writes(tmp_path: Path) -> None:
    # The engine needs a ranker: the workspace's tests session has one; the plugin's own conformance
    # venv (core + testing + this plugin) does not.
    SimilarityRanker = pytest.importorskip("mcp_memory_rankers").SimilarityRanker
    path = tmp_path / "memories.db"
    engine = MemoryEngine(SqliteVecStore(path), HashEmbedder(), SimilarityRanker())
    engine.store_memory("The team deploys on Fridays.")
    engine.close()
    with read_only(path):
        engine = MemoryEngine(SqliteVecStore(path), HashEmbedder(), SimilarityRanker())
        try:
            hits = engine.search_memories("When does the team deploy?")  # access statistics fail: fine
            assert [h.memory.content for h in hits] == ["The team deploys on Fridays."]
            with pytest.raises(StorageError) as exc:
                engine.store_memory("Something new.")
            assert "is read-only; nothing was written" in one_sentence(exc)
        finally:
            engine.close()
