"""The web UI (``/ui``), served beside ``/mcp`` by ``mcp-memory serve --transport http`` and by
``mcp-memory ui``: the same process, the same bearer tokens, the same Host/Origin checks and the
engine's Scope for every page (docs/ui.md).

Imported only when the HTTP server starts: the stdio path never loads Starlette's templates or Jinja2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.responses import RedirectResponse
from starlette.routing import Mount, Route

from .routes import PREFIX, UiApp

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request

    from ..runtime.http_security import HttpSecurity
    from ..runtime.service import MemoryService


def mount_ui(app: Starlette, service: MemoryService, security: HttpSecurity) -> UiApp:
    """Add the UI to the MCP server's Starlette ``app`` under ``/ui`` (and send ``/`` there)."""
    ui = UiApp(service, security)

    async def home(request: Request) -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    app.router.routes.append(Mount(PREFIX, routes=ui.routes()))
    app.router.routes.append(Route("/", home, methods=["GET"]))
    return ui


__all__ = ["PREFIX", "UiApp", "mount_ui"]
