"""End-to-end tests: the real server (sqlite-vec store, MiniLM embedder) through real MCP clients."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_helpers import require_default_plugins


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def default_plugins() -> None:
    require_default_plugins()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memories.db"
