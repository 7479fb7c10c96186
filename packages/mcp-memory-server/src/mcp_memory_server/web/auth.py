"""Who is using the web UI, and the checks every UI request passes before a page is built.

The UI has no rules of its own: it finds the request's bearer token and hands it to the same
:meth:`MemoryService.call_scoped` the MCP tools use, so the engine's Scope decides what a page
shows. Where the token comes from:

- an ``Authorization: Bearer`` header (scripts, tests): verified like an MCP request;
- a login: the token typed on ``/ui/login`` is verified once, kept in this process's memory under a
  random session id, and the browser only holds that id in an ``HttpOnly; SameSite=Strict`` session
  cookie (dropped when the browser closes). The token is verified again on every request, so a
  revoked token ends its sessions at once. The token never reaches a URL, localStorage or a page;
- no token registry (``mcp-memory ui``, ``serve --no-auth``): the local user, loopback only.

Every request passes the MCP transport's Host/Origin checks (DNS rebinding), and every form that
changes something carries a CSRF token (per session; per process without auth), checked here.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request
from starlette.responses import Response

if TYPE_CHECKING:
    from ..runtime.http_security import HttpSecurity

SESSION_COOKIE = "mcp_memory_ui"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_IDLE_SECONDS = 8 * 3600  # a browser left alone for a working day logs in again
SESSION_MAX_SECONDS = 24 * 3600
MAX_SESSIONS = 10_000


@dataclass
class UiSession:
    token: str
    csrf: str
    created: float
    seen: float


@dataclass
class SessionStore:
    """Logged-in browsers of this process: session id → token. Lost on restart (log in again)."""

    clock: Callable[[], float] = time.monotonic
    _sessions: dict[str, UiSession] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def create(self, token: str) -> tuple[str, UiSession]:
        now = self.clock()
        session_id = secrets.token_urlsafe(32)
        session = UiSession(token=token, csrf=secrets.token_urlsafe(32), created=now, seen=now)
        with self._lock:
            self._expire(now)
            if len(self._sessions) >= MAX_SESSIONS:  # the oldest goes: memory stays bounded
                del self._sessions[min(self._sessions, key=lambda k: self._sessions[k].seen)]
            self._sessions[session_id] = session
        return session_id, session

    def get(self, session_id: str | None) -> UiSession | None:
        if not session_id:
            return None
        now = self.clock()
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            if now - session.seen > SESSION_IDLE_SECONDS or now - session.created > SESSION_MAX_SECONDS:
                del self._sessions[session_id]
                return None
            session.seen = now
            return session

    def drop(self, session_id: str | None) -> None:
        with self._lock:
            self._sessions.pop(session_id or "", None)

    def drop_token(self, token: str) -> None:
        """End every session of a token (it was found revoked)."""
        with self._lock:
            for key in [k for k, s in self._sessions.items() if s.token == token]:
                del self._sessions[key]

    def _expire(self, now: float) -> None:
        for key in [
            k
            for k, s in self._sessions.items()
            if now - s.seen > SESSION_IDLE_SECONDS or now - s.created > SESSION_MAX_SECONDS
        ]:
            del self._sessions[key]


@dataclass(frozen=True)
class Caller:
    """One UI request's credentials: ``access`` is what the MCP tools get from the SDK's auth
    context (None without a token registry); ``csrf`` the token its forms must carry (None: a
    bearer header, which a browser never sends on its own, needs none)."""

    access: AccessToken | None
    user: str
    csrf: str | None
    session_id: str | None = None


class UiAuth:
    """Authentication and request checks for the UI, from the server's :class:`HttpSecurity`."""

    def __init__(self, security: HttpSecurity, local_user: Callable[[], str]) -> None:
        self.security = security
        self.sessions = SessionStore()
        self._local_user = local_user
        self._transport = TransportSecurityMiddleware(security.transport)
        self._process_csrf = secrets.token_urlsafe(32)  # no-auth mode: forms of this process only
        self.secure_cookie = security.public_url.startswith("https://")

    @property
    def required(self) -> bool:
        return self.security.verifier is not None

    async def check_request(self, request: Request) -> Response | None:
        """The MCP transport's own Host and Origin checks (the same allow-lists as ``/mcp``)."""
        return await self._transport.validate_request(request, is_post=False)

    async def verify(self, token: str) -> AccessToken | None:
        verifier = self.security.verifier
        if verifier is None or not token or len(token) > 512:
            return None
        return await verifier.verify_token(token)

    async def caller(self, request: Request) -> Caller | None:
        """The request's caller, or None when it must log in (or its bearer token is not valid)."""
        if not self.required:
            return Caller(access=None, user=self._local_user(), csrf=self._process_csrf)
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            access = await self.verify(header[7:].strip())
            return None if access is None else Caller(access=access, user=access.client_id, csrf=None)
        session_id = request.cookies.get(SESSION_COOKIE)
        session = self.sessions.get(session_id)
        if session is None:
            return None
        access = await self.verify(session.token)
        if access is None:  # revoked since the login: the session ends with it
            self.sessions.drop_token(session.token)
            return None
        return Caller(access=access, user=access.client_id, csrf=session.csrf, session_id=session_id)

    @staticmethod
    def csrf_ok(caller: Caller, submitted: str | None) -> bool:
        if caller.csrf is None:
            return True
        return submitted is not None and hmac.compare_digest(caller.csrf.encode(), submitted.encode())

    def set_session_cookie(self, response: Response, session_id: str) -> None:
        response.set_cookie(
            SESSION_COOKIE,
            session_id,
            path="/ui",
            httponly=True,
            samesite="strict",
            secure=self.secure_cookie,
        )

    def clear_session_cookie(self, response: Response) -> None:
        response.delete_cookie(
            SESSION_COOKIE, path="/ui", httponly=True, samesite="strict", secure=self.secure_cookie
        )
