"""First-party rankers for mcp-memory. Each is a pure function over candidate features."""

from .similarity import SimilarityRanker

__all__ = ["SimilarityRanker"]
