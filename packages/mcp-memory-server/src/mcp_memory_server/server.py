"""Run the MCP server over stdio or streamable HTTP."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio

from .app import build_app

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings

log = logging.getLogger(__name__)


def serve_stdio(settings: Settings | None = None) -> None:
    """Serve one client over stdin/stdout until it disconnects.

    With ``settings=None`` the settings are read by the warm-up thread after the handshake, so the
    path to the ``initialize`` reply imports neither the core nor numpy.
    """
    app = build_app(settings)
    service = app.memory_service  # type: ignore[attr-defined]
    log.info("mcp-memory serving over stdio")
    try:
        anyio.run(app.run_stdio_async)
    finally:
        service.close()


def serve_http(settings: Settings, *, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve streamable HTTP at http://HOST:PORT/mcp until interrupted.

    uvicorn is run with ``log_config=None`` so it does not install its own handlers (one of which
    writes to stdout): its loggers propagate to our stderr handler.
    """
    import uvicorn

    app = build_app(settings)
    service = app.memory_service  # type: ignore[attr-defined]
    service.engine()  # resolve the plugins now: a bad backend name fails here, in the terminal (cheap: no model)
    starlette_app = app.streamable_http_app(host=host)
    config = uvicorn.Config(
        starlette_app,
        host=host,
        port=port,
        log_config=None,
        log_level=settings.log_level.lower(),
        access_log=False,
    )
    log.info("mcp-memory serving streamable HTTP at http://%s:%d/mcp (db: %s)", host, port, settings.db_path)
    try:
        anyio.run(uvicorn.Server(config).serve)
    finally:
        service.close()
