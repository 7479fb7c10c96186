"""The HTTP app as ``serve --transport http`` serves it (``/mcp`` and ``/ui``), in process: the
security headers on every kind of response, and the throttle on failed logins and bearer tokens."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from server_helpers import INITIALIZE
from starlette.testclient import TestClient
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from mcp_memory_core.settings import Settings
from mcp_memory_core.tokens import TokenRegistry
from mcp_memory_server.runtime.assembly import build_engine
from mcp_memory_server.runtime.http_security import http_security
from mcp_memory_server.runtime.service import MemoryService
from mcp_memory_server.runtime.tokens import SqliteTokenTable
from mcp_memory_server.web.middleware import SECURITY_HEADERS, LoginThrottle
from mcp_memory_server.web.server import http_app

BASE = "http://127.0.0.1:8000"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
WRONG = "mcpm_" + "x" * 43
ALICE = "203.0.113.7"
BOB = "198.51.100.9"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


class From:
    """Requests from one client address: a trusted proxy's X-Forwarded-For, read by uvicorn's
    middleware as ``serve`` runs it behind a proxy on 127.0.0.1."""

    def __init__(self, client: TestClient, address: str) -> None:
        self.client = client
        self.address = address

    def get(self, url: str, headers: dict[str, str] | None = None) -> Any:
        return self.client.get(url, headers={**(headers or {}), "X-Forwarded-For": self.address})

    def post(self, url: str, headers: dict[str, str] | None = None, **kwargs: Any) -> Any:
        return self.client.post(url, headers={**(headers or {}), "X-Forwarded-For": self.address}, **kwargs)


@pytest.fixture
def served(settings: Settings, tmp_path: Path, clock: Clock) -> Iterator[tuple[TestClient, str]]:
    """A client of the app (its lifespan running) and a valid token."""
    tokens = TokenRegistry(SqliteTokenTable(tmp_path / "tokens.db"))
    secret, _ = tokens.create("alice")
    security = http_security("127.0.0.1", 8000, tokens=tokens)
    service = MemoryService(settings, lambda s: build_engine(s, require_scope=True), tokens=tokens)
    app = http_app(settings, service, security, host="127.0.0.1", throttle=LoginThrottle(clock=clock))
    with TestClient(
        ProxyHeadersMiddleware(app, trusted_hosts="*"), base_url=BASE, follow_redirects=False
    ) as client:
        yield client, secret
    service.close()
    tokens.close()


def assert_secured(response: Any, cache: str = SECURITY_HEADERS["Cache-Control"]) -> None:
    """Every security header, with its value; ``cache``: a Cache-Control the response sets itself."""
    for name, value in {**SECURITY_HEADERS, "Cache-Control": cache}.items():
        assert response.headers.get(name) == value, (response.request.url, response.status_code, name)


def test_every_kind_of_response_carries_the_security_headers(served: Any) -> None:
    client, secret = served
    bearer = {"Authorization": f"Bearer {secret}"}
    responses = {
        "not found": client.get("/nope"),
        "method not allowed": client.put("/ui/login"),
        "static file": client.get("/ui/static/ui.css"),
        "redirect": client.get("/"),
        "mcp without a token": client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS),
        "mcp reply": client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer}),
        "mcp wrong method": client.put("/mcp", headers=bearer),
        "resource metadata": client.get("/.well-known/oauth-protected-resource/mcp"),
        "wrong host": client.get("/ui/login", headers={"Host": "evil.example"}),
        "ui page": client.get("/ui/login"),
    }
    assert [r.status_code for r in responses.values()] == [404, 405, 200, 307, 401, 200, 405, 200, 421, 200]
    own_cache = {"resource metadata": "public, max-age=3600"}  # the MCP reply is one JSON body: no-store
    for kind, response in responses.items():
        assert_secured(response, **({"cache": own_cache[kind]} if kind in own_cache else {}))


def login(client: From, token: str) -> Any:
    return client.post("/ui/login", data={"token": token, "next": "/ui/"})


def test_failed_ui_logins_are_throttled_per_client_address(served: Any, clock: Clock) -> None:
    client, secret = served
    alice, bob = From(client, ALICE), From(client, BOB)
    assert login(alice, secret).status_code == 303  # a success does not count
    for _ in range(10):
        assert login(alice, WRONG).status_code == 401
    clock.now += 15
    refused = login(alice, WRONG)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "45"
    assert refused.text == "Too many failed logins from your address: try again in 45 seconds."
    assert_secured(refused)
    assert login(alice, secret).status_code == 429  # not even a good token: no guessing while blocked
    assert login(bob, secret).status_code == 303 and login(bob, WRONG).status_code == 401
    clock.now += 45  # the first failure is a minute old: one more attempt is allowed
    assert login(alice, secret).status_code == 303
    assert alice.get("/ui/").status_code == 200  # a logged-in browser presents no token: never throttled


def test_wrong_bearer_tokens_on_mcp_and_the_ui_count_together(served: Any, clock: Clock) -> None:
    client, secret = served
    alice, bob = From(client, ALICE), From(client, BOB)
    wrong = {**MCP_HEADERS, "Authorization": f"Bearer {WRONG}"}
    for _ in range(5):
        assert alice.post("/mcp", json=INITIALIZE, headers=wrong).status_code == 401
        assert alice.get("/ui/", headers={"Authorization": f"Bearer {WRONG}"}).status_code == 401
    for _ in range(20):  # no token at all is no guess: answered 401, not counted
        assert alice.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS).status_code == 401
    refused = alice.post("/mcp", json=INITIALIZE, headers=wrong)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "60"
    assert refused.json() == {"error": "Too many failed logins from your address: try again in 60 seconds."}
    good = {**MCP_HEADERS, "Authorization": f"Bearer {secret}"}
    assert alice.post("/mcp", json=INITIALIZE, headers=good).status_code == 429
    assert bob.post("/mcp", json=INITIALIZE, headers=good).status_code == 200
    clock.now += 60
    assert alice.post("/mcp", json=INITIALIZE, headers=good).status_code == 200


def test_the_throttle_forgets_the_least_recent_clients_beyond_its_cap() -> None:
    clock = Clock()
    throttle = LoginThrottle(limit=2, window=60, max_clients=2, clock=clock)
    for address in ("a", "b", "a", "c"):  # "b" failed least recently: forgotten when "c" comes
        throttle.failed(address)
        throttle.failed(address)
    assert throttle.retry_after("a") == 60 and throttle.retry_after("c") == 60
    assert throttle.retry_after("b") is None and len(throttle) == 2


SURROGATE = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_memories","arguments":{"query":"\\ud800"}}}'
DEEP = (
    b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"search_memories","arguments":{"query":%s}}}'
    % (b"[" * 10_000 + b"]" * 10_000)
)


@pytest.mark.parametrize("era", ["2025-06-18", "2026-07-28"])
def test_json_the_sdk_cannot_read_is_answered_by_the_request_id(served: Any, era: str) -> None:
    client, secret = served
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {secret}", "MCP-Protocol-Version": era}
    if era == "2025-06-18":  # a session, as a handshake-era client has
        started = client.post("/mcp", json=INITIALIZE, headers=headers)
        headers["Mcp-Session-Id"] = started.headers["mcp-session-id"]
    for body, request_id, says in [
        (SURROGATE, 7, "\\ud800, half of a UTF-16 surrogate pair without its other half"),
        (DEEP, "deep", "nests JSON 10,003 levels deep and this server reads at most 201"),
    ]:
        reply = client.post("/mcp", content=body, headers=headers)
        assert reply.status_code == 400 and reply.headers["content-type"] == "application/json"
        error = reply.json()
        assert error["id"] == request_id and error["error"]["code"] == -32602, error
        assert says in error["error"]["message"]
    # without a valid token, the token check answers first
    assert client.post("/mcp", content=SURROGATE, headers=MCP_HEADERS).status_code == 401
    # a request the SDK reads goes on to it, body intact
    envelope = {
        "io.modelcontextprotocol/protocolVersion": era,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    modern = era == "2026-07-28"
    listed = client.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/list",
            "params": {"_meta": envelope} if modern else {},
        },
        headers={**headers, "Mcp-Method": "tools/list"} if modern else headers,
    )
    assert listed.status_code == 200 and "store_memory" in listed.text, listed.text


def test_mcp_answers_in_plain_json_to_a_client_that_accepts_it(served: Any) -> None:
    """One JSON body per request (no event stream to set up and parse) when the client accepts JSON,
    as every MCP client must."""
    client, secret = served
    reply = client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {secret}"})
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    assert reply.json()["result"]["serverInfo"]["name"] == "mcp-memory"


@pytest.mark.parametrize(
    "accept", ["text/event-stream", "text/event-stream, application/json;q=0.5", "text/*"]
)
def test_a_client_that_asks_for_server_sent_events_gets_its_answer_as_one(served: Any, accept: str) -> None:
    client, secret = served
    headers = {"Accept": accept, "Content-Type": "application/json", "Authorization": f"Bearer {secret}"}
    reply = client.post("/mcp", json=INITIALIZE, headers=headers)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
    event, data, end = reply.text.split("\n", 2)
    assert event == "event: message" and end == "\n"
    assert json.loads(data.removeprefix("data: "))["result"]["serverInfo"]["name"] == "mcp-memory"
    session = {
        **headers,
        "Mcp-Session-Id": reply.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-06-18",
    }
    listed = client.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session)
    assert listed.headers["content-type"].startswith("text/event-stream") and "store_memory" in listed.text
    refused = client.post("/mcp", json=INITIALIZE, headers={**headers, "Accept": "image/png"})
    assert refused.status_code == 406  # accepts neither: the SDK's own answer


def test_http_requests_are_parsed_by_httptools() -> None:
    """uvicorn picks its C parser when httptools is installed (a dependency): the pure-Python h11
    cost about 0.4 ms more CPU per request."""
    import uvicorn

    config = uvicorn.Config(lambda scope, receive, send: None, log_config=None)
    config.load()
    assert config.http_protocol_class.__name__ == "HttpToolsProtocol"


def test_health_answers_without_a_token_and_says_nothing_else(served: Any) -> None:
    client, _ = served
    health = client.get("/health")
    assert health.status_code == 200
    assert health.content == b'{"status":"ok"}'  # exactly: no user, count, version, path or store
    assert "set-cookie" not in health.headers
    assert_secured(health)
    wrong = client.get("/health", headers={"Authorization": f"Bearer {WRONG}"})
    assert wrong.status_code == 200 and wrong.json() == {"status": "ok"}
    assert client.post("/health").status_code == 405
    assert client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS).status_code == 401  # the rest: a token
    for page in ("/ui/", "/ui/search?q=x", "/ui/stats", "/ui/export/download"):
        refused = client.get(page)
        assert refused.status_code == 303 and refused.headers["location"].startswith("/ui/login"), page


def test_a_key_stored_over_http_is_redacted_and_the_receipt_says_so(served: Any) -> None:
    """The HTTP server's tools are the engine's writes: a token's user stores a key and gets it back
    as a placeholder, the receipt naming its kind and field."""
    client, secret = served
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {secret}", "MCP-Protocol-Version": "2025-06-18"}
    started = client.post("/mcp", json=INITIALIZE, headers=headers)
    headers["Mcp-Session-Id"] = started.headers["mcp-session-id"]

    def call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        reply = client.post(
            "/mcp", json={**body, "params": {"name": tool, "arguments": arguments}}, headers=headers
        )
        assert reply.status_code == 200, reply.text
        result = reply.json()["result"]
        assert not result.get("isError"), result
        return dict(result["structuredContent"])

    key = "AKIAQ3EGUJ7NYWPRT4FD"
    receipt = call(2, "store_memory", {"content": f"The deploy key is {key}."})
    assert receipt["redaction"] == "redacted 1 secret: an AWS access key in content"
    shown = call(3, "get_memory", {"id": receipt["id"]})
    assert shown["content"] == "The deploy key is [REDACTED:aws-key]." and key not in json.dumps(shown)


def test_the_http_server_runs_on_uvloop_where_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util
    import sys

    import anyio

    from mcp_memory_server.web.server import event_loop_options

    if sys.platform == "win32":
        pytest.skip("uvloop has no Windows wheels: asyncio's loop there")
    options = event_loop_options()
    assert options == {"use_uvloop": True}  # a dependency of the server package here

    async def loop_class() -> str:
        import asyncio

        return type(asyncio.get_running_loop()).__module__

    assert anyio.run(loop_class, backend_options=options).startswith("uvloop")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert event_loop_options() == {"use_uvloop": False}
