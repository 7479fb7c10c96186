"""pluggy registration of the ``postgres`` store and of its token table (entry point ``postgres`` in
group ``mcp_memory``).

Importing this module is cheap: psycopg and pgvector are imported when a store or the token table opens.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import StoreSpec, TokenTableSpec, hookimpl
from mcp_memory_core.errors import PluginError

from .schema import EXACT_ROWS
from .store import EF_SEARCH, PostgresStore
from .tokens import PostgresTokenTable

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings


class PostgresSettings(BaseSettings):
    """Settings of the postgres store, from environment variables prefixed ``MCP_MEMORY_``."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_", extra="ignore")

    database_url: str = Field(
        default="",
        description="The PostgreSQL database (libpq URL, e.g. postgresql://mcp@db.internal/memory); "
        "the password may come from PGPASSWORD or ~/.pgpass instead of the URL",
    )
    postgres_pool_size: int = Field(default=10, ge=2, description="Connections each server keeps at most")
    postgres_exact_rows: int = Field(
        default=EXACT_ROWS,
        ge=0,
        description="Up to this many vectors KNN scans exactly and the store keeps no HNSW index; "
        "above, the index answers (built in the background once the store grows past it)",
    )

    postgres_ef_search: int = Field(
        default=EF_SEARCH,
        ge=1,
        le=1000,
        description="HNSW search breadth (hnsw.ef_search): higher finds more of the true nearest, slower",
    )


def _own_settings() -> PostgresSettings:
    own = PostgresSettings()
    if not own.database_url.strip():
        raise PluginError(
            "MCP_MEMORY_STORE=postgres needs MCP_MEMORY_DATABASE_URL, e.g. postgresql://mcp@db.internal/memory."
        )
    return own


def _make(settings: Settings) -> PostgresStore:
    own = _own_settings()
    return PostgresStore(
        own.database_url,
        pool_size=own.postgres_pool_size,
        exact_rows=own.postgres_exact_rows,
        ef_search=own.postgres_ef_search,
    )


@hookimpl
def mcp_memory_stores() -> Iterator[StoreSpec]:
    yield StoreSpec(
        name="postgres",
        factory=_make,
        description="PostgreSQL + pgvector (HNSW) + full-text search: several servers on one database",
        settings_model=PostgresSettings,
    )


def _make_token_table(settings: Settings) -> PostgresTokenTable:
    return PostgresTokenTable(_own_settings().database_url)


@hookimpl
def mcp_memory_token_tables() -> Iterator[TokenTableSpec]:
    yield TokenTableSpec(
        name="postgres",
        factory=_make_token_table,
        description="Bearer tokens in mcp_memory.tokens of the store's database: every server sees them at once",
        settings_model=PostgresSettings,
    )
