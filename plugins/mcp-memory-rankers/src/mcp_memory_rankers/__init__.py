"""First-party rankers for mcp-memory. Each is a pure function over candidate features."""

from .hybrid import HybridRanker, HybridSettings
from .importance import ImportanceRanker, ImportanceSettings
from .recency import RecencyRanker, RecencySettings
from .similarity import SimilarityRanker

__all__ = [
    "HybridRanker",
    "HybridSettings",
    "ImportanceRanker",
    "ImportanceSettings",
    "RecencyRanker",
    "RecencySettings",
    "SimilarityRanker",
]
