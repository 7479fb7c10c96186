"""Re-embedding the file in place (``mcp-memory reindex`` after a model change), while servers still
on the old model keep using it.

The new model's rows fill a side table, ``passages_next`` (vrow, seq, embedding: the shape of
``passages``), batch by batch, each batch committed: an interrupted run resumes where it stopped
(``meta`` keys ``reembed_model_id`` / ``reembed_dimensions`` say for which model; a run for another
model drops the table and starts over). Meanwhile a server on the old model may store memories
(they get old rows only) or purge some (their new rows become orphans).

``reembed_finish`` then switches in one write transaction (other writers wait; readers keep their
snapshot): it embeds every memory that still has no new rows, drops orphans, replaces ``passages``
with the side table, builds ``vectors`` (vec0) again at the new dimension count (about 6 s per 100k
rows here: the only long step, and the write lock is held through it) and binds ``meta`` to the new
model. A reader sees the old vectors or the new ones, never a mix; a process still bound to the old
model gets ModelMismatchError from its next search or write (``_check_model``), never a comparison of
two models' vectors.

A mixin: the store owns the connections, locks and the vector cache.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_memory_core.errors import ModelMismatchError
from mcp_memory_core.models import Memory
from mcp_memory_core.protocols import Vector
from mcp_memory_core.sql_reembed import SqlReembedding, missing, put_new_rows

from .dialect import DIALECT
from .schema import FILL_VECTORS, SCHEMA, split_sql, vectors_ddl

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from mcp_memory_core.protocols import StoreDiagnosis

log = logging.getLogger("mcp_memory_sqlite_vec")

NEXT_TABLE = "passages_next"
NEXT_DDL = (
    f"CREATE TABLE IF NOT EXISTS {NEXT_TABLE} "
    "(vrow INTEGER PRIMARY KEY, seq INTEGER NOT NULL, embedding BLOB NOT NULL)"
)
NEXT_INDEX = f"CREATE INDEX IF NOT EXISTS {NEXT_TABLE}_seq ON {NEXT_TABLE} (seq)"
_TARGET_KEYS = ("reembed_model_id", "reembed_dimensions")

Embed = Callable[[Sequence[Memory]], tuple[Vector, "list[int] | None"]]


class Reembedding(SqlReembedding):
    """The re-embedding part of :class:`~.store.SqliteVecStore` (see the module docstring)."""

    _path: str | Path
    _conn: Any
    _lock: threading.RLock
    _cache_lock: threading.RLock
    _model_id: str | None
    _dims: int | None
    _reembed_target: tuple[str, int] | None
    _reembed_cursor: int
    _tx_known: dict[str, Any]

    if TYPE_CHECKING:  # provided by the store

        @property
        def location(self) -> str: ...
        def open(self, model_id: str, dimensions: int) -> None: ...
        def diagnose(self) -> StoreDiagnosis: ...
        def transaction(self) -> AbstractContextManager[None]: ...
        def _db(self) -> Any: ...
        def _reading(self) -> AbstractContextManager[Any]: ...
        def _drop_cache(self) -> None: ...
        def _in_transaction(self) -> bool: ...

    # -- the model the file holds ------------------------------------------------------------------
    def _check_model(self, conn: Any) -> None:
        """Raise ModelMismatchError when the file was re-embedded with another model since this
        store bound itself to its model (one primary-key lookup; searches and writes call it)."""
        known = self._tx_known if self._in_transaction() and conn is self._conn else {}
        if known.get("model") == self._model_id:
            return  # checked in this transaction: no switch can commit while it holds the write lock
        row = conn.execute("SELECT value FROM meta WHERE key = 'model_id'").fetchone()
        if row is not None and row[0] != self._model_id:
            raise ModelMismatchError(self.location, str(row[0]), str(self._model_id), reembedded=True)
        known["model"] = self._model_id

    def stored_model(self) -> tuple[str, int] | None:
        """The embedding model the file's vectors are from, (model id, dimensions); None for a file
        that does not exist yet or holds no model. Reads without opening (or creating) anything."""
        if self._conn is not None:
            with self._reading() as conn:
                meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            return (meta["model_id"], int(meta["dimensions"])) if "model_id" in meta else None
        if not isinstance(self._path, Path) or not self._path.exists():
            return None
        found = self.diagnose()
        if found.model_id is None or found.dimensions is None:
            return None
        return found.model_id, found.dimensions

    # -- a run -------------------------------------------------------------------------------------
    def reembed_open(self, model_id: str, dimensions: int) -> tuple[str, int] | None:
        """Open the file for re-embedding into ``model_id``: bound to the model it holds now (returned)
        with the side table ready (an earlier run's for the same model is kept: it resumes); None when
        it holds ``model_id`` already (or nothing yet): then it is simply open, with that model."""
        stored = self.stored_model()
        if stored is None or stored == (model_id, dimensions):
            self.open(model_id, dimensions)
            self._reembed_target = None
            with self.transaction():
                self._drop_side_table(self._db())  # left by a run that was abandoned
            return None
        self.open(*stored)
        with self.transaction():
            conn = self._db()
            target = dict(
                conn.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", _TARGET_KEYS).fetchall()
            )
            wanted = {"reembed_model_id": model_id, "reembed_dimensions": str(dimensions)}
            if target != wanted:
                self._drop_side_table(conn)
                log.info("re-embedding %s: %s -> %s", self.location, stored[0], model_id)
            conn.execute(NEXT_DDL)
            conn.execute(NEXT_INDEX)
            conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", wanted.items())
        self._reembed_target = (model_id, dimensions)
        self._reembed_cursor = 0
        return stored

    def reembed_put(
        self, memories: Sequence[Memory], vectors: Vector, owners: Sequence[int] | None = None
    ) -> None:
        """Keep the new model's rows of ``memories`` (as ``insert`` takes them), committed. A memory
        purged meanwhile is skipped; one that has rows already keeps them."""
        _, dimensions = self._target()
        with self.transaction():
            put_new_rows(self._db(), DIALECT, memories, vectors, owners, dimensions)

    def reembed_finish(self, embed: Embed) -> int:
        """Switch the file to the new model (see the module docstring); ``embed(memories)`` gives the
        rows of memories that still have none. Returns how many were embedded here. The store is then
        bound to the new model."""
        model_id, dimensions = self._target()
        with self._lock, self.transaction():
            conn = self._db()
            late = 0
            for batch in missing(conn, DIALECT):
                late += len(batch)
                put_new_rows(conn, DIALECT, batch, *embed(batch), dimensions)
            conn.execute(f"DELETE FROM {NEXT_TABLE} WHERE seq NOT IN (SELECT seq FROM memories)")
            conn.execute("DROP TABLE vectors")
            conn.execute("DROP TABLE passages")  # its triggers go with it
            conn.execute(f"ALTER TABLE {NEXT_TABLE} RENAME TO passages")
            conn.execute(f"DROP INDEX IF EXISTS {NEXT_TABLE}_seq")
            for statement in split_sql(SCHEMA):  # passages' index and triggers again
                conn.execute(statement)
            conn.execute(vectors_ddl(dimensions))
            conn.execute(FILL_VECTORS)
            conn.execute("DELETE FROM cache_log")  # every cache reloads: its rows are another model's
            conn.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [("model_id", model_id), ("dimensions", str(dimensions))],
            )
            conn.execute("DELETE FROM meta WHERE key IN (?, ?)", _TARGET_KEYS)
            self._model_id, self._dims = model_id, dimensions
            with self._cache_lock:
                self._drop_cache()
        self._reembed_target = None
        log.info("%s now holds vectors of %s (%d-d)", self.location, model_id, dimensions)
        return late

    # -- helpers -----------------------------------------------------------------------------------
    @staticmethod
    def _drop_side_table(conn: Any) -> None:
        conn.execute(f"DROP TABLE IF EXISTS {NEXT_TABLE}")
        conn.execute("DELETE FROM meta WHERE key IN (?, ?)", _TARGET_KEYS)
