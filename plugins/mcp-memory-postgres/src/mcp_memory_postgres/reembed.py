"""Re-embedding the team database in place (``mcp-memory reindex`` after a model change), while the
servers still on the old model keep serving it.

The new model's rows fill ``passages_next`` (the shape of ``passages``, ``vector(D)`` of the new
dimension count, deleted with their memory by the same foreign key), batch by batch, each batch
committed: an interrupted run resumes (``meta`` keys ``reembed_model_id`` / ``reembed_dimensions``
say for which model; a run for another model drops the table and starts over). Servers on the old
model keep storing (their new memories are embedded at the end) and purging (the cascade drops the
new rows too).

``reembed_finish`` embeds what is still missing, builds the new table's HNSW index concurrently
(other servers go on), then switches in one short transaction: it takes a lock on ``memories`` that
holds back other servers' writes (not their reads), embeds what they stored in the last moments,
replaces ``passages`` with the new table and binds ``meta`` to the new model. A server still on the
old model checks ``meta`` after each search and inside each write (after its row lock): it is
refused from then on, and never compares its queries with the other model's vectors.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from mcp_memory_core.errors import ModelMismatchError
from mcp_memory_core.models import Memory
from mcp_memory_core.protocols import Vector
from mcp_memory_core.row_codec import COLUMNS
from mcp_memory_core.sql_reembed import SqlReembedding, missing, put_new_rows

from .dialect import DIALECT
from .schema import BUILD_MEMORY, MIGRATION_LOCK, SCHEMA, VECTOR_INDEX
from .vector_index import IndexKeeper

if TYPE_CHECKING:
    from mcp_memory_core.row_codec import RowCodec

log = logging.getLogger(__name__)

NEXT_TABLE = "passages_next"
_NEXT = f"{SCHEMA}.{NEXT_TABLE}"
_NEXT_INDEX = f"{NEXT_TABLE}_embedding"
_TARGET_KEYS = ["reembed_model_id", "reembed_dimensions"]
_M_COLUMNS = ", ".join(f"m.{c}" for c in COLUMNS)

Embed = Callable[[Sequence[Memory]], tuple[Vector, "list[int] | None"]]


class Reembedding(SqlReembedding):
    """The re-embedding part of :class:`~.store.PostgresStore` (see the module docstring)."""

    _url: str
    _location: str
    _pool: Any
    _model: tuple[str, int] | None
    _reembed_target: tuple[str, int] | None
    _reembed_cursor: int
    _local: threading.local
    _exact_rows: int
    _index: IndexKeeper

    if TYPE_CHECKING:  # provided by the store
        _codec: RowCodec

        def open(self, model_id: str, dimensions: int) -> None: ...
        def transaction(self) -> AbstractContextManager[None]: ...
        def _connection(self) -> AbstractContextManager[Any]: ...
        def _errors(self, action: str) -> AbstractContextManager[None]: ...

    # -- the model the database holds ---------------------------------------------------------------
    def _check_model(self, conn: Any) -> None:
        """Raise ModelMismatchError when the database was re-embedded with another model since this
        store bound itself to its model (searches check after their query, writes after their lock)."""
        row = conn.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'model_id'").fetchone()
        self._refuse_another_model(None if row is None else row[0])

    def _refuse_another_model(self, stored: str | None) -> None:
        """Raise ModelMismatchError when ``stored`` (meta's model_id) is not this store's model."""
        if stored is not None and self._model is not None and stored != self._model[0]:
            raise ModelMismatchError(self._location, str(stored), self._model[0], reembedded=True)

    def stored_model(self) -> tuple[str, int] | None:
        """(model id, dimensions) of the stored vectors; None for a database without our schema."""
        if self._pool is not None:
            with self._connection() as conn:
                return _model_of(conn)
        import psycopg

        with self._errors("open"), psycopg.connect(self._url, autocommit=True) as conn:
            return _model_of(conn)

    # -- a run -------------------------------------------------------------------------------------
    def reembed_open(self, model_id: str, dimensions: int) -> tuple[str, int] | None:
        """Open bound to the model the database holds (returned), with the side table ready (kept
        from an earlier run for the same model: it resumes); None when it holds ``model_id`` already
        (or nothing yet): then it is simply open, with that model."""
        stored = self.stored_model()
        if stored is None or stored == (model_id, dimensions):
            self.open(model_id, dimensions)
            self._reembed_target = None
            with self.transaction(), self._connection() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                _drop_side_table(conn)  # left by a run that was abandoned
            return None
        self.open(*stored)
        wanted = {"reembed_model_id": model_id, "reembed_dimensions": str(dimensions)}
        with self.transaction(), self._connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            target = dict(
                conn.execute(
                    f"SELECT key, value FROM {SCHEMA}.meta WHERE key = ANY(%s)", (_TARGET_KEYS,)
                ).fetchall()
            )
            if target != wanted:
                _drop_side_table(conn)
                log.info("re-embedding %s: %s -> %s", self._location, stored[0], model_id)
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {_NEXT} ("
                " vrow bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
                f" seq bigint NOT NULL REFERENCES {SCHEMA}.memories (seq) ON DELETE CASCADE,"
                f" embedding vector({int(dimensions)}) NOT NULL)"
            )
            conn.execute(f"CREATE INDEX IF NOT EXISTS {NEXT_TABLE}_seq ON {_NEXT} (seq)")
            conn.execute(
                f"INSERT INTO {SCHEMA}.meta (key, value) SELECT * FROM unnest(%s::text[], %s::text[]) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (list(wanted), list(wanted.values())),
            )
        self._reembed_target = (model_id, dimensions)
        self._reembed_cursor = 0
        return stored

    def reembed_put(
        self, memories: Sequence[Memory], vectors: Vector, owners: Sequence[int] | None = None
    ) -> None:
        """Keep the new model's rows of ``memories``, committed; a memory purged meanwhile is skipped,
        one that has rows already keeps them."""
        _, dimensions = self._target()
        with self.transaction(), self._connection() as conn:
            put_new_rows(conn, DIALECT, memories, vectors, owners, dimensions)

    def reembed_finish(self, embed: Embed) -> int:
        """Switch the database to the new model (see the module docstring). Returns how many memories
        were embedded here (stored by other servers since the last batch)."""
        model_id, dimensions = self._target()
        late = 0
        with self._connection() as conn:  # autocommit: what the others stored meanwhile, then the index
            for batch in missing(conn, DIALECT):
                late += len(batch)
                with conn.transaction():
                    put_new_rows(conn, DIALECT, batch, *embed(batch), dimensions)
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {SCHEMA}.{_NEXT_INDEX}")  # an invalid leftover
            # Only a store past exact scans gets the index (vector_index.py); a smaller one gets it
            # from the first KNN that counts more.
            (rows,) = conn.execute(f"SELECT count(*) FROM {_NEXT}").fetchone()
            indexed = int(rows) > self._exact_rows
            if indexed:
                try:
                    conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (BUILD_MEMORY,))
                    conn.execute(
                        f"CREATE INDEX CONCURRENTLY {_NEXT_INDEX} ON {_NEXT} USING hnsw (embedding vector_cosine_ops)"
                    )
                finally:
                    conn.execute("RESET maintenance_work_mem")
        with self.transaction(), self._connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(f"LOCK TABLE {SCHEMA}.memories IN SHARE ROW EXCLUSIVE MODE")  # writers wait
            for batch in missing(conn, DIALECT):
                late += len(batch)
                put_new_rows(conn, DIALECT, batch, *embed(batch), dimensions)
            conn.execute(f"DROP TABLE {SCHEMA}.passages")
            conn.execute(f"ALTER TABLE {_NEXT} RENAME TO passages")
            if indexed:
                conn.execute(f"ALTER INDEX {SCHEMA}.{_NEXT_INDEX} RENAME TO {VECTOR_INDEX}")
            conn.execute(f"ALTER INDEX {SCHEMA}.{NEXT_TABLE}_seq RENAME TO passages_seq")
            conn.execute(
                f"INSERT INTO {SCHEMA}.meta (key, value) VALUES ('model_id', %s), ('dimensions', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (model_id, str(dimensions)),
            )
            conn.execute(f"DELETE FROM {SCHEMA}.meta WHERE key = ANY(%s)", (_TARGET_KEYS,))
        self._model = (model_id, dimensions)
        self._reembed_target = None
        if indexed:
            self._index.known_ready()
        else:
            self._index.forget()
        log.info("%s now holds vectors of %s (%d-d)", self._location, model_id, dimensions)
        return late


def _model_of(conn: Any) -> tuple[str, int] | None:
    if conn.execute("SELECT to_regclass(%s)", (f"{SCHEMA}.meta",)).fetchone()[0] is None:
        return None
    meta = dict(conn.execute(f"SELECT key, value FROM {SCHEMA}.meta").fetchall())
    if "model_id" not in meta or "dimensions" not in meta:
        return None
    return str(meta["model_id"]), int(meta["dimensions"])


def _drop_side_table(conn: Any) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {_NEXT}")
    conn.execute(f"DELETE FROM {SCHEMA}.meta WHERE key = ANY(%s)", (_TARGET_KEYS,))
