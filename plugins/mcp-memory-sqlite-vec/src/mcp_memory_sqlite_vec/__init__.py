"""mcp-memory's default store: SQLite + sqlite-vec + FTS5 in one file.

Importing this package is cheap: neither sqlite-vec nor the SQLite binding is imported until a store
is opened.
"""

from .schema import SCHEMA_VERSION
from .store import SqliteVecStore

__all__ = ["SCHEMA_VERSION", "SqliteVecStore"]
