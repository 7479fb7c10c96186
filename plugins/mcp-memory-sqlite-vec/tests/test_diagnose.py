"""``diagnose()`` (what ``mcp-memory doctor`` asks): integrity, schema version and model of a file,
read on a store that is not open, never creating, migrating or writing anything."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from mcp_memory_core import Memory
from mcp_memory_sqlite_vec import SCHEMA_VERSION, SqliteVecStore

MODEL, DIMS = "test-model-8", 8


def filled(path: Path) -> None:
    store = SqliteVecStore(path)
    store.open(MODEL, DIMS)
    store.insert([Memory(content="the cat sat on the mat")], np.ones((1, DIMS), np.float32) / np.sqrt(DIMS))
    store.close()


def test_a_healthy_file_says_its_schema_model_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    filled(path)
    found = SqliteVecStore(path).diagnose()
    assert found.exists and found.problems == () and found.path == str(path)
    assert (found.schema_version, found.supported_schema_version) == (SCHEMA_VERSION, SCHEMA_VERSION)
    assert (found.model_id, found.dimensions) == (MODEL, DIMS)
    assert found.details["memories"] == 1 and found.details["vectors"] == 1
    assert "sqlite-vec" in found.details["binding"]


def test_a_missing_file_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "memories.db"
    found = SqliteVecStore(path).diagnose()
    assert not found.exists and found.model_id is None
    assert not path.parent.exists()


def test_garbage_is_a_problem_not_an_exception_and_stays_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    path.write_bytes(b"\x13\x37 not a database " * 300)
    before = path.read_bytes()
    found = SqliteVecStore(path).diagnose()
    assert found.exists and len(found.problems) == 1
    assert "damaged or is not a SQLite database" in found.problems[0]
    assert path.read_bytes() == before


def test_another_programs_database_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE visits (url TEXT)")
    found = SqliteVecStore(path).diagnose()
    assert "another program's SQLite database" in found.problems[0]


def test_an_old_schema_is_reported_and_not_migrated(tmp_path: Path) -> None:
    path = tmp_path / "memories.db"
    filled(path)
    with sqlite3.connect(path) as conn:  # stdlib sqlite3: meta is a plain table
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    found = SqliteVecStore(path).diagnose()
    assert found.schema_version == 3 and found.problems == ()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("3",)
