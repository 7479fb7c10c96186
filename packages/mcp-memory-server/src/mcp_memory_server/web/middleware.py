"""What wraps every HTTP response of the server (``/mcp``, ``/ui``, static files, the framework's own
404s and 405s): the security headers, and the throttle on failed logins.

Both are plain ASGI middleware around the whole app, so no route, mount or SDK endpoint is left out.

The throttle counts, per client address, the requests that presented a credential (an
``Authorization`` header, or the token typed on the UI's login form) and were answered 401. After
:data:`MAX_FAILURES` of them within :data:`WINDOW_SECONDS`, such requests from that address are
answered 429 with ``Retry-After`` until the oldest failure is a minute old, before any token is
looked at: a blocked client learns nothing, not even from a good token. Requests without a
credential (a logged-in browser's session cookie, a probe without a token) are never throttled, and
a success neither counts nor resets the count. The state lives in this process (bounded: the
:data:`MAX_CLIENTS` most recent failing addresses). The address is the connection's peer, or the
``X-Forwarded-For`` client of a proxy uvicorn trusts (``--forwarded-allow-ips``; 127.0.0.1 by default).
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: under no-referrer Chromium sends "Origin: null" with a form's POST,
    # which the Origin check (rightly) refuses
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_RAW_HEADERS = [(name.lower().encode(), value.encode()) for name, value in SECURITY_HEADERS.items()]

MAX_FAILURES = 10
WINDOW_SECONDS = 60.0
MAX_CLIENTS = 10_000
LOGIN_PATH = "/ui/login"


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every HTTP response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {bytes(name).lower() for name, _ in headers}
                message["headers"] = headers + [h for h in _RAW_HEADERS if h[0] not in present]
            await send(message)

        await self.app(scope, receive, send_secured)


class LoginThrottle:
    """Failed logins per client address: the times of the last ``limit`` failures of each of the
    ``max_clients`` addresses that failed most recently (the least recent is forgotten first)."""

    def __init__(
        self,
        *,
        limit: int = MAX_FAILURES,
        window: float = WINDOW_SECONDS,
        max_clients: int = MAX_CLIENTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self.max_clients = max_clients
        self.clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._failures)

    def retry_after(self, client: str) -> float | None:
        """Seconds until ``client`` may try again, or None when it may try now."""
        times = self._failures.get(client)
        if times is None or len(times) < self.limit:
            return None
        wait = times[0] + self.window - self.clock()
        return wait if wait > 0 else None

    def failed(self, client: str) -> None:
        times = self._failures.pop(client, None) or deque(maxlen=self.limit)
        times.append(self.clock())
        self._failures[client] = times  # now the most recent
        while len(self._failures) > self.max_clients:
            self._failures.popitem(last=False)


class ThrottleFailedLogins:
    """Answers 429 to a client address with too many recent failed logins (see the module's text)."""

    def __init__(self, app: ASGIApp, throttle: LoginThrottle) -> None:
        self.app = app
        self.throttle = throttle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _presents_credential(scope):
            await self.app(scope, receive, send)
            return
        client = scope["client"][0] if scope.get("client") else "unknown"
        wait = self.throttle.retry_after(client)
        if wait is not None:
            await _too_many(scope, send, math.ceil(wait))
            return

        async def send_counted(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                self.throttle.failed(client)
            await send(message)

        await self.app(scope, receive, send_counted)


def _presents_credential(scope: Scope) -> bool:
    if scope["method"] == "POST" and scope["path"] == LOGIN_PATH:
        return True
    return any(name.lower() == b"authorization" for name, _ in scope["headers"])


async def _too_many(scope: Scope, send: Send, seconds: int) -> None:
    sentence = f"Too many failed logins from your address: try again in {seconds} seconds."
    if scope["path"] == LOGIN_PATH:  # a browser's form: the sentence as it is
        body, kind = sentence.encode(), b"text/plain; charset=utf-8"
    else:  # an MCP client or a script
        body, kind = json.dumps({"error": sentence}).encode(), b"application/json"
    headers = [
        (b"content-type", kind),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(seconds).encode()),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def guarded(app: ASGIApp, throttle: LoginThrottle | None = None) -> ASGIApp:
    """``app`` behind the login throttle, every response with the security headers."""
    return SecurityHeaders(ThrottleFailedLogins(app, LoginThrottle() if throttle is None else throttle))
