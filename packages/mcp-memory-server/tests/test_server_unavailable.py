"""A database that cannot be reached (PostgreSQL down or restarting; here: nothing listens on its port)
is said so: the bearer-token lookup inside the MCP SDK's auth middleware answers 503 with Retry-After
and one sentence (it answered a bare 500, which broke the client's session), and a tool call answers a
tool error that starts with the same sentence."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from server_helpers import INITIALIZE, error_text
from starlette.testclient import TestClient

from mcp_memory_core import MemoryEngine
from mcp_memory_core.settings import Settings
from mcp_memory_core.tokens import TokenRegistry
from mcp_memory_postgres import PostgresStore
from mcp_memory_postgres.tokens import PostgresTokenTable
from mcp_memory_server.mcp.app import build_app
from mcp_memory_server.runtime.http_security import http_security
from mcp_memory_server.runtime.service import MemoryService
from mcp_memory_server.web.server import http_app
from mcp_memory_testing import HashEmbedder, SimilarityRanker

CLOSED = "postgresql://mcp:pw-s3cret@127.0.0.1:1/memory?connect_timeout=2"  # nothing listens on port 1
SENTENCE = "The memory database is unavailable; try again shortly."


def unreachable_engine(settings: Settings) -> MemoryEngine:
    return MemoryEngine(PostgresStore(CLOSED), HashEmbedder(), SimilarityRanker())


@pytest.fixture
def http(settings: Settings) -> Iterator[TestClient]:
    """The HTTP app as ``serve --transport http`` builds it, its tokens in the unreachable database."""
    tokens = TokenRegistry(PostgresTokenTable(CLOSED))
    security = http_security("127.0.0.1", 8000, tokens=tokens)
    service = MemoryService(settings, unreachable_engine, tokens=tokens)
    with TestClient(
        http_app(settings, service, security, host="127.0.0.1"), base_url="http://127.0.0.1:8000"
    ) as client:
        yield client
    service.close()
    tokens.close()


def initialize_with_a_token(http: TestClient) -> Any:
    return http.post(
        "/mcp",
        json=INITIALIZE,
        headers={"Authorization": "Bearer mcpm_x", "Accept": "application/json, text/event-stream"},
    )


def test_a_token_lookup_the_database_cannot_answer_is_a_503_with_one_sentence(http: TestClient) -> None:
    reply = initialize_with_a_token(http)
    assert reply.status_code == 503, reply.text
    assert reply.headers["retry-after"] == "5"
    assert reply.json() == {"error": "temporarily_unavailable", "error_description": SENTENCE}
    assert "127.0.0.1:1" not in reply.text and "s3cret" not in reply.text  # nothing of the database


def test_the_status_of_an_unavailable_database_is_the_error_tables(
    http: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime's guard refuses with the status the one error table gives (it imports no table)."""
    from mcp_memory_core.errors import UnavailableError
    from mcp_memory_server.operations import errors

    rule = errors.ErrorRule(errors.error_table()[0][1].mcp_code, 507, errors.EXIT_ERROR)
    monkeypatch.setattr(errors, "error_table", lambda: ((UnavailableError, rule),))
    reply = initialize_with_a_token(http)
    assert reply.status_code == 507, reply.text
    assert reply.headers["retry-after"] == "5"


def test_without_a_token_the_reply_is_still_401(http: TestClient) -> None:
    """No lookup happens without a token: the SDK refuses it as before."""
    reply = http.post("/mcp", json=INITIALIZE, headers={"Accept": "application/json, text/event-stream"})
    assert reply.status_code == 401


@pytest.mark.anyio
async def test_a_tool_call_the_database_cannot_answer_is_a_clear_tool_error(settings: Settings) -> None:
    from mcp import Client

    app = build_app(settings, engine_factory=unreachable_engine)
    try:
        async with Client(app) as client:
            result: Any = await client.call_tool("store_memory", {"content": "the deploy key rotates"})
    finally:
        app.memory_service.close()  # type: ignore[attr-defined]
    text = error_text(result)
    assert text.startswith(f"Error executing tool store_memory: {SENTENCE} PostgreSQL at ")
    assert "postgresql://mcp@127.0.0.1:1/memory" in text and "s3cret" not in text
