"""mcp-memory's team store: PostgreSQL with pgvector, for several servers on one database.

Importing this package is cheap: psycopg and pgvector are imported when a store opens.
"""

from .schema import SCHEMA_VERSION
from .store import PostgresStore

__all__ = ["SCHEMA_VERSION", "PostgresStore"]
