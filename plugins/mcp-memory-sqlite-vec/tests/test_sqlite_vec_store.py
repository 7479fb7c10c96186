"""Tests specific to SqliteVecStore: binding choice, SQLite settings, processes, crashes, schema, FTS sync."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
import textwrap
import time
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

from mcp_memory_core import Memory, MemoryFilter, ModelMismatchError, Settings, StoreSpec
from mcp_memory_core.row_codec import from_micros, to_micros
from mcp_memory_sqlite_vec import SCHEMA_VERSION, SqliteVecStore
from mcp_memory_sqlite_vec.binding import BINDINGS, BindingError, select_binding
from mcp_memory_sqlite_vec.keywords import fts_query
from mcp_memory_sqlite_vec.store import MAX_K

DIMS = 8
MODEL = "test-model-8"
ALL = MemoryFilter(namespace=None, include_deleted=True, include_superseded=True)


def vecs(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memories.db"


@pytest.fixture
def store(db: Path):
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    yield s
    s.close()


def run_python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- binding --------------------------------------------------------------------------------------
def test_binding_selection_prefers_a_working_binding() -> None:
    binding = select_binding()
    assert binding.name in BINDINGS
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        assert binding.name != "stdlib"  # this Python cannot load extensions: a fallback must be chosen
    conn = binding.connect(":memory:", timeout=1)
    try:
        assert conn.execute("SELECT vec_version()").fetchone()[0] == binding.vec_version
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    finally:
        conn.close()
    assert "SQLite" in binding.describe() and binding.vec_version in binding.describe()


def test_binding_can_be_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    assert select_binding("sqlean").name == "sqlean"
    monkeypatch.setenv("MCP_MEMORY_SQLITE_BINDING", "sqlean")
    assert select_binding().name == "sqlean"
    with pytest.raises(BindingError, match="not a SQLite binding"):
        select_binding("nonsense")


def test_unusable_stdlib_is_reported() -> None:
    if hasattr(sqlite3.Connection, "enable_load_extension"):
        pytest.skip("this Python's sqlite3 can load extensions")
    with pytest.raises(BindingError, match=r"stdlib.*enable_load_extension"):
        select_binding("stdlib")


def test_open_logs_binding_once_to_logger_not_stdout(
    db: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_memory_sqlite_vec")
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    s.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_memory_sqlite_vec"]
    assert len(lines) == 1
    assert s.binding is not None and s.binding.name in lines[0]
    assert "SQLite " in lines[0] and "sqlite-vec v" in lines[0]
    assert capsys.readouterr().out == ""


def test_plugin_import_is_cheap() -> None:
    result = run_python(
        """
        import sys
        import mcp_memory_sqlite_vec.plugin
        heavy = [m for m in ("sqlite_vec", "sqlean", "pysqlite3") if m in sys.modules]
        print(heavy)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_plugin_registration(tmp_path: Path) -> None:
    from mcp_memory_sqlite_vec import plugin

    (spec,) = list(plugin.mcp_memory_stores())
    assert isinstance(spec, StoreSpec) and spec.name == "sqlite-vec"
    store = spec.factory(Settings(db_path=tmp_path / "x.db"))
    assert isinstance(store, SqliteVecStore)
    assert store.location == str(tmp_path / "x.db")
    names = {ep.name: ep.value for ep in entry_points(group="mcp_memory")}
    assert names.get("sqlite-vec") == "mcp_memory_sqlite_vec.plugin"


def test_discovered_by_plugin_manager(tmp_path: Path) -> None:
    from mcp_memory_core import PluginManager

    manager = PluginManager(strict=True)
    manager.load_entry_points()
    info = {b.name: b for b in manager.backends() if b.kind == "store"}
    assert info["sqlite-vec"].package == "mcp-memory-sqlite-vec"
    store = manager.store("sqlite-vec").factory(Settings(db_path=tmp_path / "m.db"))
    assert isinstance(store, SqliteVecStore)


