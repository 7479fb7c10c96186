"""The web UI's pages: server-rendered HTML (Jinja2) over the engine, mounted at ``/ui``.

Every page that touches memories runs ``fn(engine, scope)`` through
:meth:`MemoryService.call_scoped` with the request's access token, exactly as the MCP tools do, so
the engine's Scope alone decides what is shown and what may change; a memory outside the scope is
the same 404 page as a missing id. Writes are POST forms answered with a redirect (303), so the
pages work without JavaScript; ``static/ui.js`` only adds conveniences (import progress without
reloads, a confirmation before delete). The security headers (CSP, no framing, no-store …) are
added to every response of the server by :mod:`.middleware`, these pages' included.
"""

from __future__ import annotations

import io
import json
import logging
import os
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

import anyio.to_thread
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive

from ..operations.filters import FilterRequest, day_after
from ..operations.read import GetRequest, ListRequest, SearchRequest, get, list_page, namespaces, tags
from ..operations.read import search as search_memories
from ..operations.read import stats as counted_stats
from ..operations.transfer import ExportRequest, PreparedImport, export_memories_to, prepare_import
from ..operations.vocabulary import MEMORY_TYPES, PRIVACY
from ..operations.write import StoreRequest, UpdateRequest, delete_many, store, update
from .auth import CSRF_FIELD, CSRF_HEADER, Caller, UiAuth
from .imports import FORMATS, ImportJobs, import_request
from .pages import PageError
from .tidy import tidy_apply, tidy_page

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope

    from ..runtime.http_security import HttpSecurity
    from ..runtime.service import MemoryService

log = logging.getLogger(__name__)

T = TypeVar("T")
PREFIX = "/ui"
PAGE_SIZE = 50
SEARCH_LIMIT = 20
MAX_UPLOAD_MB = 256
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
MAX_LOGIN_BYTES = 64 * 1024
STATIC_DIR = Path(__file__).parent / "static"
# How the list page sorts: the engine's orders, as the form names them
ORDERS = {"newest": "Newest first", "oldest": "Oldest first", "importance": "Most important first"}
# What a redirect may announce on the next page: fixed texts, never text taken from the URL.
NOTICES = {
    "updated": "Saved: a new version of the memory was created.",
    "updated_redacted": "Saved: a new version of the memory was created, each secret it held replaced by a "
    "placeholder ([REDACTED:<kind>]; MCP_MEMORY_SECRETS=redact).",
    "pinned": "Pinned: this memory never expires.",
    "unpinned": "Unpinned.",
    "deleted": "Deleted. It no longer appears in search or lists; you can restore it.",
    "restored": "Restored: the memory is back in search and lists.",
    "logged_out": "You are logged out.",
}

Handler = Callable[[Request, Caller], Awaitable[Response]]


