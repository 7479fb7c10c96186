"""The steps of re-embedding in place that every SQL store takes the same way (``mcp-memory reindex``
after a model change): how far a run is, which memories still lack the new model's rows, and
writing a batch of those rows into the side table (:attr:`~.sql_reads.SqlDialect.next_passages`,
the shape of ``passages``).

Creating the side table, the switch to it and the model bookkeeping in ``meta`` stay in each store:
they are where the stores differ (vec0 rebuilt in one SQLite transaction; an HNSW index built
concurrently on PostgreSQL while other servers keep writing).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np

from .models import Memory
from .row_codec import COLUMNS
from .sql_reads import SqlDialect
from .store_writes import checked_insert

if TYPE_CHECKING:
    from .protocols import Vector

MISSING_BATCH = 256  # memories read (and embedded) at a time by ``missing``
_M_COLUMNS = ", ".join(f"m.{c}" for c in COLUMNS)


def _without_new_rows(d: SqlDialect) -> str:
    return f"NOT EXISTS (SELECT 1 FROM {d.next_passages} n WHERE n.seq = m.seq)"


class SqlReembedding:
    """The shared re-embedding reads of a SQL store (see the module docstring)."""

    _dialect: SqlDialect
    _reembed_target: tuple[str, int] | None  # the model being written (set by the store's reembed_open)
    _reembed_cursor: int  # the last seq reembed_pending returned

    if TYPE_CHECKING:  # provided by the store

        def _reading(self) -> AbstractContextManager[Any]: ...

    def reembed_progress(self) -> tuple[int, int]:
        """(memories with rows of the new model, every memory)."""
        d = self._dialect
        with self._reading() as conn:
            (done,) = conn.execute(
                f"SELECT count(*) FROM {d.memories} m WHERE EXISTS "
                f"(SELECT 1 FROM {d.next_passages} n WHERE n.seq = m.seq)"
            ).fetchone()
            (total,) = conn.execute(f"SELECT count(*) FROM {d.memories}").fetchone()
        return int(done), int(total)

    def reembed_pending(self, limit: int) -> list[Memory]:
        """Up to ``limit`` memories (current or not: every version is searched) without rows of the
        new model, in storage order from where the previous call stopped."""
        self._target()
        d = self._dialect
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT m.seq, {_M_COLUMNS} FROM {d.memories} m WHERE m.seq > {d.marker} AND "
                f"{_without_new_rows(d)} ORDER BY m.seq LIMIT {d.marker}",
                (self._reembed_cursor, int(limit)),
            ).fetchall()
        if rows:
            self._reembed_cursor = int(rows[-1][0])
        return [d.codec.decode(row[1:]) for row in rows]

    def _target(self) -> tuple[str, int]:
        if self._reembed_target is None:
            raise RuntimeError(f"{self!r}: call reembed_open(model_id, dimensions) first.")
        return self._reembed_target


def missing(conn: Any, d: SqlDialect) -> Iterator[list[Memory]]:
    """Every memory still without rows of the new model, in batches, each read after the previous
    one was written (the caller puts each batch's rows before asking for the next)."""
    while True:
        rows = conn.execute(
            f"SELECT {_M_COLUMNS} FROM {d.memories} m WHERE {_without_new_rows(d)} ORDER BY m.seq "
            f"LIMIT {d.marker}",
            (MISSING_BATCH,),
        ).fetchall()
        if not rows:
            return
        yield [d.codec.decode(row) for row in rows]


def put_new_rows(
    conn: Any,
    d: SqlDialect,
    memories: Sequence[Memory],
    vectors: Vector,
    owners: Sequence[int] | None,
    dimensions: int,
) -> None:
    """Insert the new model's rows of ``memories`` (as ``insert`` takes them) into the side table,
    a memory's rows consecutively (its vrows keep their order). A memory purged meanwhile is
    skipped; one that has new rows already keeps them."""
    memories, array, owner_list = checked_insert(memories, vectors, owners, dimensions)
    match, params = d.ids("id", [m.id for m in memories])
    seqs = {
        str(i): int(seq)
        for i, seq in conn.execute(f"SELECT id, seq FROM {d.memories} WHERE {match}", params).fetchall()
    }
    match, params = d.ids("seq", list(seqs.values()))
    done = {
        int(row[0])
        for row in conn.execute(f"SELECT DISTINCT seq FROM {d.next_passages} WHERE {match}", params)
    }
    rows: dict[int, list[Any]] = {}
    for row, owner in enumerate(owner_list):
        seq = seqs.get(memories[owner].id)
        if seq is not None and seq not in done:
            rows.setdefault(seq, []).append(
                d.vector_param(np.ascontiguousarray(array[row], dtype=np.float32))
            )
    d.executemany(
        conn,
        f"INSERT INTO {d.next_passages} (seq, embedding) VALUES ({d.marker}, {d.marker})",
        [(seq, vector) for seq, of_memory in rows.items() for vector in of_memory],
    )
