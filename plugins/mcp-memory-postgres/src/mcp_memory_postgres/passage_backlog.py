"""The passage backlog (:class:`~mcp_memory_core.protocols.PassageBacklog`): memories written with
their whole text's vector only, whose passages' vectors the engine adds after acknowledging them.

``pending_passages(seq)`` (schema 2) holds one row per such memory, written in the transaction that
inserts it and deleted with it (a foreign key, ``ON DELETE CASCADE``); the SQL is the core's
(:mod:`mcp_memory_core.sql_passage_backlog`). Completing one clears its mark first: two servers
completing the same memory at once take turns on that row, and the second finds it gone.

A mixin: the store owns the connections and the model check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp_memory_core import sql_passage_backlog as backlog
from mcp_memory_core.protocols import Vector
from mcp_memory_core.store_writes import checked_rows

from .dialect import DIALECT

if TYPE_CHECKING:
    from contextlib import AbstractContextManager


class PassageBacklogTable:
    """The passage backlog part of :class:`~.store.PostgresStore` (see the module docstring)."""

    _model: tuple[str, int] | None

    if TYPE_CHECKING:  # provided by the store

        def transaction(self) -> AbstractContextManager[None]: ...
        def _connection(self) -> AbstractContextManager[Any]: ...
        def _check_model(self, conn: Any) -> None: ...

    def mark_passages_pending(self, ids: Sequence[str]) -> None:
        with self.transaction(), self._connection() as conn:
            backlog.mark_pending(conn, DIALECT, ids)

    def pending_passages(self, limit: int) -> list[tuple[str, str]]:
        if limit <= 0:
            return []
        with self._connection() as conn:
            return backlog.pending(conn, DIALECT, limit)

    def count_pending_passages(self) -> int:
        with self._connection() as conn:
            return backlog.count_pending(conn, DIALECT)

    def complete_passages(self, memory_id: str, vectors: Vector) -> bool:
        assert self._model is not None, "PostgresStore.open() must be called first."
        rows = checked_rows(vectors, self._model[1])
        with self.transaction(), self._connection() as conn:
            taken = backlog.take_pending(conn, DIALECT, memory_id)
            if taken is None or not len(rows):
                return False
            self._check_model(conn)  # never rows of another model beside a re-embedded database's
            seq, _ = taken
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {DIALECT.passages} (seq, embedding) VALUES (%s, %s)",
                    [(seq, row) for row in rows],
                )
            return True
