"""End-to-end tests: the real server (sqlite-vec store, MiniLM embedder) through real MCP clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_helpers import ctrl_c_reaches_children, require_default_plugins


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def default_plugins() -> None:
    require_default_plugins()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memories.db"


@pytest.fixture
def ctrl_c_reaches_servers() -> Iterator[None]:
    """For the tests that press Ctrl-C: see ``ctrl_c_reaches_children``."""
    with ctrl_c_reaches_children():
        yield