# -- SQLite settings and schema -------------------------------------------------------------------
def test_wal_full_sync_busy_timeout(store: SqliteVecStore, db: Path) -> None:
    conn = store._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    binding = select_binding()
    other = binding.module.connect(str(db))
    try:  # WAL is a property of the file: another connection sees it
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        other.close()


def test_creates_parent_directory(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c" / "m.db"
    s = SqliteVecStore(path)
    s.open(MODEL, DIMS)
    s.close()
    assert path.exists()


def test_schema_meta_recorded(store: SqliteVecStore) -> None:
    meta = store.meta()
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert meta["model_id"] == MODEL
    assert meta["dimensions"] == str(DIMS)
    assert "sqlite-vec" in meta["created_by"]


def test_dimension_mismatch_refused(store: SqliteVecStore, db: Path) -> None:
    store.close()
    with pytest.raises(ModelMismatchError, match=r"\(8-d\)"):
        SqliteVecStore(db).open(MODEL, 16)


def test_mismatch_leaves_store_closed_and_reusable(store: SqliteVecStore, db: Path) -> None:
    store.insert([Memory(content="a")], vecs(1))
    store.close()
    s = SqliteVecStore(db)
    with pytest.raises(ModelMismatchError) as info:
        s.open("other", DIMS)
    assert str(db) in str(info.value)
    with pytest.raises(RuntimeError, match="not open"):
        s.count(ALL)
    s.open(MODEL, DIMS)
    assert s.count(ALL) == 1
    s.close()


def test_newer_schema_refused(store: SqliteVecStore, db: Path) -> None:
    with store.transaction():
        store._conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    store.close()
    with pytest.raises(RuntimeError, match="schema version 999"):
        SqliteVecStore(db).open(MODEL, DIMS)


def test_datetimes_stored_as_sortable_integers(store: SqliteVecStore) -> None:
    m = Memory(content="t")
    store.insert([m], vecs(1))
    (created,) = store._conn.execute("SELECT created_at FROM memories").fetchone()
    assert isinstance(created, int)
    assert from_micros(created) == m.created_at and from_micros(to_micros(m.created_at)) == m.created_at


def test_memory_database(tmp_path: Path) -> None:
    s = SqliteVecStore(":memory:")
    s.open(MODEL, DIMS)
    s.insert([Memory(content="hello")], vecs(1))
    assert s.location == ":memory:" and s.count(MemoryFilter()) == 1
    s.close()


# -- input checks ---------------------------------------------------------------------------------
def test_wrong_vector_shape_refused(store: SqliteVecStore) -> None:
    with pytest.raises(ValueError, match="8-d"):
        store.insert([Memory(content="a")], np.zeros((1, 4), np.float32))
    with pytest.raises(ValueError):
        store.insert([Memory(content="a"), Memory(content="b")], vecs(1))
    with pytest.raises(ValueError, match="NaN"):
        store.insert([Memory(content="a")], np.full((1, DIMS), np.nan, np.float32))
    with pytest.raises(ValueError):
        store.knn(np.zeros(4, np.float32), 3, ALL)
    assert store.count(ALL) == 0


def test_knn_k_is_clamped(store: SqliteVecStore) -> None:
    store.insert([Memory(content="a")], vecs(1))
    assert len(store.knn(vecs(1)[0], MAX_K * 10, ALL)) == 1
    assert store.knn(vecs(1)[0], 0, ALL) == []


def test_update_fields_rejects_unknown_and_missing(store: SqliteVecStore) -> None:
    m = Memory(content="a")
    store.insert([m], vecs(1))
    with pytest.raises(ValueError, match="Unknown"):
        store.update_fields(m.id, {"colour": "red"})
    with pytest.raises(ValueError):
        store.update_fields(m.id, {"importance": 7})
    with pytest.raises(LookupError):
        store.update_fields("00000000-0000-0000-0000-000000000000", {"pinned": True})


def test_fts_query_quoting() -> None:
    assert fts_query('"') is None
    assert fts_query("  - * ( ") is None
    assert fts_query('He said "AND" - NOT ok') == '"said" OR "ok"'  # stopwords dropped, operators quoted


# -- FTS sync -------------------------------------------------------------------------------------
def _fts_integrity(store: SqliteVecStore) -> None:
    store._conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")


def test_fts_in_sync_after_purge_and_content_update(store: SqliteVecStore) -> None:
    a, b = Memory(content="alpaca grazing"), Memory(content="llama grazing")
    store.insert([a, b], vecs(2))
    assert store.purge([a.id, "00000000-0000-0000-0000-000000000000"]) == 1
    assert [i for i, _ in store.keyword_search("alpaca", 5, ALL)] == []
    assert [i for i, _ in store.keyword_search("grazing", 5, ALL)] == [b.id]
    assert [i for i, _ in store.knn(vecs(2)[0], 5, ALL)] == [b.id]
    (n_vectors,) = store._conn.execute("SELECT count(*) FROM vectors").fetchone()
    assert n_vectors == 1
    store.update_fields(b.id, {"content": "vicuna resting"})
    assert store.keyword_search("llama", 5, ALL) == []
    assert [i for i, _ in store.keyword_search("vicuna", 5, ALL)] == [b.id]
    _fts_integrity(store)
    assert store.purge([]) == 0


def test_porter_stemming(store: SqliteVecStore) -> None:
    m = Memory(content="The user prefers running tests in parallel")
    store.insert([m], vecs(1))
    assert [i for i, _ in store.keyword_search("run test", 5, MemoryFilter())] == [m.id]


# -- processes ------------------------------------------------------------------------------------
WRITER = """
import sys, numpy as np
from mcp_memory_core import Memory
from mcp_memory_sqlite_vec import SqliteVecStore
path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = SqliteVecStore(path)
store.open("test-model-8", 8)
rng = np.random.default_rng(abs(hash(tag)) % 1000)
for i in range(n):
    v = rng.standard_normal((1, 8)).astype(np.float32)
    store.insert([Memory(content=f"{tag} {i}", metadata={"tag": tag})], v / np.linalg.norm(v))
    if i % 20 == 0:
        store.count(__import__("mcp_memory_core").MemoryFilter())
store.close()
print("done", tag)
"""


def test_two_processes_write_concurrently(db: Path) -> None:
    SqliteVecStore(db).open(MODEL, DIMS)  # create the schema first (as a running server would have)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), tag, "200"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("left", "right")
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err
        assert "locked" not in err
        assert out.startswith("done")
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    try:
        assert s.count(ALL) == 400
        tags = [m.metadata["tag"] for m in s.iter_all()]
        assert tags.count("left") == 200 and tags.count("right") == 200
        assert len(s.knn(vecs(1)[0], 500, ALL)) == 400
        assert len(s.keyword_search("left", 500, ALL)) == 200
    finally:
        s.close()


def test_two_processes_open_a_new_file_at_once(tmp_path: Path) -> None:
    """Schema creation races: both processes see no schema and create it (IF NOT EXISTS under BEGIN
    IMMEDIATE)."""
    db = tmp_path / "race.db"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(db), tag, "5"], stderr=subprocess.PIPE, text=True)
        for tag in ("a", "b")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    assert s.count(ALL) == 10
    s.close()


