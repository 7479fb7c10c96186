"""SQLite's dialect of the reads every SQL store shares (:mod:`mcp_memory_core.sql_reads`): lists bound
as one JSON array, times as integer microseconds, vectors as float32 blobs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np

from mcp_memory_core.protocols import Vector
from mcp_memory_core.row_codec import JsonTextRowCodec
from mcp_memory_core.sql_filters import Condition
from mcp_memory_core.sql_reads import TaggedSqlDialect

from .sql_filters import SqliteFilter


class SqliteDialect(TaggedSqlDialect):
    def __init__(self) -> None:
        super().__init__(
            memories="memories", passages="passages", filters=SqliteFilter(), codec=JsonTextRowCodec()
        )

    def before(self, created: datetime, memory_id: str) -> Condition:
        # spelled out rather than a row value, the form the (created_at, id) index was measured with
        micros = self.filters.time(created)
        return "(created_at < ? OR (created_at = ? AND id < ?))", [micros, micros, memory_id]

    def tagged(self) -> str:
        return "memories m JOIN memory_tags t ON t.seq = m.seq"  # the tags' index, kept by triggers

    def vectors_of(self, stored: Sequence[Any]) -> Vector:
        return np.frombuffer(b"".join(stored), dtype=np.float32).reshape(len(stored), -1)

    def vector_param(self, vector: Vector) -> bytes:
        return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


DIALECT = SqliteDialect()
