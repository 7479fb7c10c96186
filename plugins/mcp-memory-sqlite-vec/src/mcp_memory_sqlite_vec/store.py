"""SqliteVecStore: memories in one SQLite file — rows, sqlite-vec vectors and an FTS5 keyword index.

Schema (version 1)::

    meta(key, value)              schema_version, model_id, dimensions, created_by
    namespaces(id, name)          small integer ids, so vec0 filters on an integer (see below)
    memories(seq, id, …)          the source of truth; seq INTEGER PRIMARY KEY is a stable rowid
                                  (an implicit rowid may be renumbered by VACUUM), id is the UUID
    memories_fts                  FTS5 external content over memories.content, kept in sync by triggers
    vectors                       vec0(embedding float[D] distance_metric=cosine,
                                       ns integer, deleted integer, superseded integer), rowid = seq

Datetimes are stored as integer microseconds since the Unix epoch (UTC): exact round trips, correct
ordering and comparison, and they come back as timezone-aware UTC datetimes.

KNN filtering: sqlite-vec applies JOIN/WHERE conditions on other tables AFTER its top-k, so every
filter the engine can ask for lives inside the vec0 query: namespace, tombstone and superseded flags
are vec0 *metadata* columns (updatable, unlike partition keys: a tombstone is set after insert), and
an ``ids`` filter is a ``rowid IN (…)`` constraint, which vec0 also applies before its top-k.
Measured with ``scripts/bench_knn_filter.py`` (k=10, 384-d, 2 cores): metadata columns cost no more
than an unfiltered scan (10k: 3.6 ms, 100k: 43 ms) while ``rowid IN (SELECT … FROM memories)`` costs
~40 % more (5.6 / 60 ms). A namespace partition key is ~10 % faster still with one big namespace,
but partition keys cannot be UPDATEd and every partition allocates its own vector chunks; the
namespace is an integer (``namespaces`` table) because vec0 compares text longer than 12 bytes
out of line.

Concurrency: one connection per store, in autocommit mode, guarded by an RLock that a
``transaction()`` holds from BEGIN IMMEDIATE to COMMIT, so worker threads never interleave.
Several processes share the file through WAL, ``busy_timeout`` and BEGIN IMMEDIATE (a writer waits
for the write lock up front instead of failing on a read→write upgrade). ``synchronous=FULL``: an
acknowledged commit survives a process crash and a power loss.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from mcp_memory_core.errors import MemoryNotFoundError, ModelMismatchError
from mcp_memory_core.models import Memory, MemoryFilter, MemoryType
from mcp_memory_core.protocols import StoreCapabilities, Vector

from .binding import Binding, select_binding

log = logging.getLogger("mcp_memory_sqlite_vec")

SCHEMA_VERSION = 1
MAX_K = 4096  # sqlite-vec 0.1.9 refuses k > 4096
BUSY_TIMEOUT_S = 10.0
# vec0 scans every vector chunk per KNN; through the default 2 MB page cache a 100k x 384-d file
# (150 MB of vectors) costs 54 ms per query, memory-mapped 43 ms (= an in-memory database).
MMAP_SIZE = 1 << 30
MAX_KEYWORD_TOKENS = 64
_ITER_BATCH = 500

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_TOKEN = re.compile(r"\w+", re.UNICODE)

_COLUMNS = (
    "id, content, metadata, created_at, updated_at, superseded_by, deleted_at, namespace, type, tags, "
    "importance, pinned, access_count, last_accessed"
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS namespaces (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
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
"""

# Migrations: MIGRATIONS[n] upgrades a database from schema version n to n + 1.
MIGRATIONS: dict[int, str] = {}