STORE_SAME_TEXTS = """
import json, random, sys, time
from mcp_memory_core import MemoryEngine
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_testing.fakes import HashEmbedder
path, seed, start_at = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
engine = MemoryEngine(SqliteVecStore(path), HashEmbedder(), SimilarityRanker(), namespace="race")
engine.open()
texts = [f"The same fact number {i} about the deploy." for i in range(100)]
random.Random(seed).shuffle(texts)
time.sleep(max(0.0, start_at - time.time()))  # every process starts storing at once
statuses = [engine.store_memory(t).status for t in texts]
engine.close()
print(json.dumps(statuses))
"""


def test_four_processes_storing_the_same_texts_store_each_once(db: Path) -> None:
    """The exact-duplicate check and the insert share one transaction: 4 processes storing the same 100
    texts leave 100 memories (the audit found 109, each reported "stored")."""
    pytest.importorskip("mcp_memory_rankers")  # the engine's ranker: absent from the plugin-only venv
    SqliteVecStore(db).open("hash-64", 64)  # the schema exists, as with a running server
    start_at = time.time() + 3
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", STORE_SAME_TEXTS, str(db), str(seed), str(start_at)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in range(4)
    ]
    statuses = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        statuses += json.loads(out)
    assert statuses.count("stored") == 100 and statuses.count("duplicate") == 300
    s = SqliteVecStore(db)
    s.open("hash-64", 64)
    try:
        contents = [m.content for m in s.iter_all()]
        assert len(contents) == 100 and len(set(contents)) == 100
    finally:
        s.close()


