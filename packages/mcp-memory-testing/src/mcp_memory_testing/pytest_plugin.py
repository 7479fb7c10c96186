"""pytest11 entry point: lets pytest rewrite asserts inside the suites, so failures show values."""

import pytest

pytest.register_assert_rewrite(
    "mcp_memory_testing.store_suite",
    "mcp_memory_testing.embedder_suite",
    "mcp_memory_testing.ranker_suite",
    "mcp_memory_testing.reranker_suite",
    "mcp_memory_testing.guard",
)

# A real PostgreSQL with pgvector for stores' tests: defined here so every test session that has the
# testing package can ask for them; nothing starts unless a test does (needs the [postgres] extra).
from mcp_memory_testing.postgres import postgres_server, postgres_url  # noqa: E402

__all__ = ["postgres_server", "postgres_url"]
