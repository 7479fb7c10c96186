"""pluggy registration of the ``sqlite-vec`` store (entry point ``sqlite-vec`` in group ``mcp_memory``).

Importing this module is cheap: sqlite-vec and the SQLite binding are imported when a store opens.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import StoreSpec, hookimpl

from .binding import BINDINGS
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
    vector_cache: bool = Field(
        default=True,
        description="Keep every vector in process memory and answer KNN with numpy (exact float32 up to "
        "vector_cache_exact_rows, then an int8 pass and above vector_cache_coarse_rows a sign-bit pass, "
        "both reranked exactly from SQLite); off = sqlite-vec vec0 scans",
    )
    vector_cache_max_mb: int = Field(
        default=1024, description="Use vec0 instead of the vector cache when the cache would exceed this"
    )
    vector_cache_exact_rows: int = Field(
        default=50_000,
        description="Up to this many vectors the cache holds float32 rows (1.5 KB per 384-d vector); above "
        "it int8 rows (a quarter of that) whose best candidates are reranked exactly from SQLite",
    )
    vector_cache_coarse_rows: int = Field(
        default=200_000,
        description="Above this many vectors the cache keeps only sign bits (48 B per 384-d vector) and "
        "reranks candidates exactly from SQLite (approximate; much less memory)",
    )

    @field_validator("binding")
    @classmethod
    def _known_binding(cls, value: str | None) -> str | None:
        name = (value or "").strip().lower()
        if name and name not in BINDINGS:
            raise ValueError(f"{value!r} is not a SQLite binding: choose one of {', '.join(BINDINGS)}")
        return name or None


def _make(settings: Settings) -> SqliteVecStore:
    own = SqliteVecSettings()
    return SqliteVecStore(
        settings.db_path,
        create=settings.create_database,
        binding=own.binding,
        vector_cache=own.vector_cache,
        vector_cache_max_mb=own.vector_cache_max_mb,
        coarse_threshold=own.vector_cache_coarse_rows,
        exact_threshold=own.vector_cache_exact_rows,
    )


@hookimpl
def mcp_memory_stores() -> Iterator[StoreSpec]:
    yield StoreSpec(
        name="sqlite-vec",
        factory=_make,
        description="SQLite file with sqlite-vec vector search and FTS5 keyword search (WAL, multi-process safe)",
        settings_model=SqliteVecSettings,
    )
