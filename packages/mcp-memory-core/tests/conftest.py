from datetime import UTC, datetime, timedelta

import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore


class TickingClock:
    """Each call is one millisecond after the previous one: orderings are unambiguous."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@pytest.fixture
def engine() -> MemoryEngine:
    return MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=TickingClock())