def to_micros(value: datetime) -> int:
    """Integer microseconds since the epoch, UTC. Naive datetimes are taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return (value - _EPOCH) // _MICRO


def from_micros(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def _opt_micros(value: datetime | None) -> int | None:
    return None if value is None else to_micros(value)


def _opt_dt(value: int | None) -> datetime | None:
    return None if value is None else from_micros(value)


def fts_query(text: str) -> str | None:
    """Make user text safe for FTS5 MATCH: every word becomes a quoted term, terms are OR-ed
    (bm25 ranks documents matching more, rarer terms first). None when the text has no words."""
    tokens = list(dict.fromkeys(t.lower() for t in _TOKEN.findall(text)))[:MAX_KEYWORD_TOKENS]
    if not tokens:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


def _row_values(m: Memory) -> tuple[Any, ...]:
    return (
        m.id,
        m.content,
        json.dumps(m.metadata, ensure_ascii=False, separators=(",", ":")),
        to_micros(m.created_at),
        to_micros(m.updated_at),
        m.superseded_by,
        _opt_micros(m.deleted_at),
        m.namespace,
        MemoryType(m.type).value,
        json.dumps(list(m.tags), ensure_ascii=False),
        float(m.importance),
        int(m.pinned),
        int(m.access_count),
        _opt_micros(m.last_accessed),
    )


def _memory(row: Sequence[Any]) -> Memory:
    return Memory.model_construct(
        id=row[0],
        content=row[1],
        metadata=json.loads(row[2]),
        created_at=from_micros(row[3]),
        updated_at=from_micros(row[4]),
        superseded_by=row[5],
        deleted_at=_opt_dt(row[6]),
        namespace=row[7],
        type=MemoryType(row[8]),
        tags=tuple(json.loads(row[9])),
        importance=float(row[10]),
        pinned=bool(row[11]),
        access_count=int(row[12]),
        last_accessed=_opt_dt(row[13]),
    )


class SqliteVecStore:
    """The default mcp-memory store. See the module docstring for the schema and design."""

    def __init__(self, path: str | Path, *, binding: str | None = None) -> None:
        self._path: str | Path = ":memory:" if str(path) == ":memory:" else Path(path).expanduser()
        self._binding_name = binding
        self._binding: Binding | None = None
        self._conn: Any = None
        self._lock = threading.RLock()
        self._depth = 0
        self._model_id: str | None = None
        self._dims: int | None = None

    # -- protocol: description -------------------------------------------------------------------
    @property
    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities(keyword_search=True, concurrent_processes=True)

    @property
    def location(self) -> str:
        return str(self._path)

    @property
    def binding(self) -> Binding | None:
        """The SQLite binding in use (None until opened)."""
        return self._binding

    def __repr__(self) -> str:
        return f"SqliteVecStore({self.location!r})"

    # -- lifecycle -------------------------------------------------------------------------------
    def open(self, model_id: str, dimensions: int) -> None:
        """Connect, create or migrate the schema, and bind the file to ``model_id``.

        Idempotent for the same model. Raises ModelMismatchError when the file holds vectors of another
        model (or of another dimension count).
        """
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
            raise ValueError(f"dimensions must be a positive integer; got {dimensions!r}")
        with self._lock:
            if self._conn is not None:
                if (model_id, dimensions) != (self._model_id, self._dims):
                    raise ModelMismatchError(self.location, f"{self._model_id}", model_id)
                return
            binding = select_binding(self._binding_name)
            if isinstance(self._path, Path):
                self._path.parent.mkdir(parents=True, exist_ok=True)
            conn = binding.connect(str(self._path), timeout=BUSY_TIMEOUT_S)
            try:
                mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                if str(mode).lower() != "wal" and str(self._path) != ":memory:":
                    log.warning("SQLite refused WAL mode for %s (journal_mode=%s)", self.location, mode)
                conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute(f"PRAGMA mmap_size={MMAP_SIZE}")
                self._init_schema(conn, binding, model_id, dimensions)
            except BaseException:
                conn.close()
                raise
            self._binding, self._conn = binding, conn
            self._model_id, self._dims = model_id, dimensions
            log.info(
                "sqlite-vec store %s: binding %s; model %s (%d-d)",
                self.location,
                binding.describe(),
                model_id,
                dimensions,
            )

    def _init_schema(self, conn: Any, binding: Binding, model_id: str, dimensions: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            has_meta = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
            ).fetchone()
            stored: dict[str, str] = {}
            if has_meta:
                stored = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            version = int(stored.get("schema_version", "0"))
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"The database {self.location} has schema version {version}, newer than this "
                    f"mcp-memory-sqlite-vec understands ({SCHEMA_VERSION}). Upgrade mcp-memory-sqlite-vec."
                )
            stored_model = stored.get("model_id")
            stored_dims = int(stored["dimensions"]) if "dimensions" in stored else None
            if stored_model is not None and stored_model != model_id:
                raise ModelMismatchError(self.location, stored_model, model_id)
            if stored_dims is not None and stored_dims != dimensions:
                raise ModelMismatchError(
                    self.location, f"{stored_model} ({stored_dims}-d)", f"{model_id} ({dimensions}-d)"
                )
            for statement in _split_sql(_SCHEMA):
                conn.execute(statement)
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS vectors USING vec0 ("
                f"embedding float[{int(dimensions)}] distance_metric=cosine, "
                "ns integer, deleted integer, superseded integer)"
            )
            while 0 < version < SCHEMA_VERSION:
                for statement in _split_sql(MIGRATIONS[version]):
                    conn.execute(statement)
                version += 1
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [
                    ("schema_version", str(SCHEMA_VERSION)),
                    ("model_id", model_id),
                    ("dimensions", str(dimensions)),
                ],
            )
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('created_by', ?)",
                (f"mcp-memory-sqlite-vec; {binding.describe()}",),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self._lock:
            conn, self._conn = self._conn, None
            self._depth = 0
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.execute("PRAGMA optimize")
                conn.close()

    def meta(self) -> dict[str, str]:
        """The ``meta`` table (schema_version, model_id, dimensions, created_by)."""
        with self._lock:
            return dict(self._db().execute("SELECT key, value FROM meta").fetchall())

    def _db(self) -> Any:
        if self._conn is None:
            raise RuntimeError(f"{self!r} is not open: call open(model_id, dimensions) first.")
        return self._conn

    # -- transactions ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together, or none on an exception. Nested blocks are no-ops.

        Holds the store's lock throughout, so other threads wait; BEGIN IMMEDIATE takes SQLite's write
        lock up front (waiting up to busy_timeout for other processes).
        """
        with self._lock:
            conn = self._db()
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield
            except BaseException:
                self._depth = 0
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            self._depth = 0
            try:
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    # -- writes ----------------------------------------------------------------------------------
    def insert(self, memories: Sequence[Memory], vectors: Vector) -> None:
        memories = list(memories)
        array = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
        if array.ndim == 1 and len(memories) == 1:
            array = array.reshape(1, -1)
        if array.ndim != 2 or array.shape[0] != len(memories) or array.shape[1] != self._dims:
            raise ValueError(
                f"insert needs one {self._dims}-d vector per memory: got {len(memories)} memories and "
                f"vectors of shape {array.shape}"
            )
        if not memories:
            return
        if not np.all(np.isfinite(array)):
            raise ValueError("vectors contain NaN or infinity")
        with self.transaction():
            conn = self._db()
            for memory, vector in zip(memories, array, strict=True):
                try:
                    cursor = conn.execute(
                        f"INSERT INTO memories ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        _row_values(memory),
                    )
                except self._binding.module.IntegrityError as exc:  # type: ignore[union-attr]
                    raise ValueError(f"A memory with id {memory.id} already exists") from exc
                conn.execute(
                    "INSERT INTO vectors (rowid, embedding, ns, deleted, superseded) VALUES (?, ?, ?, ?, ?)",
                    (
                        cursor.lastrowid,
                        vector.tobytes(),
                        self._namespace_id(memory.namespace, create=True),
                        int(memory.deleted_at is not None),
                        int(memory.superseded_by is not None),
                    ),
                )

    def update_fields(self, memory_id: str, fields: Mapping[str, Any]) -> None:
        """Set fields of one memory (validated as a Memory). Raises MemoryNotFoundError if absent."""
        if "id" in fields and fields["id"] != memory_id:
            raise ValueError("update_fields cannot change a memory's id")
        unknown = set(fields) - set(Memory.model_fields)
        if unknown:
            raise ValueError(f"Unknown memory fields: {', '.join(sorted(unknown))}")
        with self.transaction():
            conn = self._db()
            row = conn.execute(f"SELECT seq, {_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row is None:
                raise MemoryNotFoundError(memory_id)
            seq, old = row[0], _memory(row[1:])
            new = Memory.model_validate({**old.model_dump(), **dict(fields)})
            values = _row_values(new)[1:]
            assignments = ", ".join(f"{name} = ?" for name in _COLUMNS.split(", ")[1:])
            if new.content == old.content:  # don't fire the FTS trigger for nothing
                assignments = assignments.replace("content = ?, ", "")
                values = values[1:]
            conn.execute(f"UPDATE memories SET {assignments} WHERE seq = ?", (*values, seq))
            conn.execute(
                "UPDATE vectors SET ns = ?, deleted = ?, superseded = ? WHERE rowid = ?",
                (
                    self._namespace_id(new.namespace, create=True),
                    int(new.deleted_at is not None),
                    int(new.superseded_by is not None),
                    seq,
                ),
            )

    def purge(self, ids: Sequence[str]) -> int:
        """Hard delete: remove rows, vectors and keyword-index entries. Returns how many were removed."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        with self.transaction():
            conn = self._db()
            seqs = [
                r[0]
                for r in conn.execute(
                    "SELECT seq FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(ids),),
                )
            ]
            for seq in seqs:
                conn.execute("DELETE FROM vectors WHERE rowid = ?", (seq,))
                conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))
            return len(seqs)

    def _namespace_id(self, name: str, *, create: bool) -> int | None:
        conn = self._db()
        row = conn.execute("SELECT id FROM namespaces WHERE name = ?", (name,)).fetchone()
        if row is not None:
            return int(row[0])
        if not create:
            return None
        return int(conn.execute("INSERT INTO namespaces (name) VALUES (?)", (name,)).lastrowid)

    # -- reads -----------------------------------------------------------------------------------
    def get(self, ids: Sequence[str]) -> dict[str, Memory]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        with self._lock:
            rows = (
                self._db()
                .execute(
                    f"SELECT {_COLUMNS} FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(ids),),
                )
                .fetchall()
            )
        return {row[0]: _memory(row) for row in rows}

    def knn(self, vector: Vector, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        k = min(int(k), MAX_K)
        if k <= 0 or (where.ids is not None and not where.ids):
            return []
        query = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(-1))
        if query.shape[0] != self._dims:
            raise ValueError(f"knn needs a {self._dims}-d vector; got {query.shape[0]}-d")
        with self._lock:
            conn = self._db()
            conditions = ["embedding MATCH ?", "k = ?"]
            params: list[Any] = [query.tobytes(), k]
            if where.namespace is not None:
                ns = self._namespace_id(where.namespace, create=False)
                if ns is None:
                    return []
                conditions.append("ns = ?")
                params.append(ns)
            if not where.include_deleted:
                conditions.append("deleted = 0")
            if not where.include_superseded:
                conditions.append("superseded = 0")
            if where.ids is not None:
                conditions.append(
                    "rowid IN (SELECT seq FROM memories WHERE id IN (SELECT value FROM json_each(?)))"
                )
                params.append(json.dumps(sorted(where.ids)))
            rows = conn.execute(
                "WITH hits AS MATERIALIZED (SELECT rowid, distance FROM vectors WHERE "
                + " AND ".join(conditions)
                + ") SELECT m.id, hits.distance FROM hits JOIN memories m ON m.seq = hits.rowid "
                "ORDER BY hits.distance, m.id",
                params,
            ).fetchall()
        return [(memory_id, 1.0 - float(distance)) for memory_id, distance in rows]

    def keyword_search(self, query: str, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        match = fts_query(query)
        k = int(k)
        if match is None or k <= 0 or (where.ids is not None and not where.ids):
            return []
        clause, params = _where_sql(where, alias="m")
        sql = (
            "SELECT m.id, bm25(memories_fts) AS score FROM memories_fts "
            "JOIN memories m ON m.seq = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? {'AND ' + clause if clause else ''} "
            "ORDER BY score, m.id LIMIT ?"
        )
        with self._lock:
            conn = self._db()
            try:
                rows = conn.execute(sql, (match, *params, k)).fetchall()
            except self._binding.module.OperationalError as exc:  # type: ignore[union-attr]
                # Cannot happen with fts_query's quoting; never let a query string crash a search.
                log.warning("FTS5 rejected keyword query %r (%s); returning no keyword hits", query, exc)
                return []
        return [(memory_id, -float(score)) for memory_id, score in rows]

    def list(
        self, where: MemoryFilter, limit: int, after: tuple[datetime, str] | None = None
    ) -> list[Memory]:
        limit = int(limit)
        if limit <= 0 or (where.ids is not None and not where.ids):
            return []
        clause, params = _where_sql(where)
        conditions = [clause] if clause else []
        if after is not None:
            created = to_micros(after[0])
            conditions.append("(created_at < ? OR (created_at = ? AND id < ?))")
            params += [created, created, after[1]]
        sql = (
            f"SELECT {_COLUMNS} FROM memories "
            + ("WHERE " + " AND ".join(conditions) + " " if conditions else "")
            + "ORDER BY created_at DESC, id DESC LIMIT ?"
        )
        with self._lock:
            rows = self._db().execute(sql, (*params, limit)).fetchall()
        return [_memory(row) for row in rows]

    def count(self, where: MemoryFilter) -> int:
        if where.ids is not None and not where.ids:
            return 0
        clause, params = _where_sql(where)
        with self._lock:
            (n,) = (
                self._db()
                .execute("SELECT count(*) FROM memories" + (f" WHERE {clause}" if clause else ""), params)
                .fetchone()
            )
        return int(n)

    def iter_all(self) -> Iterator[Memory]:
        """Every memory, in batches (the lock is not held between batches, so callers may write)."""
        last = 0
        while True:
            with self._lock:
                rows = (
                    self._db()
                    .execute(
                        f"SELECT seq, {_COLUMNS} FROM memories WHERE seq > ? ORDER BY seq LIMIT ?",
                        (last, _ITER_BATCH),
                    )
                    .fetchall()
                )
            if not rows:
                return
            for row in rows:
                yield _memory(row[1:])
            last = rows[-1][0]


def _where_sql(where: MemoryFilter, alias: str = "") -> tuple[str, list[Any]]:
    """SQL conditions on the memories table for ``where`` (without WHERE) and their parameters."""
    p = f"{alias}." if alias else ""
    conditions: list[str] = []
    params: list[Any] = []
    if where.namespace is not None:
        conditions.append(f"{p}namespace = ?")
        params.append(where.namespace)
    if not where.include_deleted:
        conditions.append(f"{p}deleted_at IS NULL")
    if not where.include_superseded:
        conditions.append(f"{p}superseded_by IS NULL")
    if where.ids is not None:
        conditions.append(f"{p}id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(sorted(where.ids)))
    return " AND ".join(conditions), params


def _split_sql(script: str) -> list[str]:
    """Split a schema script into statements (triggers contain ';' inside BEGIN … END)."""
    statements, current = [], []
    for line in script.strip().splitlines():
        current.append(line)
        text = "\n".join(current).strip()
        if text.endswith(";") and (
            not text.upper().startswith("CREATE TRIGGER") or text.upper().endswith("END;")
        ):
            statements.append(text)
            current = []
    if "\n".join(current).strip():
        statements.append("\n".join(current).strip())
    return statements
