"""The SQL one ``store_memory`` issues on the sqlite-vec store, every connection counted (the writer,
the read connections, the vector cache's): one transaction, and nothing read twice in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_sqlite_vec.binding import Binding
from mcp_memory_testing import HashEmbedder, SimilarityRanker


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement our code runs on a connection opened from now on (the SQL that FTS5 and vec0
    run for their own tables, traced as ``-- …``, and the repeats SQLite traces as a trigger starts,
    left out)."""
    traced: list[str] = []
    connect = Binding.connect

    def traced_connect(self: Binding, database: str, timeout: float) -> Any:
        conn = connect(self, database, timeout)
        conn.set_trace_callback(traced.append)
        return conn

    monkeypatch.setattr(Binding, "connect", traced_connect)
    return traced


def issued(traced: list[str]) -> list[str]:
    ours = [" ".join(s.split()) for s in traced if not s.lstrip().startswith("--")]
    return [s for i, s in enumerate(ours) if i == 0 or s != ours[i - 1]]


def test_one_store_memory_is_one_transaction_of_sixteen_statements(
    tmp_path: Path, statements: list[str]
) -> None:
    engine = MemoryEngine(SqliteVecStore(tmp_path / "memories.db"), HashEmbedder(), SimilarityRanker())
    engine.warm()
    for i in range(5):
        engine.store_memory(f"fact number {i} about the blue build")
    statements.clear()
    engine.store_memory("The team ships the green build on Fridays.")
    sql = issued(statements)
    assert [s.split()[0] for s in sql].count("BEGIN") == 1 and sql[-1] == "COMMIT"
    reads = [s for s in sql if s.startswith("SELECT")]
    assert len(reads) == len(set(reads)), reads  # nothing read twice
    # BEGIN IMMEDIATE and the two busy_timeout pragmas around it; the KNN's filter (the owners' bounds,
    # the namespace id), four to catch the vector cache up with the previous store, one to name its
    # hits, the model check; the candidates' rows; three inserts; COMMIT. The model check and the
    # namespace id were read twice (by the KNN and by the insert): 18 statements.
    assert len(sql) == 16, "\n".join(sql)
    engine.close()
