"""The passage backlog (:class:`~mcp_memory_core.protocols.PassageBacklog`): memories written with
their whole text's vector only, whose passages' vectors the engine adds after acknowledging them.

``pending_passages(seq)`` holds one row per such memory, written in the transaction that inserts it
(so a crash keeps both or neither) and deleted by a trigger when the memory is purged; the SQL is the
core's (:mod:`mcp_memory_core.sql_passage_backlog`). Completing one adds its vectors in one write
transaction, under the write lock: a second process completing the same memory finds no mark left
and changes nothing. The vectors go into ``passages`` and ``vectors`` like an insert's, so
``cache_log`` tells every process's vector cache about them.

A mixin: the store owns the connections, the locks and the model check.
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

    from mcp_memory_core.models import Memory


class PassageBacklogTable:
    """The passage backlog part of :class:`~.store.SqliteVecStore` (see the module docstring)."""

    _dims: int | None
    _read_only: bool

    if TYPE_CHECKING:  # provided by the store

        def transaction(self) -> AbstractContextManager[None]: ...
        def _db(self) -> Any: ...
        def _reading(self) -> AbstractContextManager[Any]: ...
        def _check_model(self, conn: Any) -> None: ...
        def _vector_flags(self, m: Memory) -> tuple[int, int, int, int, int]: ...
        def _add_vector(self, conn: Any, seq: int, flags: tuple[int, ...], row: Vector) -> None: ...

    def mark_passages_pending(self, ids: Sequence[str]) -> None:
        with self.transaction():
            backlog.mark_pending(self._db(), DIALECT, ids)

    def pending_passages(self, limit: int) -> list[tuple[str, str]]:
        """A file opened read-only has nothing to complete."""
        if self._read_only or limit <= 0:
            return []
        with self._reading() as conn:
            return backlog.pending(conn, DIALECT, limit)

    def count_pending_passages(self) -> int:
        if self._read_only:
            return 0
        with self._reading() as conn:
            return backlog.count_pending(conn, DIALECT)

    def complete_passages(self, memory_id: str, vectors: Vector) -> bool:
        rows = checked_rows(vectors, int(self._dims or 0))
        with self.transaction():
            conn = self._db()
            self._check_model(conn)  # never rows of another model beside a re-embedded file's
            taken = backlog.take_pending(conn, DIALECT, memory_id)
            if taken is None or not len(rows):
                return False
            seq, memory = taken
            flags = self._vector_flags(memory)
            for row in rows:
                self._add_vector(conn, seq, flags, row)
            return True