def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("mcp_memory_server.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["pretty_json"] = lambda value: json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    # the words the forms offer, the same on every page
    env.globals.update(types=MEMORY_TYPES, privacy=PRIVACY, formats=FORMATS, orders=ORDERS)
    return env


def _when(value: str | None) -> str:
    """An ISO time as ``2026-01-31 09:00 UTC`` (the page's time element keeps the exact value)."""
    if not value:
        return ""
    try:
        return datetime.fromisoformat(value).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return value


class UiApp:
    """The routes of the UI and what they share: the service, the auth checks, the templates."""

    def __init__(self, service: MemoryService, security: HttpSecurity) -> None:
        self.service = service
        self.auth = UiAuth(security, local_user=lambda: service.engine().default_scope.principal)
        self.jobs = ImportJobs(service)
        self.env = _templates()

    # -- plumbing --------------------------------------------------------------------------------
    def routes(self) -> list[BaseRoute]:
        page = self.page
        return [
            Route("/", page(self.browse), methods=["GET"]),
            Route("/login", self.login, methods=["GET", "POST"]),
            Route("/logout", page(self.logout, write=True), methods=["POST"]),
            Route("/search", page(self.search), methods=["GET"]),
            Route("/new", page(self.new_form), methods=["GET"]),
            Route("/new", page(self.create, write=True), methods=["POST"]),
            Route("/delete", page(self.delete_selected, write=True, fields=PAGE_SIZE + 1), methods=["POST"]),
            Route("/memories/{memory_id}", page(self.memory), methods=["GET"]),
            Route("/memories/{memory_id}/edit", page(self.edit, write=True), methods=["POST"]),
            Route("/memories/{memory_id}/pin", page(self.pin, write=True), methods=["POST"]),
            Route("/memories/{memory_id}/delete", page(self.delete, write=True), methods=["POST"]),
            Route("/memories/{memory_id}/restore", page(self.restore, write=True), methods=["POST"]),
            Route("/import", page(self.import_form), methods=["GET"]),
            Route("/import", page(self.import_upload, write=True), methods=["POST"]),
            Route("/import/{job_id}", page(self.import_job), methods=["GET"]),
            Route("/import/{job_id}/status", page(self.import_status), methods=["GET"]),
            Route("/export", page(self.export_form), methods=["GET"]),
            Route("/export/download", page(self.export_download), methods=["GET"]),
            Route("/tags", page(self.tags), methods=["GET"]),
            Route("/stats", page(self.stats), methods=["GET"]),
            Route("/tidy", page(partial(tidy_page, self)), methods=["GET"]),
            Route("/tidy", page(partial(tidy_apply, self), write=True), methods=["POST"]),
            Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
        ]

    def page(
        self, handler: Handler, *, write: bool = False, fields: int = 20
    ) -> Callable[[Request], Awaitable[Response]]:
        """Host/Origin checks, then the caller (or the login page), the CSRF token of a write (a form
        of at most ``fields`` fields), then ``handler``; a PageError or an engine refusal becomes an
        error page with its status."""

        async def endpoint(request: Request) -> Response:
            refused = await self.auth.check_request(request)
            if refused is not None:
                return refused
            caller = await self.auth.caller(request)
            if caller is None:
                return self._unauthenticated(request)
            if write:
                too_large = f"The upload is larger than {MAX_UPLOAD_MB} MB."
                if int(request.headers.get("content-length") or 0) > MAX_UPLOAD_BYTES:
                    return self.error(request, caller, 413, too_large)
                # counted as it arrives, whatever the headers say (a chunked body has no length)
                request = Request(request.scope, _capped(request.receive, MAX_UPLOAD_BYTES))
                # parsed once here (Starlette keeps it for the handler); never a token from the URL
                try:
                    form = await request.form(max_files=1 if _is_multipart(request) else 0, max_fields=fields)
                except BodyTooLarge:
                    return self.error(request, caller, 413, too_large)
                submitted = request.headers.get(CSRF_HEADER) or str(form.get(CSRF_FIELD, ""))
                if not self.auth.csrf_ok(caller, submitted):
                    return self.error(
                        request, caller, 403, "This form has expired: reload the page and try again."
                    )
            try:
                response = await handler(request, caller)
            except PageError as exc:
                return self.error(request, caller, exc.status, exc.message)
            return response

        return endpoint

    def _unauthenticated(self, request: Request) -> Response:
        wants_page = request.method == "GET" and "application/json" not in request.headers.get("accept", "")
        if wants_page and "authorization" not in request.headers:
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"{PREFIX}/login?{urlencode({'next': target})}", status_code=303)
        return JSONResponse(
            {"error": "Not authenticated: log in, or send Authorization: Bearer <token>."},
            status_code=401,
            headers={"WWW-Authenticate": 'Bearer realm="mcp-memory"'},
        )

    def render(
        self, request: Request, caller: Caller | None, template: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        notice = NOTICES.get(request.query_params.get("done", ""))
        html = self.env.get_template(template).render(
            base=PREFIX,
            me=caller,
            can_logout=caller is not None and caller.session_id is not None,
            notice=notice,
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def error(self, request: Request, caller: Caller | None, status: int, message: str) -> HTMLResponse:
        titles = {
            400: "Not possible",
            403: "Not allowed",
            404: "Not found",
            409: "Not possible",
            413: "Too large",
        }
        return self.render(
            request, caller, "error.html", status=status, title=titles.get(status, "Error"), message=message
        )

    async def scoped(self, caller: Caller, fn: Callable[[MemoryEngine, Scope], T]) -> T:
        """``fn(engine, scope)`` off the event loop, the scope built from the caller's token by the
        service, as for every MCP tool call; engine refusals become error pages."""
        from ..operations.errors import rule_for

        try:
            return await self.service.call_scoped(fn, caller.access)
        except Exception as exc:
            rule = rule_for(exc)
            if rule is None:
                raise
            raise PageError(rule.http_status, rule.mcp_message(exc)) from exc

    # -- login -----------------------------------------------------------------------------------
    async def login(self, request: Request) -> Response:
        refused = await self.auth.check_request(request)
        if refused is not None:
            return refused
        target = _safe_next(request.query_params.get("next"))
        if not self.auth.required:
            return RedirectResponse(target, status_code=303)
        if request.method == "GET":
            return self.render(request, None, "login.html", title="Log in", next=target, failed=False)
        request = Request(request.scope, _capped(request.receive, MAX_LOGIN_BYTES))
        try:
            form = await request.form(max_files=0)
        except BodyTooLarge:  # anyone may post here: a token and a page address are small
            return self.error(request, None, 413, "A login form is a token and a page address, not more.")
        target = _safe_next(str(form.get("next", "")) or target)
        token = str(form.get("token", "")).strip()
        access = await self.auth.verify(token)
        if access is None:
            log.info("UI login refused: not an active token")
            return self.render(
                request, None, "login.html", status=401, title="Log in", next=target, failed=True
            )
        session_id, _ = self.auth.sessions.create(token)
        response = RedirectResponse(target, status_code=303)
        self.auth.set_session_cookie(response, session_id)
        return response

    async def logout(self, request: Request, caller: Caller) -> Response:
        self.auth.sessions.drop(caller.session_id)
        response = RedirectResponse(f"{PREFIX}/login?done=logged_out", status_code=303)
        self.auth.clear_session_cookie(response)
        return response

    # -- browse and search -----------------------------------------------------------------------
    async def browse(self, request: Request, caller: Caller) -> Response:
        query = request.query_params
        chosen = _filter_values(query)
        paging = Paging.of(query)
        order = query.get("sort", "").strip() or "newest"

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            request = ListRequest(limit=PAGE_SIZE, cursor=paging.cursor, order=order, **_read(chosen))
            return {**list_page(engine, scope, request).full(), **_form_choices(engine, scope)}

        data = await self.scoped(caller, do)
        return self.render(
            request,
            caller,
            "browse.html",
            title="Memories",
            nav="browse",
            chosen=chosen,
            sort=order,
            page_number=paging.number,
            pages=max(paging.number, -(-data["total"] // PAGE_SIZE)),
            next_url=paging.next_url(query, data["next_cursor"]),
            prev_url=paging.prev_url(query),
            **data,
        )

    async def search(self, request: Request, caller: Caller) -> Response:
        query = request.query_params
        text = query.get("q", "").strip()
        explain = query.get("explain") == "1"
        chosen = _filter_values(query)
        data: dict[str, Any] = {"hits": None, "namespaces": [], "home": []}

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            found: dict[str, Any] = {**_form_choices(engine, scope), "hits": None}
            if not text:
                return found
            results = search_memories(
                engine, scope, SearchRequest(query=text, limit=SEARCH_LIMIT, **_read(chosen))
            )
            found["hits"] = [
                {
                    "memory": hit.memory.full(),
                    "score": hit.score,
                    "similarity": hit.similarity,
                    "matched_id": hit.matched_id,
                    "parts": sorted(hit.parts.items()),
                }
                for hit in results.hits
            ]
            found["below_floor"] = results.held_back
            found["floor"] = results.floor
            found["warnings"] = results.warnings
            return found

        data = await self.scoped(caller, do)
        return self.render(
            request,
            caller,
            "search.html",
            title=f"Search: {text}" if text else "Search",
            nav="search",
            q=text,
            explain=explain,
            chosen=chosen,
            **data,
        )

    # -- one memory ------------------------------------------------------------------------------
    async def memory(self, request: Request, caller: Caller) -> Response:
        memory_id = request.path_params["memory_id"]

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            shown = get(engine, scope, GetRequest(id=memory_id, history=True))
            return {**shown.full(), "can_change": shown.can_change}

        data = await self.scoped(caller, do)
        return self.render(request, caller, "memory.html", title="Memory", nav="browse", m=data)

    async def new_form(self, request: Request, caller: Caller) -> Response:
        choices = await self.scoped(caller, _write_choices)
        return self.render(request, caller, "new.html", title="New memory", nav="new", **choices)

    async def create(self, request: Request, caller: Caller) -> Response:
        """Store the form's memory and show its receipt (with the near-duplicates the store found)
        beside the form again, ready for the next one."""
        new = _new(await request.form(max_files=0))

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            return {"receipt": store(engine, scope, new).full(), **_write_choices(engine, scope)}

        data = await self.scoped(caller, do)
        return self.render(request, caller, "new.html", title="Stored", nav="new", **data)

    async def edit(self, request: Request, caller: Caller) -> Response:
        change = _change(request.path_params["memory_id"], await request.form(max_files=0))

        def do(engine: MemoryEngine, scope: Scope) -> tuple[str, bool]:
            receipt = update(engine, scope, change)
            return receipt.id, bool(receipt.redacted)

        new_id, redacted = await self.scoped(caller, do)
        return _back(new_id, "updated_redacted" if redacted else "updated")

    async def pin(self, request: Request, caller: Caller) -> Response:
        memory_id = request.path_params["memory_id"]
        form = await request.form(max_files=0)
        pinned = str(form.get("pinned", "true")) != "false"
        await self.scoped(caller, lambda engine, scope: engine.pin_memory(memory_id, pinned, scope=scope))
        return _back(memory_id, "pinned" if pinned else "unpinned")

    async def delete(self, request: Request, caller: Caller) -> Response:
        memory_id = request.path_params["memory_id"]
        await self.scoped(caller, lambda engine, scope: engine.delete_memory(memory_id, scope=scope))
        return _back(memory_id, "deleted")

    async def delete_selected(self, request: Request, caller: Caller) -> Response:
        """Delete the memories ticked on a list page (one POST); the page says how many were deleted
        and which could not be, and why."""
        ids = [str(v).strip() for v in (await request.form(max_files=0)).getlist("id") if str(v).strip()]
        if not ids:
            raise PageError(400, "Select the memories to delete first.")
        receipt = await self.scoped(caller, lambda engine, scope: delete_many(engine, scope, ids))
        return self.render(
            request, caller, "deleted.html", title="Deleted", nav="browse", r=receipt.model_dump()
        )

    async def restore(self, request: Request, caller: Caller) -> Response:
        memory_id = request.path_params["memory_id"]
        await self.scoped(caller, lambda engine, scope: engine.restore_memory(memory_id, scope=scope))
        return _back(memory_id, "restored")

    # -- import and export -----------------------------------------------------------------------
    async def import_form(self, request: Request, caller: Caller) -> Response:
        default = await self.scoped(caller, lambda engine, scope: scope.default_namespace)
        return self.render(request, caller, "import.html", title="Import", nav="import", default=default)

    async def import_upload(self, request: Request, caller: Caller) -> Response:
        form = await request.form()  # parsed (and its CSRF token checked) by page()
        upload = form.get("file")
        if not isinstance(upload, UploadFile) or not upload.filename:
            raise PageError(400, "Choose a file to import.")
        filename = Path(upload.filename).name
        suffix = "".join(Path(filename).suffixes[-1:])[:10]
        handle, name = tempfile.mkstemp(prefix="mcp-memory-ui-import-", suffix=suffix)
        path = Path(name)
        try:
            with os.fdopen(handle, "wb") as out:
                while chunk := await upload.read(1 << 20):
                    await anyio.to_thread.run_sync(out.write, chunk)

            def prepare(engine: MemoryEngine, scope: Scope) -> PreparedImport:
                return prepare_import(engine, scope, import_request(path, form))

            try:
                prepared = await self.scoped(caller, prepare)
            except PageError as exc:  # a refusal names the upload, not the server's temporary file
                raise PageError(exc.status, exc.message.replace(str(path), filename)) from exc
        except OSError as exc:
            raise PageError(400, f"Cannot read the upload: {exc.strerror or exc}") from exc
        finally:
            await upload.close()
            with suppress(OSError):
                path.unlink()
        job = self.jobs.start(prepared, filename)
        return RedirectResponse(f"{PREFIX}/import/{job.id}", status_code=303)

    async def _job(self, request: Request, caller: Caller) -> dict[str, Any]:
        principal = await self.scoped(caller, lambda engine, scope: scope.principal)
        job = self.jobs.get(request.path_params["job_id"], principal)
        if job is None:
            raise PageError(404, "No such import.")
        return job.status()

    async def import_job(self, request: Request, caller: Caller) -> Response:
        status = await self._job(request, caller)
        return self.render(request, caller, "import_job.html", title="Import", nav="import", job=status)

    async def import_status(self, request: Request, caller: Caller) -> Response:
        try:
            status = await self._job(request, caller)
        except PageError as exc:
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        return JSONResponse(status)

    async def export_form(self, request: Request, caller: Caller) -> Response:
        def do(engine: MemoryEngine, scope: Scope) -> list[str]:
            return sorted(namespaces(engine, scope).counts)

        names = await self.scoped(caller, do)
        return self.render(request, caller, "export.html", title="Export", nav="export", namespaces=names)

    async def export_download(self, request: Request, caller: Caller) -> Response:
        namespace = request.query_params.get("namespace", "").strip() or None
        vectors = request.query_params.get("vectors") == "1"

        export = ExportRequest(namespace=namespace, all_namespaces=namespace is None, vectors=vectors)

        def do(engine: MemoryEngine, scope: Scope) -> tuple[str, str]:
            buffer = io.StringIO()
            export_memories_to(engine, scope, export, buffer)
            return buffer.getvalue(), scope.principal

        text, principal = await self.scoped(caller, do)
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        name = f"mcp-memory-{principal}-{namespace or 'all'}-{stamp}.jsonl"
        return Response(
            text.encode("utf-8"),
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    # -- tags and stats --------------------------------------------------------------------------
    async def tags(self, request: Request, caller: Caller) -> Response:
        """Every tag of the memories the caller may read in a namespace (default: all of them), with
        its count, each linking to the list filtered by it."""
        chosen = request.query_params.get("namespace", "").strip() or "*"

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            return {"counted": tags(engine, scope, chosen), **_form_choices(engine, scope)}

        data = await self.scoped(caller, do)
        return self.render(request, caller, "tags.html", title="Tags", nav="tags", chosen=chosen, **data)

    # -- stats -----------------------------------------------------------------------------------
    async def stats(self, request: Request, caller: Caller) -> Response:
        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            data = counted_stats(engine, scope)
            data["store_bytes"] = _store_bytes(str(data.get("store", "")))
            return data

        data = await self.scoped(caller, do)
        return self.render(request, caller, "stats.html", title="Statistics", nav="stats", s=data)


# -- helpers ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Paging:
    """Where a list page is: its ``cursor`` (None: the first page) and the ``trail`` of the cursors
    of the pages before it, carried in the URL, so that the store's forward-only cursors give page
    numbers and a previous page (page N has N - 1 pages before it: the first and the trail)."""

    cursor: str | None
    trail: tuple[str, ...]

    @classmethod
    def of(cls, query: Any) -> Paging:
        cursor = query.get("cursor") or None
        trail = tuple(c for c in str(query.get("trail", "")).split(",") if c) if cursor else ()
        return cls(cursor, trail)

    @property
    def number(self) -> int:
        return 1 if self.cursor is None else len(self.trail) + 2

    def next_url(self, query: Any, next_cursor: str | None) -> str | None:
        if not next_cursor:
            return None
        trail = (*self.trail, self.cursor) if self.cursor else ()
        return _list_url(query, next_cursor, trail)

    def prev_url(self, query: Any) -> str | None:
        if self.cursor is None:
            return None
        return _list_url(query, self.trail[-1] if self.trail else None, self.trail[:-1])


def _list_url(query: Any, cursor: str | None, trail: tuple[str, ...]) -> str:
    paging = {"cursor": cursor, "trail": ",".join(trail)} if cursor else {}
    return f"{PREFIX}/?" + urlencode({**_query_dict(query), **{k: v for k, v in paging.items() if v}})


class BodyTooLarge(Exception):
    """A request body went past its cap while it was being read."""


def _capped(receive: Receive, limit: int) -> Receive:
    """``receive`` that raises BodyTooLarge once the body it has passed on exceeds ``limit`` bytes."""
    received = 0

    async def capped() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise BodyTooLarge
        return message

    return capped


def _is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").startswith("multipart/form-data")


def _back(memory_id: str, notice: str) -> RedirectResponse:
    return RedirectResponse(f"{PREFIX}/memories/{memory_id}?done={notice}", status_code=303)


def _safe_next(value: str | None) -> str:
    """Where to go after logging in: a path of the UI only (never another site)."""
    if value and value.startswith(f"{PREFIX}/") and not value.startswith("//") and "\\" not in value:
        return value
    return f"{PREFIX}/"


def _query_dict(query: Any) -> dict[str, str]:
    return {k: v for k, v in query.items() if k not in ("cursor", "trail", "done") and v}


def _filter_values(query: Any) -> dict[str, str]:
    """The filter fields of a browse or search form, as typed (shown back in the form)."""
    return {
        name: str(query.get(name, "")).strip()
        for name in ("namespace", "type", "tags", "created_after", "created_before", "pinned")
    }


def _read(chosen: dict[str, str]) -> dict[str, Any]:
    """What a browse or search form asks to read: its filters, and its namespace (empty: the home
    namespaces, the project and ``user``)."""
    return {"filters": _filters(chosen), "namespace": chosen["namespace"] or None}


def _form_choices(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
    """What the filter form offers: the namespaces the scope may read, and its home ones (the default)."""
    listed = namespaces(engine, scope)
    return {"namespaces": sorted(listed.counts), "home": listed.home}


def _filters(chosen: dict[str, str]) -> FilterRequest:
    """The filters of the form: a date range is whole days (``to`` includes its day)."""
    before = chosen["created_before"]
    return FilterRequest(
        types=[chosen["type"]] if chosen["type"] else None,
        tags=[t.strip() for t in chosen["tags"].split(",") if t.strip()] or None,
        created_after=chosen["created_after"] or None,
        created_before=day_after(before) if before else None,
        pinned={"yes": True, "no": False}.get(chosen["pinned"]),
    )


def _importance(form: Any) -> float | None:
    """The form's importance: empty is None (the default, or the old value)."""
    raw = str(form.get("importance", "")).strip()
    try:
        return float(raw) if raw else None
    except ValueError:
        raise PageError(400, f"importance must be a number from 0 to 1; got {raw!r}.") from None


def _tags(form: Any) -> list[str]:
    return [t.strip() for t in str(form.get("tags", "")).split(",") if t.strip()]


def _chosen(form: Any, name: str) -> str | None:
    """A select or text field; empty is None (the default, or the old value)."""
    return str(form.get(name, "")).strip() or None


def _change(memory_id: str, form: Any) -> UpdateRequest:
    """The edit form as an update: tags comma-separated; an empty type, privacy or importance keeps
    the old value."""
    return UpdateRequest(
        id=memory_id,
        content=str(form.get("content", "")),
        type=_chosen(form, "type"),
        tags=_tags(form),
        importance=_importance(form),
        privacy_scope=_chosen(form, "privacy_scope"),
    )


def _new(form: Any) -> StoreRequest:
    """The new-memory form as a store: an empty field is the engine's default (the namespace: the
    scope's own)."""
    return StoreRequest(
        content=str(form.get("content", "")),
        type=_chosen(form, "type"),
        tags=_tags(form) or None,
        importance=_importance(form),
        privacy_scope=_chosen(form, "privacy_scope"),
        namespace=_chosen(form, "namespace"),
    )


def _write_choices(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
    """Where the new-memory form offers to store: the scope's default namespace first, then the
    others it may write that hold memories (any other name may be typed; the Scope decides)."""
    offered = scope.writable if scope.writable is not None else namespaces(engine, scope).counts
    others = sorted(n for n in offered if n != scope.default_namespace)
    return {"default": scope.default_namespace, "writable": others}


def _store_bytes(location: str) -> int | None:
    """The size of a file store (with its WAL), or None for a store that is not one file."""
    path = Path(location)
    try:
        if not path.is_file():
            return None
        return sum(p.stat().st_size for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())
    except OSError:
        return None
