"""pluggy registration of the ``sqlite-vec`` store (entry point ``sqlite-vec`` in group ``mcp_memory``).

Importing this module is cheap: sqlite-vec and the SQLite binding are imported when a store opens.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import StoreSpec, hookimpl

from .store import SqliteVecStore

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings


class SqliteVecSettings(BaseSettings):
    """Settings of the sqlite-vec store, from environment variables prefixed ``MCP_MEMORY_SQLITE_``."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_SQLITE_", extra="ignore")

    binding: str | None = Field(
        default=None,
        description="Force a SQLite binding: stdlib, sqlean or pysqlite3 (default: the first that can "
        "load sqlite-vec with FTS5)",
    )


def _make(settings: Settings) -> SqliteVecStore:
    own = SqliteVecSettings()
    return SqliteVecStore(settings.db_path, binding=own.binding)


@hookimpl
def mcp_memory_stores() -> Iterator[StoreSpec]:
    yield StoreSpec(
        name="sqlite-vec",
        factory=_make,
        description="SQLite file with sqlite-vec vector search and FTS5 keyword search (WAL, multi-process safe)",
        settings_model=SqliteVecSettings,
    )
