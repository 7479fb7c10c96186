"""pytest11 entry point: lets pytest rewrite asserts inside the suites, so failures show values."""

import pytest

pytest.register_assert_rewrite(
    "mcp_memory_testing.store_suite",
    "mcp_memory_testing.embedder_suite",
    "mcp_memory_testing.ranker_suite",
    "mcp_memory_testing.reranker_suite",
    "mcp_memory_testing.guard",
)
