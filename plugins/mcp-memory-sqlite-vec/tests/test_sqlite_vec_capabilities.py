"""The optional capabilities the SQLite store offers, as the engine and the server check them."""

from mcp_memory_core import (
    BulkLoading,
    Diagnosable,
    InPlaceReembedding,
    PassageBacklog,
    VectorReading,
    Warmable,
    WriteLocking,
)
from mcp_memory_sqlite_vec import SqliteVecStore


def test_the_sqlite_store_warms_reads_vectors_back_reembeds_in_place_and_diagnoses() -> None:
    for offered in (Warmable, VectorReading, InPlaceReembedding, Diagnosable, PassageBacklog):
        assert issubclass(SqliteVecStore, offered), offered.__name__
    capabilities = SqliteVecStore(":memory:").capabilities
    assert capabilities.read_vectors and capabilities.reembed


def test_the_sqlite_store_needs_no_write_lock_and_no_bulk_load() -> None:
    """BEGIN IMMEDIATE already makes write transactions exclude each other."""
    assert not issubclass(SqliteVecStore, WriteLocking)
    assert not issubclass(SqliteVecStore, BulkLoading)
