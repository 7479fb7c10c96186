import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock


@pytest.fixture
def engine() -> MemoryEngine:
    return MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), clock=TickingClock())
