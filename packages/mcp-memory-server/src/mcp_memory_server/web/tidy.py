"""The web UI's tidy page: what could be tidied among the caller's own memories, each proposal with
its reason, and one button that applies them (a CSRF-checked POST, as every form of the UI). The
page hands the proposals it showed back to the server, which applies only those still proposed as
they were (:mod:`..operations.tidy`; the engine checks them again in the caller's Scope): a form
altered by hand, or memories changed since, apply nothing of it, and the receipt says why.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from ..operations.read import namespaces
from ..operations.tidy import ApplyRequest, apply, propose
from .pages import PageError, Pages

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope

    from .auth import Caller

MAX_FORM_FIELDS = 4  # csrf, namespace, proposals


def _namespace(value: str | None) -> str | None:
    return (value or "").strip() or None


async def tidy_page(ui: Pages, request: Request, caller: Caller) -> Response:
    """GET: the proposals for the chosen namespace (default: the current project and ``user``)."""
    chosen = _namespace(request.query_params.get("namespace"))

    def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
        return {
            "report": propose(engine, scope, chosen),
            "namespaces": sorted(namespaces(engine, scope).counts),
        }

    data = await ui.scoped(caller, do)
    shown = json.dumps([p.model_dump() for p in data["report"].proposals], ensure_ascii=False)
    return ui.render(
        request, caller, "tidy.html", title="Tidy", nav="tidy", chosen=chosen or "", proposals=shown, **data
    )


async def tidy_apply(ui: Pages, request: Request, caller: Caller) -> Response:
    """POST: apply the proposals the page showed; the page then says what was done and skipped."""
    form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)
    chosen = _namespace(str(form.get("namespace", "")))
    try:
        wanted = ApplyRequest(proposals=json.loads(str(form.get("proposals", ""))), namespace=chosen)
    except (ValueError, ValidationError):
        raise PageError(
            400, "This form does not hold proposals of the tidy page: reload it and apply again."
        ) from None
    applied = await ui.scoped(caller, lambda engine, scope: apply(engine, scope, wanted))
    return ui.render(
        request, caller, "tidy.html", title="Tidied", nav="tidy", applied=applied, chosen=chosen or ""
    )
