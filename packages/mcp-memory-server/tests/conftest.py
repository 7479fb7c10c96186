"""Fixtures for the server's unit tests: the app on the fast fakes (hash embedder, in-memory store)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from starlette.applications import Starlette

from mcp_memory_server.runtime.settings import ServerSettings

FAKE_ENV = {
    "MCP_MEMORY_STORE": "memory",
    "MCP_MEMORY_EMBEDDER": "hash",
    "MCP_MEMORY_RANKER": "similarity",
    "MCP_MEMORY_DISABLE_PLUGINS": "",
    "MCP_MEMORY_STRICT_PLUGINS": "false",
    "MCP_MEMORY_LOG_LEVEL": "WARNING",
    "MCP_MEMORY_AUTO_CONTEXT": "false",  # exact metadata in assertions; context has its own test
    "MCP_MEMORY_NAMESPACE": "default",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[dict[str, str]]:
    env = {**FAKE_ENV, "MCP_MEMORY_DB_PATH": str(tmp_path / "memories.db")}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    yield env


@pytest.fixture
def settings(fake_env: dict[str, str]) -> ServerSettings:
    return ServerSettings()


@pytest.fixture
def app(settings: ServerSettings) -> Iterator[Any]:
    from mcp_memory_server.mcp.app import build_app

    server = build_app(settings)
    yield server
    server.memory_service.close()


@pytest.fixture
def ui(settings: ServerSettings) -> Iterator[tuple[Starlette, Any]]:
    """The web UI of a server without auth (the local user), on the fakes: the Starlette app it is
    mounted on, and the UI app."""
    from mcp_memory_server.runtime.assembly import build_engine
    from mcp_memory_server.runtime.http_security import http_security
    from mcp_memory_server.runtime.service import MemoryService
    from mcp_memory_server.web.mount import mount_ui

    service = MemoryService(settings, lambda s: build_engine(s, require_scope=False))
    app = Starlette()
    ui_app = mount_ui(app, service, http_security("127.0.0.1", 8000, tokens=None))
    yield app, ui_app
    service.close()


@pytest.fixture(params=["auto", "legacy"])
async def client(request: pytest.FixtureRequest, app: Any) -> AsyncIterator[Any]:
    """An in-process MCP client, in both protocol eras: 2026 (no handshake) and legacy (initialize)."""
    from mcp import Client

    async with Client(app, mode=request.param) as connected:
        yield connected


@pytest.fixture(scope="session")
def zip_bomb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A ChatGPT export of 2 MB whose conversations.json inflates to 513 MiB (of white space)."""
    import zipfile

    path = tmp_path_factory.mktemp("bomb") / "chatgpt-export.zip"
    block = b" " * (1 << 20)
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open("conversations.json", "w", force_zip64=True) as member,
    ):
        member.write(b"[")
        for _ in range(513):
            member.write(block)
    return path
