"""What stands in front of the HTTP transport: bearer tokens (through the MCP SDK's auth), the rule
that nothing listens beyond loopback without them, Host/Origin checks on every bind address, and the
error table's status (503, not a 500) when the database holding the tokens cannot be reached.

TLS is not here: run the server behind a reverse proxy that terminates it (docs/security.md).
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import anyio.to_thread
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as ASGIScope

if TYPE_CHECKING:
    from mcp_memory_core.tokens import TokenRegistry

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("localhost",)
_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


def is_host(host: str) -> bool:
    """True for an IP address (``[::1]`` too) or a DNS name (letters, digits and hyphens in dot-separated
    labels); False for anything a server cannot bind to, such as ``not a host`` or ``999.1.1.1``."""
    name = host.strip()
    name = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    labels = name.removesuffix(".").split(".")
    if not name or len(name) > 253 or all(label.isdigit() for label in labels):
        return False
    return all(_LABEL.match(label) for label in labels)


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``; False for 0.0.0.0, :: and every other address."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class RegistryTokenVerifier:
    """The MCP SDK's ``TokenVerifier``: a bearer token is valid when its hash is an active token of
    the registry. The user is the token's ``subject`` (and ``client_id``); its teams ride in ``claims``."""

    def __init__(self, registry: TokenRegistry) -> None:
        self.registry = registry

    async def verify_token(self, token: str) -> AccessToken | None:
        # A token read under the table's current version is answered here (a version check, no table
        # read); any other goes to a worker thread, as a table read may wait for the file's lock.
        info = self.registry.verify_kept(token) or await anyio.to_thread.run_sync(self.registry.verify, token)
        if info is None:
            return None
        return AccessToken(
            token=token,
            client_id=info.user,
            subject=info.user,
            scopes=[],
            claims={"teams": list(info.teams), "token_id": info.id},
        )


RETRY_AFTER_SECONDS = 5


class UnavailableGuard:
    """ASGI middleware around the whole HTTP app: a request that fails because the database cannot be
    reached now (the core's :class:`~mcp_memory_core.errors.UnavailableError`, e.g. the bearer-token
    lookup inside the MCP SDK's auth middleware, which would answer a bare 500) is refused with the
    status ``status_of`` gives it, Retry-After and one sentence naming nothing of the database (the
    caller is not signed in yet); the log says where and why. A response already started is left to
    fail as it would.

    ``status_of`` is the surfaces' one error table (``operations.errors.http_status``: 503), handed in
    by the app that mounts the guard: the runtime imports no operation."""

    def __init__(self, app: ASGIApp, *, status_of: Callable[[BaseException], int]) -> None:
        self.app = app
        self.status_of = status_of

    async def __call__(self, scope: ASGIScope, receive: Receive, send: Send) -> None:
        from mcp_memory_core.errors import DATABASE_UNAVAILABLE, UnavailableError

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except UnavailableError as exc:
            if started:
                raise
            status = self.status_of(exc)
            log.warning("%s %s refused with %d: %s", scope.get("method"), scope.get("path"), status, exc)
            response = JSONResponse(
                {"error": "temporarily_unavailable", "error_description": DATABASE_UNAVAILABLE},
                status_code=status,
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
            await response(scope, receive, send)


@dataclass(frozen=True)
class HttpSecurity:
    """Everything the HTTP app needs to be safe, decided once at start-up."""

    public_url: str
    transport: TransportSecuritySettings
    auth: AuthSettings | None
    verifier: RegistryTokenVerifier | None


def http_security(
    host: str,
    port: int,
    *,
    tokens: TokenRegistry | None,
    public_url: str | None = None,
    extra_hosts: str = "",
) -> HttpSecurity:
    """Host/Origin protection for ``host`` (always on) and, with ``tokens``, bearer-token auth with
    the resource-server metadata the MCP authorization spec asks for."""
    url = (public_url or f"http://{_netloc(host, port)}").rstrip("/")
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    names = [n.strip() for n in extra_hosts.split(",") if n.strip()]
    if host not in ("0.0.0.0", "::", ""):
        names.append(_netloc(host, None))
    public = urlsplit(url)
    if public.hostname:
        names.append(_netloc(public.hostname, None))
    for name in dict.fromkeys(names):
        hosts += [name, f"{name}:*"]
        origins += [f"http://{name}", f"https://{name}", f"http://{name}:*", f"https://{name}:*"]
    transport = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(dict.fromkeys(hosts)),
        allowed_origins=list(dict.fromkeys(origins)),
    )
    if tokens is None:
        return HttpSecurity(public_url=url, transport=transport, auth=None, verifier=None)
    auth = AuthSettings(
        issuer_url=url,  # type: ignore[arg-type]  # pydantic parses the str
        resource_server_url=f"{url}/mcp",  # type: ignore[arg-type]
        validate_token_resource=False,  # our tokens are not audience-bound: the registry is the audience
    )
    return HttpSecurity(
        public_url=url, transport=transport, auth=auth, verifier=RegistryTokenVerifier(tokens)
    )


def _netloc(host: str, port: int | None) -> str:
    bare = host.strip().strip("[]")
    shown = f"[{bare}]" if ":" in bare else bare
    return f"{shown}:{port}" if port is not None else shown
