"""What a page handler module may use of the UI app without importing the routes that import it:
the error it raises to answer with an error page, and the app's rendering and scoped calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import HTMLResponse

    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope

    from .auth import Caller

T = TypeVar("T")


class PageError(Exception):
    """An error page: ``status`` and one sentence."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Pages(Protocol):
    """The UI app as a page handler sees it (``routes.UiApp``)."""

    def render(
        self, request: Request, caller: Caller | None, template: str, status: int = 200, **context: Any
    ) -> HTMLResponse: ...

    async def scoped(self, caller: Caller, fn: Callable[[MemoryEngine, Scope], T]) -> T: ...
