"""pytest11 entry point: assert rewriting for the suites, and the PostgreSQL fixtures.

`postgres_server` (session scope) is a real PostgreSQL 16 + pgvector server (see `postgres.py`);
`postgres_url` (function scope) is the URL of a fresh database on it, with `vector` installed, dropped
after the test. Nothing starts unless a test requests one of them. Without the `postgres` extra they fail
(never skip), saying what to install.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest

from .postgres import PostgresError, PostgresServer, missing_requirements

pytest.register_assert_rewrite(
    "mcp_memory_testing.store_suite",
    "mcp_memory_testing.embedder_suite",
    "mcp_memory_testing.ranker_suite",
    "mcp_memory_testing.reranker_suite",
    "mcp_memory_testing.token_suite",
    "mcp_memory_testing.guard",
)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the test session, stopped (and its data deleted) at the end."""
    if problem := missing_requirements():
        pytest.fail(problem, pytrace=False)
    server = PostgresServer()
    try:
        server.start()
    except PostgresError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """`postgresql://postgres@127.0.0.1:PORT/NAME`: a fresh database for this test, dropped afterwards."""
    stem = re.sub(r"[^a-z0-9_]+", "_", request.node.name.lower()).strip("_")[:40]
    name = f"t_{stem}_{uuid.uuid4().hex[:8]}"
    url = postgres_server.create_database(name)
    yield url
    postgres_server.drop_database(name)
