"""Opening a file: WAL mode, the schema created or upgraded in place, and a read-only file's checks.

Version 1 had one vector per memory (vec0 rowid = memory seq, no type/created columns, no passages
or memory_tags); it is migrated in place, in open()'s transaction (``_migrate_v1``). Version 3 added
``memories.owner`` and ``memories.privacy_scope``; version 4 ``memories.occurred_at`` and
``memories.thread``. The upgrade chain stays here (not core's ``migrations.pending``): its steps are
not in version order (v1's data move needs the v3/v4 columns added first).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any

from mcp_memory_core.errors import ModelMismatchError, StorageError
from mcp_memory_core.migrations import SchemaTooNewError

from .binding import Binding
from .errors import is_busy
from .schema import FILL_VECTORS, SCHEMA, SCHEMA_VERSION, split_sql, vectors_ddl

log = logging.getLogger("mcp_memory_sqlite_vec")


def enable_wal(conn: Any, binding: Binding, timeout: float) -> str:
    """``PRAGMA journal_mode=WAL``, retried while another process holds the lock: switching a new
    file to WAL needs an exclusive lock and SQLite does not always wait on the busy handler for it
    (two processes creating one file at once would otherwise fail with "database is locked")."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0])
        except binding.module.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def stored_meta(conn: Any) -> dict[str, str]:
    """The ``meta`` table; empty for a file without one (new, or not ours yet)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone():
        return {}
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def check_read_only(conn: Any, location: str, model_id: str, dimensions: int) -> None:
    """A file SQLite cannot write is fine for reading when its schema is current and its model is
    ours; else one sentence saying what to do."""
    stored = stored_meta(conn)
    if stored.get("schema_version") != str(SCHEMA_VERSION):
        raise StorageError(
            f"{location} is read-only and needs "
            + ("creating" if not stored else f"an upgrade (schema {stored.get('schema_version')})")
            + " first: make it writable once, or point MCP_MEMORY_DB_PATH at a writable file."
        )
    if (stored.get("model_id"), stored.get("dimensions")) != (model_id, str(dimensions)):
        raise ModelMismatchError(location, str(stored.get("model_id")), model_id)


def init_schema(
    conn: Any, begin: Callable[[], None], binding: Binding, location: str, model_id: str, dimensions: int
) -> None:
    """Create or upgrade the schema and bind the file to ``model_id``, in one write transaction
    (``begin`` starts it), after checking the model the file holds."""
    begin()
    try:
        stored = stored_meta(conn)
        version = int(stored.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise SchemaTooNewError(location, version, SCHEMA_VERSION, "mcp-memory-sqlite-vec")
        _check_model(stored, location, model_id, dimensions)
        if 0 < version < 3:
            _migrate_v2(conn, location)
        if 0 < version < 4:
            _migrate_v3(conn, location)
        for statement in split_sql(SCHEMA):
            conn.execute(statement)
        if version == 1:
            _migrate_v1(conn, location, dimensions)
        conn.execute(vectors_ddl(dimensions))
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
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _check_model(stored: dict[str, str], location: str, model_id: str, dimensions: int) -> None:
    stored_model = stored.get("model_id")
    stored_dims = int(stored["dimensions"]) if "dimensions" in stored else None
    if stored_model is not None and stored_model != model_id:
        raise ModelMismatchError(location, stored_model, model_id)
    if stored_dims is not None and stored_dims != dimensions:
        raise ModelMismatchError(
            location, f"{stored_model} ({stored_dims}-d)", f"{model_id} ({dimensions}-d)"
        )


def _migrate_v2(conn: Any, location: str) -> None:
    """Schema 1 or 2 → 3, inside open()'s transaction, before the schema script runs: the owner
    and privacy_scope columns (every existing memory is the local user's, private)."""
    log.info("migrating %s to schema 3 (owners and privacy scopes)", location)
    conn.execute("ALTER TABLE memories ADD COLUMN owner TEXT NOT NULL DEFAULT 'local'")
    conn.execute("ALTER TABLE memories ADD COLUMN privacy_scope TEXT NOT NULL DEFAULT 'private'")


def _migrate_v3(conn: Any, location: str) -> None:
    """Schema 1-3 → 4, inside open()'s transaction, before the schema script runs: occurred_at
    (an existing memory happened when it was stored) and thread (none)."""
    log.info("migrating %s to schema 4 (occurred_at and thread)", location)
    conn.execute("ALTER TABLE memories ADD COLUMN occurred_at INTEGER NOT NULL DEFAULT 0")
    conn.execute("ALTER TABLE memories ADD COLUMN thread TEXT")
    conn.execute("UPDATE memories SET occurred_at = created_at")


def _migrate_v1(conn: Any, location: str, dimensions: int) -> None:
    """Schema 1 → 2, inside open()'s transaction. v1 kept one vector per memory in
    ``vectors`` (rowid = memory seq; metadata columns ns, deleted, superseded). Each becomes the
    memory's single passage (vrow = seq); ``vectors`` is rebuilt with the type and created columns;
    ``memory_tags`` is filled from ``memories.tags``. Vectors of rows that no longer exist are
    dropped. All in SQL: no vector passes through Python."""
    log.info("migrating %s from schema 1 to 2", location)
    conn.execute("INSERT OR IGNORE INTO namespaces (name) SELECT DISTINCT namespace FROM memories")
    conn.execute(
        "INSERT INTO passages (vrow, seq, embedding) "
        "SELECT v.rowid, v.rowid, v.embedding FROM vectors v JOIN memories m ON m.seq = v.rowid"
    )
    conn.execute("DROP TABLE vectors")
    conn.execute(vectors_ddl(dimensions))
    conn.execute(FILL_VECTORS)
    conn.execute(
        "INSERT OR IGNORE INTO memory_tags (tag, seq) SELECT j.value, m.seq FROM memories m, json_each(m.tags) j"
    )


BEGIN_POLL_MIN_S = 0.0005  # a writer waiting for another process's write lock tries again after this …
BEGIN_POLL_MAX_S = 0.004  # … doubling up to this (with jitter)


def begin_immediate(conn: Any, module: Any, timeout_s: float) -> None:
    """BEGIN IMMEDIATE, polling every few milliseconds while another process holds the write lock,
    for up to ``timeout_s``. SQLite's own busy handler sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25,
    50, 50, 100, 100 … ms between tries, so a writer that just missed a 5 ms commit slept on for
    tens of milliseconds: 20 clients through two servers on one file waited 120 ms (p50) and
    480 ms (p90) for a store; polling brings both down (docs/benchmarks.md)."""
    deadline = time.monotonic() + timeout_s
    delay = BEGIN_POLL_MIN_S
    conn.execute("PRAGMA busy_timeout=0")
    try:
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except module.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(delay * (0.5 + random.random()))  # jitter: two waiters do not poll in step
            delay = min(delay * 2, BEGIN_POLL_MAX_S)
    finally:
        conn.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