def test_acknowledged_write_survives_crash(db: Path) -> None:
    result = run_python(
        """
        import os, sys, numpy as np
        from mcp_memory_core import Memory
        from mcp_memory_sqlite_vec import SqliteVecStore
        store = SqliteVecStore(sys.argv[1])
        store.open("test-model-8", 8)
        v = np.ones((1, 8), np.float32) / np.sqrt(8)
        m = Memory(content="survives the crash")
        store.insert([m], v)
        print(m.id, flush=True)
        os._exit(1)  # no close, no checkpoint, no atexit
        """,
        str(db),
    )
    assert result.returncode == 1, result.stderr
    memory_id = result.stdout.strip()
    assert Path(str(db) + "-wal").exists()
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    try:
        assert s.get([memory_id])[memory_id].content == "survives the crash"
        assert s.knn(np.ones(DIMS, np.float32), 1, MemoryFilter())[0][0] == memory_id
        assert s.keyword_search("crash", 1, MemoryFilter())[0][0] == memory_id
    finally:
        s.close()


def test_other_process_sees_commits(store: SqliteVecStore, db: Path) -> None:
    m = Memory(content="visible elsewhere")
    store.insert([m], vecs(1))
    result = run_python(
        """
        import sys
        from mcp_memory_sqlite_vec import SqliteVecStore
        s = SqliteVecStore(sys.argv[1]); s.open("test-model-8", 8)
        print(list(s.get([sys.argv[2]])))
        """,
        str(db),
        m.id,
    )
    assert result.returncode == 0, result.stderr
    assert m.id in result.stdout


