"""The reads every SQL store answers with the same SQL: a memory by id, its vectors, a page of a
listing, counts, namespaces, thread neighbours and every memory in storage order.

A store mixes in :class:`SqlReads` and fills in a :class:`SqlDialect` (SQLAlchemy's shape: the
statement is written once, the dialect says how its database spells the parts that differ): the
tables' names, the filter renderer (:mod:`.sql_filters`), the row codec (:mod:`.row_codec`) and how
a stored vector comes back as numpy. The store keeps what is its own: connections and transactions
(``_reading()``), the embedding-model check (``_check_model``), writes, KNN and keyword search.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .filter_terms import matches_nothing
from .list_order import ListOrder, SortKey
from .models import Memory, MemoryFilter
from .row_codec import COLUMNS, RowCodec
from .sql_filters import Condition, SqlFilter

if TYPE_CHECKING:
    from .protocols import Vector

ITER_BATCH = 500  # rows per query of iter_all (nothing is held between batches)
_COLUMNS = ", ".join(COLUMNS)
_ORDER_BY = {
    "newest": "created_at DESC, id DESC",
    "oldest": "created_at ASC, id ASC",
    "importance": "importance DESC, created_at DESC, id DESC",
}
# a memory that is neither deleted nor replaced by a newer version
_LIVE = "count(*) FILTER (WHERE deleted_at IS NULL AND superseded_by IS NULL)"


class SqlDialect(ABC):
    """The parts of the shared reads a SQL database spells its own way."""

    def __init__(self, *, memories: str, passages: str, filters: SqlFilter, codec: RowCodec) -> None:
        self.memories = memories  # the memories table (schema-qualified where the store needs it)
        self.passages = passages  # one row per vector: (vrow, seq, embedding)
        self.next_passages = f"{passages}_next"  # a re-embedding's rows of the new model (sql_reembed)
        schema, dot, table = passages.rpartition(".")
        self.pending_passages = f"{schema}{dot}pending_{table}"  # the passage backlog (sql_passage_backlog)
        self.filters = filters
        self.codec = codec
        self.marker = filters.marker

    def where(self, where: MemoryFilter, alias: str = "") -> Condition:
        """``where`` as conditions (``""`` when there are none) and their parameters."""
        return self.filters.render(where, alias)

    def ids(self, column: str, ids: Sequence[Any]) -> Condition:
        """``column`` is one of ``ids``, bound as one parameter."""
        return self.filters.one_of(column, ids)

    def before(self, created: datetime, memory_id: str) -> Condition:
        """Rows after ``(created, memory_id)`` in ``created_at DESC, id DESC`` order (a list's page)."""
        m = self.marker
        return f"(created_at, id) < ({m}, {m})", [self.filters.time(created), memory_id]

    def past(self, after: SortKey, order: ListOrder) -> Condition:
        """Rows after the sort key ``after`` in ``order`` (the next page of a list)."""
        m = self.marker
        if order == "importance":
            importance, created, memory_id = after  # type: ignore[misc]
            return f"(importance, created_at, id) < ({m}, {m}, {m})", [
                importance,
                self.filters.time(created),
                memory_id,
            ]
        created, memory_id = after  # type: ignore[misc]
        if order == "oldest":
            return f"(created_at, id) > ({m}, {m})", [self.filters.time(created), memory_id]
        return self.before(created, memory_id)

    @abstractmethod
    def vectors_of(self, stored: Sequence[Any]) -> Vector:
        """One memory's stored vectors, in order, as a float32 ``(rows, dims)`` array."""

    @abstractmethod
    def vector_param(self, vector: Vector) -> Any:
        """One float32 vector as a statement parameter (what ``vectors_of`` reads back)."""

    def executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run ``sql`` once per row of parameters."""
        conn.executemany(sql, rows)


def _where_clause(*conditions: str) -> str:
    """The non-empty ``conditions`` as a WHERE clause (``""`` when there are none)."""
    kept = [c for c in conditions if c]
    return f"WHERE {' AND '.join(kept)} " if kept else ""


class SqlReads:
    """The shared reads of a SQL store (see the module docstring); ``_dialect`` is the store's."""

    _dialect: SqlDialect

    if TYPE_CHECKING:  # provided by the store

        def _reading(self) -> AbstractContextManager[Any]: ...
        def _check_model(self, conn: Any) -> None: ...

    def get(self, ids: Sequence[str]) -> dict[str, Memory]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        d = self._dialect
        match, params = d.ids("id", ids)
        with self._reading() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM {d.memories} WHERE {match}", params).fetchall()
        return {row[0]: d.codec.decode(row) for row in rows}

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        """Each known memory's vectors (its whole text, then its passages), in insertion order."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        d = self._dialect
        match, params = d.ids("m.id", ids)
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT m.id, p.embedding FROM {d.memories} m JOIN {d.passages} p ON p.seq = m.seq "
                f"WHERE {match} ORDER BY p.vrow",
                params,
            ).fetchall()
            self._check_model(conn)  # a file or database re-embedded meanwhile: another model's rows
        found: dict[str, list[Any]] = {}
        for memory_id, embedding in rows:
            found.setdefault(memory_id, []).append(embedding)
        return {memory_id: d.vectors_of(stored) for memory_id, stored in found.items()}

    def thread_neighbours(
        self, ids: Sequence[str], where: MemoryFilter
    ) -> dict[str, tuple[str | None, str | None]]:
        """One window query over the rows of the threads ``ids`` are in (index ``memories_thread``)."""
        if not ids or matches_nothing(where):
            return {}
        d = self._dialect
        wanted, wanted_params = d.ids("id", list(dict.fromkeys(ids)))
        clause, params = d.where(where)
        sql = (
            "WITH ordered AS (SELECT id, LAG(id) OVER w AS before, LEAD(id) OVER w AS after "
            f"FROM {d.memories} WHERE thread IN (SELECT thread FROM {d.memories} WHERE thread IS NOT NULL "
            f"AND {wanted}) "
            + (f"AND {clause} " if clause else "")
            + "WINDOW w AS (PARTITION BY thread ORDER BY occurred_at, created_at, id)) "
            f"SELECT id, before, after FROM ordered WHERE {wanted}"
        )
        with self._reading() as conn:
            rows = conn.execute(sql, [*wanted_params, *params, *wanted_params]).fetchall()
        return {row[0]: (row[1], row[2]) for row in rows}

    def list(
        self,
        where: MemoryFilter,
        limit: int,
        after: SortKey | None = None,
        order: ListOrder = "newest",
    ) -> list[Memory]:
        limit = int(limit)
        if limit <= 0 or matches_nothing(where):
            return []
        d = self._dialect
        clause, params = d.where(where)
        page = ""
        if after is not None:
            page, more = d.past(after, order)
            params = [*params, *more]
        sql = (
            f"SELECT {_COLUMNS} FROM {d.memories} {_where_clause(clause, page)}"
            f"ORDER BY {_ORDER_BY[order]} LIMIT {d.marker}"
        )
        with self._reading() as conn:
            rows = conn.execute(sql, [*params, limit]).fetchall()
        return [d.codec.decode(row) for row in rows]

    def count(self, where: MemoryFilter) -> int:
        if matches_nothing(where):
            return 0
        d = self._dialect
        clause, params = d.where(where)
        with self._reading() as conn:
            (n,) = conn.execute(
                f"SELECT count(*) FROM {d.memories} {_where_clause(clause)}", params
            ).fetchone()
        return int(n)

    def namespaces(self, where: MemoryFilter | None = None) -> dict[str, int]:
        if where is not None and matches_nothing(where):
            return {}
        d = self._dialect
        clause, params = d.where(where) if where is not None else ("", [])
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT namespace, {_LIVE} FROM {d.memories} {_where_clause(clause)}GROUP BY namespace ORDER BY namespace",
                params,
            ).fetchall()
        return {str(name): int(n) for name, n in rows}

    def iter_all(self) -> Iterator[Memory]:
        """Every memory, in batches by seq (nothing is held between batches, so callers may write)."""
        d = self._dialect
        m = d.marker
        last = 0
        while True:
            with self._reading() as conn:
                rows = conn.execute(
                    f"SELECT seq, {_COLUMNS} FROM {d.memories} WHERE seq > {m} ORDER BY seq LIMIT {m}",
                    (last, ITER_BATCH),
                ).fetchall()
            if not rows:
                return
            for row in rows:
                yield d.codec.decode(row[1:])
            last = int(rows[-1][0])


class TaggedSqlDialect(SqlDialect):
    """A dialect that can join memories to their tags: what :class:`SqlTagCounts` needs."""

    @abstractmethod
    def tagged(self) -> str:
        """A FROM clause of the memories (alias ``m``) joined to their tags, one row per memory and
        tag, the tag as ``t.tag``."""


class SqlTagCounts:
    """Tag counts in one query (:class:`~.protocols.TagCounting`), for a SQL store whose dialect
    joins memories to their tags (:class:`TaggedSqlDialect`)."""

    _dialect: TaggedSqlDialect

    if TYPE_CHECKING:  # provided by the store

        def _reading(self) -> AbstractContextManager[Any]: ...

    def tag_counts(self, where: MemoryFilter) -> dict[str, int]:
        """How many memories matching ``where`` carry each tag (:class:`~.protocols.TagCounting`)."""
        if matches_nothing(where):
            return {}
        d = self._dialect
        clause, params = d.where(where, alias="m")
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT t.tag, count(DISTINCT m.seq) FROM {d.tagged()} {_where_clause(clause)}GROUP BY t.tag",
                params,
            ).fetchall()
        return {str(tag): int(n) for tag, n in rows}
