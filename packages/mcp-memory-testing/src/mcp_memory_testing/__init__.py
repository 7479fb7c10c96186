"""Conformance suites and fakes for mcp-memory plugins."""

from .embedder_suite import EmbedderConformance
from .fakes import (
    BackloggedStore,
    FailingReranker,
    HashEmbedder,
    InMemoryStore,
    ReversingReranker,
    SimilarityRanker,
    TickingClock,
)
from .postgres import PostgresServer
from .ranker_suite import RankerConformance, make_candidate, sample_candidates
from .reranker_suite import RerankerConformance, sample_ranked
from .store_suite import StoreConformance
from .token_suite import TokenTableConformance

__all__ = [
    "BackloggedStore",
    "EmbedderConformance",
    "FailingReranker",
    "HashEmbedder",
    "InMemoryStore",
    "PostgresServer",
    "RankerConformance",
    "RerankerConformance",
    "ReversingReranker",
    "SimilarityRanker",
    "StoreConformance",
    "TickingClock",
    "TokenTableConformance",
    "make_candidate",
    "sample_candidates",
    "sample_ranked",
]
