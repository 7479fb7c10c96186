"""PostgreSQL's dialect of the shared filter renderer (:mod:`mcp_memory_core.sql_filters`).

Lists are bound as one array (``= ANY(%s)``), times as ``timestamptz``, tags are a ``text[]`` column
(GIN-indexed: ``&&`` any, ``@>`` all) and metadata a ``jsonb`` column, compared as JSON
(``jsonb_typeof`` tells a boolean from a number, and JSON null from a missing key).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mcp_memory_core.models import MemoryFilter, MetadataValue
from mcp_memory_core.row_codec import utc
from mcp_memory_core.sql_filters import Condition, SqlFilter


class PostgresFilter(SqlFilter):
    marker = "%s"
    nothing = "false"

    def one_of(self, column: str, values: Sequence[str]) -> Condition:
        return f"{column} = ANY(%s)", [list(values)]

    def time(self, when: datetime) -> datetime:
        return utc(when)

    def any_tag(self, p: str, tags: Sequence[str]) -> Condition:
        return f"{p}tags && %s::text[]", [list(tags)]

    def all_tags(self, p: str, tags: Sequence[str]) -> Condition:
        return f"{p}tags @> %s::text[]", [list(tags)]

    def metadata_equals(self, p: str, key: str, value: MetadataValue) -> Condition:
        item = f"{p}metadata -> %s"
        if value is None:
            return f"jsonb_typeof({item}) = 'null'", [key]
        if isinstance(value, bool):
            return f"{item} = %s::jsonb", [key, "true" if value else "false"]
        if isinstance(value, int | float):
            # numeric compares exactly, whatever the size of an integer (1 = 1.0, as JSON says)
            return (
                f"(jsonb_typeof({item}) = 'number' AND ({p}metadata ->> %s)::numeric = %s::numeric)",
                [key, key, str(value)],
            )
        return f"(jsonb_typeof({item}) = 'string' AND {p}metadata ->> %s = %s)", [key, key, value]


_RENDERER = PostgresFilter()


def where_sql(where: MemoryFilter, alias: str = "") -> tuple[str, list[Any]]:
    """Conditions on the memories table for ``where`` (without WHERE; ``"true"`` when none)."""
    sql, params = _RENDERER.render(where, alias)
    return sql or "true", params