# -- schema 1 → 2 migration -----------------------------------------------------------------------
# The version-1 DDL exactly as mcp-memory-sqlite-vec shipped it (one vector per memory, rowid = seq).
V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS namespaces (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS memories (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    content       TEXT NOT NULL,
    metadata      TEXT NOT NULL DEFAULT '{}',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    superseded_by TEXT,
    deleted_at    INTEGER,
    namespace     TEXT NOT NULL,
    type          TEXT NOT NULL,
    tags          TEXT NOT NULL DEFAULT '[]',
    importance    REAL NOT NULL,
    pinned        INTEGER NOT NULL DEFAULT 0,
    access_count  INTEGER NOT NULL DEFAULT 0,
    last_accessed INTEGER
);
CREATE INDEX IF NOT EXISTS memories_ns_created ON memories (namespace, created_at, id);
CREATE INDEX IF NOT EXISTS memories_created ON memories (created_at, id);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5 (
    content, content='memories', content_rowid='seq', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_au AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE VIRTUAL TABLE IF NOT EXISTS vectors USING vec0 (
    embedding float[8] distance_metric=cosine, ns integer, deleted integer, superseded integer);
"""


def make_v1_file(path: Path, memories: list[Memory], vectors: np.ndarray) -> None:
    from mcp_memory_sqlite_vec.schema import split_sql
    from mcp_memory_sqlite_vec.store import _COLUMNS, _row_values

    binding = select_binding()
    conn = binding.connect(str(path), timeout=5)
    try:
        conn.execute("BEGIN")
        for statement in split_sql(V1_SCHEMA):
            conn.execute(statement)
        conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [("schema_version", "1"), ("model_id", MODEL), ("dimensions", str(DIMS)), ("created_by", "v1")],
        )
        for m, v in zip(memories, vectors, strict=True):
            conn.execute("INSERT OR IGNORE INTO namespaces (name) VALUES (?)", (m.namespace,))
            (ns,) = conn.execute("SELECT id FROM namespaces WHERE name = ?", (m.namespace,)).fetchone()
            v1_columns = ", ".join(_COLUMNS.split(", ")[:14])  # no owner / privacy_scope before v3
            seq = conn.execute(
                f"INSERT INTO memories ({v1_columns}) VALUES ({', '.join('?' * 14)})", _row_values(m)[:14]
            ).lastrowid
            conn.execute(
                "INSERT INTO vectors (rowid, embedding, ns, deleted, superseded) VALUES (?, ?, ?, ?, ?)",
                (
                    seq,
                    v.astype(np.float32).tobytes(),
                    ns,
                    int(m.deleted_at is not None),
                    int(m.superseded_by is not None),
                ),
            )
        conn.execute("COMMIT")
    finally:
        conn.close()


def test_migrates_schema_1(db: Path) -> None:
    from datetime import timedelta

    from mcp_memory_core import MemoryType

    db.parent.mkdir(parents=True)
    t0 = from_micros(to_micros(Memory(content="x").created_at))
    items = [
        Memory(
            content=f"migrated otter {i}",
            created_at=t0 + timedelta(seconds=i),
            updated_at=t0,
            type=list(MemoryType)[i % 4],
            tags=("old", f"t{i % 2}"),
            metadata={"i": i},
            namespace="default" if i % 3 else "side",
            deleted_at=t0 if i == 4 else None,
        )
        for i in range(12)
    ]
    vectors = vecs(12, seed=5)
    make_v1_file(db, items, vectors)
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    try:
        assert s.meta()["schema_version"] == str(SCHEMA_VERSION) == "4"
        assert s.meta()["created_by"] == "v1"
        assert s.get([m.id for m in items]) == {m.id: m for m in items}
        for i in (0, 5, 11):
            assert s.knn(vectors[i], 1, ALL)[0][0] == items[i].id
        assert items[4].id not in dict(s.knn(vectors[4], 12, MemoryFilter(namespace=None)))
        # new filter fields work on migrated rows (tags index and vec0 type/created columns rebuilt)
        for where in (
            MemoryFilter(namespace=None, tags_any=frozenset({"t1"})),
            MemoryFilter(namespace=None, types=frozenset({MemoryType.EPISODIC})),
            MemoryFilter(created_after=t0 + timedelta(seconds=6)),
            MemoryFilter(namespace=None, metadata=(("i", 3),)),
            MemoryFilter(namespace=None, occurred_before=t0 + timedelta(seconds=3)),  # = created_at
        ):
            expected = {m.id for m in items if where.matches(m)}
            assert {i for i, _ in s.knn(vectors[0], 20, where)} == expected
            assert s.count(where) == len(expected)
        assert [i for i, _ in s.keyword_search("otter 7", 1, ALL)] == [items[7].id]
        # the migrated store takes passages, tombstones and purges like a new one
        new = Memory(content="after migration")
        s.insert([new], vecs(3, seed=9), [0, 0, 0])
        assert s.knn(vecs(3, seed=9)[2], 1, ALL)[0][0] == new.id
        s.update_fields(items[0].id, {"deleted_at": t0})
        assert items[0].id not in dict(s.knn(vectors[0], 20, MemoryFilter(namespace=None)))
        assert s.purge([items[1].id]) == 1
        (n_vec,) = s._conn.execute("SELECT count(*) FROM vectors").fetchone()
        (n_pas,) = s._conn.execute("SELECT count(*) FROM passages").fetchone()
        assert n_vec == n_pas == 11 + 3
        _fts_integrity(s)
    finally:
        s.close()
    again = SqliteVecStore(db)  # reopening a migrated file is a no-op
    again.open(MODEL, DIMS)
    assert again.count(ALL) == 12
    again.close()


def test_migration_refuses_other_model_without_touching_file(db: Path) -> None:
    db.parent.mkdir(parents=True)
    make_v1_file(db, [Memory(content="a")], vecs(1))
    with pytest.raises(ModelMismatchError):
        SqliteVecStore(db).open("other-model", DIMS)
    conn = select_binding().connect(str(db), timeout=5)
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "1"
    finally:
        conn.close()


# -- every knn path agrees with the reference store ----------------------------------------------
@pytest.mark.parametrize("path", ["vec0", "exact", "auto"])
def test_knn_paths_match_reference(store: SqliteVecStore, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """Force the exact numpy path, the vec0 ``rowid IN`` path, or let the store choose; small row
    budgets force the row-k growth and the exact fallback. Results must equal InMemoryStore's."""
    from datetime import timedelta

    from mcp_memory_core import MemoryType
    from mcp_memory_sqlite_vec import store as store_module
    from mcp_memory_testing.fakes import InMemoryStore

    if path == "vec0":
        monkeypatch.setattr(store_module, "EXACT_SCAN_MAX_ROWS", 0)
        monkeypatch.setattr(store_module, "EXACT_SCAN_MIN_ROWS", 0)
    elif path == "exact":
        monkeypatch.setattr(store_module, "EXACT_SCAN_MIN_ROWS", 10**9)
        monkeypatch.setattr(store_module, "EXACT_SCAN_MAX_ROWS", 10**9)
    monkeypatch.setattr(store_module, "MAX_K", 64)  # reach the cap (and the exact fallback) with few rows
    reference = InMemoryStore()
    reference.open(MODEL, DIMS)
    rng = np.random.default_rng(7)
    t0 = from_micros(to_micros(Memory(content="x").created_at))
    items = [
        Memory(
            content=f"m {i}",
            created_at=t0 + timedelta(seconds=int(rng.integers(0, 100))),
            type=list(MemoryType)[int(rng.integers(0, 4))],
            tags=tuple(t for t in ("a", "b", "c") if rng.random() < 0.4),
            metadata={"g": int(rng.integers(0, 3))},
            deleted_at=t0 if rng.random() < 0.1 else None,
            namespace="default" if rng.random() < 0.9 else "x",
        )
        for i in range(300)
    ]
    owners = [i for i in range(300) for _ in range(int(rng.integers(1, 6)))]
    vectors = vecs(len(owners), seed=8)
    store.insert(items, vectors, owners)
    reference.insert(items, vectors, owners)
    filters = [
        MemoryFilter(),
        MemoryFilter(types=frozenset({MemoryType.SEMANTIC, MemoryType.WORKING})),
        MemoryFilter(tags_any=frozenset({"a"})),
        MemoryFilter(tags_all=frozenset({"a", "b"}), namespace=None),
        MemoryFilter(metadata=(("g", 1),), include_deleted=True),
        MemoryFilter(created_after=t0 + timedelta(seconds=30), created_before=t0 + timedelta(seconds=70)),
        MemoryFilter(ids=frozenset(m.id for m in items[::2]), tags_any=frozenset({"b", "c"})),
    ]
    for q in vecs(3, seed=10):
        for where in filters:
            for k in (1, 10, 40, 64):
                got = store.knn(q, k, where)
                want = reference.knn(q, k, where)
                assert [i for i, _ in got] == [i for i, _ in want], (where, k)
                np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


def test_fts_query_drops_stopwords_unless_nothing_else_is_left() -> None:
    from mcp_memory_sqlite_vec.keywords import fts_query

    assert (
        fts_query("What did Caroline say about the pottery class?")
        == '"caroline" OR "say" OR "pottery" OR "class"'
    )
    assert fts_query("what is it") == '"what" OR "is" OR "it"'
    assert fts_query('say "hi"') == '"say" OR "hi"'
    assert fts_query("?!") is None


def raw_sql(db: Path, *statements: str) -> None:
    """Run ``statements`` on the file directly, as older code or a hand edit would, and commit."""
    conn = select_binding().connect(str(db), timeout=5)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def test_migrates_schema_2_to_owned_private_memories(db: Path) -> None:
    """A schema-2 file (no owner, no privacy_scope, no occurred_at, no thread) opens as schema 4:
    every memory the local user's, private, occurred when it was created, in no thread; scope and
    time filters work on the migrated rows."""
    from mcp_memory_core.models import LOCAL_USER, PrivacyScope, Visibility

    items = [Memory(content=f"before owners {i}") for i in range(5)]
    vectors = vecs(5, seed=9)
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    s.insert(items, vectors)
    s.close()
    raw_sql(  # turn the file back into schema 2
        db,
        "DROP INDEX memories_owner",
        "DROP INDEX memories_thread",
        "DROP INDEX memories_occurred",
        "ALTER TABLE memories DROP COLUMN occurred_at",
        "ALTER TABLE memories DROP COLUMN thread",
        "ALTER TABLE memories DROP COLUMN owner",
        "ALTER TABLE memories DROP COLUMN privacy_scope",
        "UPDATE meta SET value = '2' WHERE key = 'schema_version'",
    )
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    try:
        assert s.meta()["schema_version"] == "4"
        got = s.get([m.id for m in items])
        assert got == {m.id: m for m in items}  # occurred_at = created_at, thread None, as before
        assert all(m.occurred_at == m.created_at and m.thread is None for m in got.values())
        later = MemoryFilter(namespace=None, occurred_after=items[2].created_at)
        assert s.count(later) == sum(m.created_at >= items[2].created_at for m in items)
        assert {m.owner for m in got.values()} == {LOCAL_USER}
        assert {m.privacy_scope for m in got.values()} == {PrivacyScope.PRIVATE}
        mine = MemoryFilter(namespace=None, visible_to=Visibility(LOCAL_USER))
        theirs = MemoryFilter(namespace=None, visible_to=Visibility("alice"))
        assert len(s.knn(vectors[0], 10, mine)) == 5
        assert s.knn(vectors[0], 10, theirs) == []
        assert s.count(theirs) == 0
        s.insert([Memory(content="in a thread", thread="t-1")], vecs(1, seed=3))
        assert s.count(MemoryFilter(namespace=None, threads=frozenset({"t-1"}))) == 1
    finally:
        s.close()


def test_a_file_written_before_the_passage_backlog_gets_it_on_open(db: Path) -> None:
    """A schema-4 file from before ``pending_passages``: opened, it has the table and its trigger
    (no version change: older code simply never marks anything), and purges clear marks."""
    items = [Memory(content=f"One fact {i}. Another fact {i}.") for i in range(2)]
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    s.insert(items, vecs(2, seed=4))
    s.close()
    raw_sql(db, "DROP TRIGGER pending_passages_ad", "DROP TABLE pending_passages")  # as before the backlog
    s = SqliteVecStore(db)
    s.open(MODEL, DIMS)
    try:
        assert s.meta()["schema_version"] == str(SCHEMA_VERSION) and s.count_pending_passages() == 0
        with s.transaction():
            s.mark_passages_pending([m.id for m in items])
        s.purge([items[0].id])
        assert s.pending_passages(10) == [(items[1].id, items[1].content)]
    finally:
        s.close()
