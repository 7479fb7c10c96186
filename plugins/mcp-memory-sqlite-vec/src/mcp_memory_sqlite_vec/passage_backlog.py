"""The passage backlog (:class:`~mcp_memory_core.protocols.PassageBacklog`): memories written with
their whole text's vector only, whose passages' vectors the engine adds after acknowledging them.

``pending_passages(seq)`` holds one row per such memory, written in the transaction that inserts it
(so a crash keeps both or neither) and deleted by a trigger when the memory is purged. Completing
one adds its vectors in one write transaction, under the write lock: a second process completing
the same memory finds no row left and changes nothing. The vectors go into ``passages`` and
``vectors`` like an insert's, so ``cache_log`` tells every process's vector cache about them.

A mixin: the store owns the connections, the locks and the model check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from mcp_memory_core.protocols import Vector
from mcp_memory_core.row_codec import COLUMNS

from .dialect import DIALECT

if TYPE_CHECKING:
    from collections.abc import Sequence
    from contextlib import AbstractContextManager

    from mcp_memory_core.models import Memory

_MEMORY_COLUMNS = ", ".join(f"m.{name}" for name in COLUMNS)


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
        """Mark these memories' passages as still to come, in the open transaction (unknown ids are
        ignored)."""
        with self.transaction():
            self._db().executemany(
                "INSERT OR IGNORE INTO pending_passages (seq) SELECT seq FROM memories WHERE id = ?",
                [(memory_id,) for memory_id in ids],
            )

    def pending_passages(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` marked memories, (id, content), the oldest mark first. A file opened
        read-only has nothing to complete."""
        if self._read_only or limit <= 0:
            return []
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT m.id, m.content FROM pending_passages p JOIN memories m ON m.seq = p.seq "
                "ORDER BY p.seq LIMIT ?",
                (int(limit),),
            ).fetchall()
        return [(str(memory_id), str(content)) for memory_id, content in rows]

    def count_pending_passages(self) -> int:
        if self._read_only:
            return 0
        with self._reading() as conn:
            (count,) = conn.execute("SELECT count(*) FROM pending_passages").fetchone()
        return int(count)

    def complete_passages(self, memory_id: str, vectors: Vector) -> bool:
        """Add the passages' rows to a marked memory, with its current filter columns, and clear its
        mark, in one transaction (see the protocol for when only the mark is cleared)."""
        dims = int(self._dims or 0)
        rows = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
        if rows.ndim != 2 or rows.shape[1] != dims or not np.all(np.isfinite(rows)):
            raise ValueError(f"complete_passages needs finite {dims}-d rows; got shape {rows.shape}")
        with self.transaction():
            conn = self._db()
            self._check_model(conn)  # never rows of another model beside a re-embedded file's
            found = conn.execute(
                f"SELECT m.seq, (SELECT count(*) FROM passages WHERE seq = m.seq), {_MEMORY_COLUMNS} "
                "FROM pending_passages p JOIN memories m ON m.seq = p.seq WHERE m.id = ?",
                (memory_id,),
            ).fetchone()
            if found is None:
                return False
            seq, existing = int(found[0]), int(found[1])
            conn.execute("DELETE FROM pending_passages WHERE seq = ?", (seq,))
            if existing > 1 or not len(rows):
                return False
            flags = self._vector_flags(DIALECT.codec.decode(found[2:]))
            for row in rows:
                self._add_vector(conn, seq, flags, row)
            return True
