"""Settings, read from environment variables prefixed ``MCP_MEMORY_`` (all optional)."""

from __future__ import annotations

from pathlib import Path

import platformdirs
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

APP_NAME = "mcp-memory"


def default_db_path() -> Path:
    """``<user data dir>/mcp-memory/memories.db`` — absolute, per user, as platformdirs defines it
    (``~/.local/share/mcp-memory/memories.db`` on Linux)."""
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "memories.db"


class Settings(BaseSettings):
    """Everything the server and the engine read from the environment."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_", extra="ignore")

    db_path: Path = Field(default_factory=default_db_path, description="SQLite database file")
    store: str = Field(default="sqlite-vec", description="Store plugin name")
    embedder: str = Field(default="minilm", description="Embedder plugin name")
    ranker: str = Field(default="hybrid", description="Ranker plugin name (hybrid: chosen on LoCoMo dev)")
    model: str = Field(
        default="all-MiniLM-L6-v2", description="Model for embedders that take one (sentence-transformers)"
    )
    disable_plugins: str = Field(
        default="", description="Comma-separated plugin entry-point names not to load, or * for all"
    )
    strict_plugins: bool = Field(default=False, description="Fail on a plugin that cannot be loaded")
    log_level: str = Field(default="INFO", description="Log level (logs go to stderr)")

    @field_validator("db_path")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve() if str(value) != ":memory:" else value

    @field_validator("store", "embedder", "ranker")
    @classmethod
    def _lower(cls, value: str) -> str:
        return value.strip().lower()
