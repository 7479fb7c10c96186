"""The optional capabilities the PostgreSQL store offers, as the engine and the server check them."""

from mcp_memory_core import BulkLoading, InPlaceReembedding, PassageBacklog, VectorReading, WriteLocking
from mcp_memory_postgres import PostgresStore


def test_the_postgres_store_locks_writes_loads_in_bulk_reads_vectors_back_and_reembeds_in_place() -> None:
    for offered in (WriteLocking, BulkLoading, VectorReading, InPlaceReembedding, PassageBacklog):
        assert issubclass(PostgresStore, offered), offered.__name__
