"""PostgreSQL's dialect of the reads every SQL store shares (:mod:`mcp_memory_core.sql_reads`): lists
bound as one array, times as ``timestamptz``, vectors as pgvector values (numpy through its adapter)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mcp_memory_core.protocols import Vector
from mcp_memory_core.row_codec import RowCodec
from mcp_memory_core.sql_reads import TaggedSqlDialect

from .schema import SCHEMA
from .sql_filters import PostgresFilter


class JsonbRowCodec(RowCodec):
    """Times as ``timestamptz``, metadata as ``jsonb``, tags as ``text[]``."""

    def json_out(self, value: dict[str, Any]) -> Any:
        from psycopg.types.json import Jsonb

        return Jsonb(value)


class PostgresDialect(TaggedSqlDialect):
    def __init__(self) -> None:
        super().__init__(
            memories=f"{SCHEMA}.memories",
            passages=f"{SCHEMA}.passages",
            filters=PostgresFilter(),
            codec=JsonbRowCodec(),
        )

    def tagged(self) -> str:
        return f"{self.memories} m CROSS JOIN LATERAL unnest(m.tags) AS t(tag)"

    def vectors_of(self, stored: Sequence[Any]) -> Vector:
        return np.stack([np.asarray(v.to_numpy(), dtype=np.float32) for v in stored])

    def vector_param(self, vector: Vector) -> Vector:
        return vector  # pgvector's adapter (registered on every pooled connection) binds numpy

    def executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, rows)


DIALECT = PostgresDialect()
