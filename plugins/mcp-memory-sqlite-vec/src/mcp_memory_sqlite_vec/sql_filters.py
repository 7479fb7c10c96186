"""SQLite's dialect of the shared filter renderer (:mod:`mcp_memory_core.sql_filters`).

Lists are bound as one JSON array read with ``json_each`` (one parameter, however many values),
times are integer microseconds, tags are looked up in ``memory_tags`` and metadata with
``json_each`` over the row's JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mcp_memory_core.filter_terms import Absent, AtOrAfter, Before, Equals, OneOf, compile_filter
from mcp_memory_core.models import MemoryFilter, MetadataValue
from mcp_memory_core.row_codec import to_micros
from mcp_memory_core.sql_filters import Condition, SqlFilter


class SqliteFilter(SqlFilter):
    marker = "?"

    def one_of(self, column: str, values: Sequence[str]) -> Condition:
        return f"{column} IN (SELECT value FROM json_each(?))", [json.dumps(list(values), ensure_ascii=False)]

    def time(self, when: datetime) -> int:
        return to_micros(when)

    def boolean(self, value: bool) -> int:
        return int(value)

    def any_tag(self, p: str, tags: Sequence[str]) -> Condition:
        return (
            f"{p}seq IN (SELECT seq FROM memory_tags WHERE tag IN (SELECT value FROM json_each(?)))",
            [json.dumps(list(tags), ensure_ascii=False)],
        )

    def all_tags(self, p: str, tags: Sequence[str]) -> Condition:
        return (
            f"{p}seq IN (SELECT seq FROM memory_tags WHERE tag IN (SELECT value FROM json_each(?)) "
            "GROUP BY seq HAVING count(*) = ?)",
            [json.dumps(list(tags), ensure_ascii=False), len(tags)],
        )

    def metadata_equals(self, p: str, key: str, value: MetadataValue) -> Condition:
        # json_each avoids quoting keys in JSON paths; j.type tells a boolean from an integer
        head = f"EXISTS (SELECT 1 FROM json_each({p}metadata) j WHERE j.key = ? AND "
        if value is None:
            return head + "j.type = 'null')", [key]
        if isinstance(value, bool):
            return head + f"j.type = '{'true' if value else 'false'}')", [key]
        if isinstance(value, int | float):
            return head + "j.type IN ('integer', 'real') AND j.value = ?)", [key, _sql_number(value)]
        return head + "j.type = 'text' AND j.value = ?)", [key, value]


_RENDERER = SqliteFilter()


def where_sql(where: MemoryFilter, alias: str = "") -> tuple[str, list[Any]]:
    """SQL conditions on the memories table for ``where`` (without WHERE) and their parameters."""
    return _RENDERER.render(where, alias)


def needs_rows(where: MemoryFilter) -> bool:
    """True when the filter has terms the vec0 metadata columns (and the vector cache's per-row
    arrays) cannot express: anything but namespaces, tombstones, replaced versions, types and
    created_at. Those are resolved on the rows table first."""
    terms = compile_filter(where)
    if terms is None:
        return False
    for term in terms:
        match term:
            case Equals("namespace", _) | OneOf("namespace", _) | OneOf("type", _):
                continue
            case Absent("deleted_at" | "superseded_by"):
                continue
            case AtOrAfter("created_at", _) | Before("created_at", _):
                continue
            case _:
                return True
    return False


def _sql_number(value: int | float) -> int | float:
    """A number SQLite can bind: integers beyond 64 bits compare as reals."""
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return float(value)
    return value
