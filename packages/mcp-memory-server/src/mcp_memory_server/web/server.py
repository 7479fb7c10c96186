"""Run the MCP server and the web UI over streamable HTTP (stdio: :mod:`..mcp.stdio_transport`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
from starlette.responses import JSONResponse

from ..mcp.app import build_app

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import ASGIApp

    from mcp_memory_core.settings import Settings

    from ..runtime.http_security import HttpSecurity
    from ..runtime.service import MemoryService
    from ..runtime.settings import ServerSettings
    from .middleware import LoginThrottle

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
HEALTH_PATH = "/health"


async def _health(request: Request) -> JSONResponse:
    """``GET /health``, for a load balancer or a container's healthcheck: the process answers HTTP.
    No token needed, so it says nothing else (no user, count, version or store) and reads nothing."""
    return JSONResponse({"status": "ok"})


def http_app(
    settings: Settings,
    service: MemoryService,
    security: HttpSecurity,
    *,
    host: str,
    throttle: LoginThrottle | None = None,
) -> ASGIApp:
    """What ``serve --transport http`` serves: the MCP endpoint at ``/mcp``, the web UI at ``/ui`` and
    ``/health`` (no token), every response with the security headers, failed logins throttled (see
    :mod:`.middleware`), and a 503 for a request the database cannot answer now (see
    :class:`~..runtime.http_security.UnavailableGuard`)."""
    from starlette.routing import Route

    from ..mcp.event_stream import EventStreamOnRequest
    from ..mcp.jsonrpc_recovery import AnswerUnreadableRequests
    from ..operations.errors import http_status
    from ..runtime.http_security import UnavailableGuard
    from .middleware import guarded
    from .mount import mount_ui

    app = build_app(settings, service=service, security=security)
    starlette_app = app.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=security.transport,
        json_response=True,  # one JSON body per answer; events for a client that asks (see EventStreamOnRequest)
    )
    for route in starlette_app.router.routes:
        if isinstance(route, Route) and route.path == MCP_PATH:  # after the token check (app middleware)
            checked = AnswerUnreadableRequests(route.app, auth_required=security.verifier is not None)
            route.app = EventStreamOnRequest(checked)
    mount_ui(starlette_app, service, security)  # /ui: the same tokens, checks and Scope (docs/ui.md)
    starlette_app.router.routes.append(Route(HEALTH_PATH, _health, methods=["GET"]))
    # outermost of the app's own: around the token check; the status from the one error table
    starlette_app.add_middleware(UnavailableGuard, status_of=http_status)
    return guarded(starlette_app, throttle)


def event_loop_options() -> dict[str, bool]:
    """anyio's asyncio options for the HTTP server: libuv's loop (uvloop) where it is installed (a
    dependency wherever it has wheels), which takes 0.3-0.4 ms less CPU per MCP call than asyncio's own
    (docs/benchmarks.md, "Twenty clients"); asyncio's loop elsewhere (Windows)."""
    import importlib.util

    return {"use_uvloop": importlib.util.find_spec("uvloop") is not None}


def serve_http(
    settings: ServerSettings, *, host: str = "127.0.0.1", port: int = 8000, auth: bool = True
) -> None:
    """Serve streamable HTTP at http://HOST:PORT/mcp, and the web UI at /ui, until interrupted.

    With ``auth`` (the default) every request needs ``Authorization: Bearer <token>`` of an active
    token (``mcp-memory token create``) and acts as that token's user; without it the server is the
    local user's and may only listen on loopback (the CLI refuses otherwise). Host/Origin checks are
    on for every bind address.

    uvicorn is run with ``log_config=None`` so it does not install its own handlers (one of which
    writes to stdout): its loggers propagate to our stderr handler.
    """
    import uvicorn

    from ..runtime.assembly import build_engine, token_registry
    from ..runtime.http_security import http_security, is_loopback
    from ..runtime.service import MemoryService

    if not auth and not is_loopback(host):
        raise ValueError(f"refusing to serve {host} without authentication")
    tokens = token_registry(settings) if auth else None
    security = http_security(
        host, port, tokens=tokens, public_url=settings.public_url, extra_hosts=settings.allowed_hosts
    )
    service = MemoryService(settings, lambda s: build_engine(s, require_scope=auth), tokens=tokens)
    asgi_app = http_app(settings, service, security, host=host)
    engine = service.engine()  # resolve the plugins now: a bad backend name fails here (cheap: no model)
    if tokens is not None and not tokens.has_active():
        log.warning(
            "No active tokens in %s: every request will be refused (401). Create one with "
            "`mcp-memory token create USER`.",
            tokens.location,
        )
    config = uvicorn.Config(
        asgi_app,
        host=host,
        port=port,
        log_config=None,
        log_level=settings.log_level.lower(),
        access_log=False,
    )
    log.info(
        "mcp-memory serving streamable HTTP at %s/mcp and the web UI at %s/ui/ (store: %s; %s)",
        security.public_url,
        security.public_url,
        engine.store.location,
        f"bearer tokens from {tokens.location}" if tokens is not None else "no auth: loopback only",
    )
    try:
        anyio.run(uvicorn.Server(config).serve, backend_options=event_loop_options())
    finally:
        service.close()
        if tokens is not None:
            tokens.close()
