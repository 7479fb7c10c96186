"""The SQL of a passage backlog (:class:`~.protocols.PassageBacklog`), shared by the SQL stores: a
``pending_passages(seq)`` table (``SqlDialect.pending_passages``) holding one row per memory written
with its whole text's vector only, its row deleted with the memory.

Each function runs on the connection it is given; the store supplies its connection and its
transaction, and adds the vectors itself (how a vector row is written is its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .models import Memory
from .row_codec import COLUMNS
from .sql_reads import SqlDialect

_MEMORY_COLUMNS = ", ".join(f"m.{name}" for name in COLUMNS)


def mark_pending(conn: Any, dialect: SqlDialect, ids: Sequence[str]) -> None:
    """Mark the stored memories among ``ids`` (in the caller's transaction)."""
    for memory_id in ids:
        conn.execute(
            f"INSERT INTO {dialect.pending_passages} (seq) SELECT seq FROM {dialect.memories} "
            f"WHERE id = {dialect.marker} AND seq NOT IN (SELECT seq FROM {dialect.pending_passages})",
            (memory_id,),
        )


def pending(conn: Any, dialect: SqlDialect, limit: int) -> list[tuple[str, str]]:
    """Up to ``limit`` marked memories as (id, content), the oldest mark first."""
    rows = conn.execute(
        f"SELECT m.id, m.content FROM {dialect.pending_passages} p "
        f"JOIN {dialect.memories} m ON m.seq = p.seq ORDER BY p.seq LIMIT {dialect.marker}",
        (int(limit),),
    ).fetchall()
    return [(str(memory_id), str(content)) for memory_id, content in rows]


def count_pending(conn: Any, dialect: SqlDialect) -> int:
    (count,) = conn.execute(f"SELECT count(*) FROM {dialect.pending_passages}").fetchone()
    return int(count)


def take_pending(conn: Any, dialect: SqlDialect, memory_id: str) -> tuple[int, Memory] | None:
    """Clear the memory's mark (in the caller's write transaction) and return its seq and its row,
    when the passages are still to add: None when it was not marked (another process took it: the
    DELETE waits for that one's transaction and then finds nothing), is gone, or has more than one
    vector already (re-embedded meanwhile)."""
    m = dialect.marker
    taken = conn.execute(
        f"DELETE FROM {dialect.pending_passages} WHERE seq = "
        f"(SELECT seq FROM {dialect.memories} WHERE id = {m})",
        (memory_id,),
    ).rowcount
    if not taken:
        return None
    row = conn.execute(
        f"SELECT m.seq, (SELECT count(*) FROM {dialect.passages} p WHERE p.seq = m.seq), "
        f"{_MEMORY_COLUMNS} FROM {dialect.memories} m WHERE m.id = {m}",
        (memory_id,),
    ).fetchone()
    if row is None or int(row[1]) > 1:
        return None
    return int(row[0]), dialect.codec.decode(row[2:])
