"""Conformance suites and fakes for mcp-memory plugins."""

from .embedder_suite import EmbedderConformance
from .fakes import HashEmbedder, InMemoryStore, TickingClock
from .ranker_suite import RankerConformance, make_candidate, sample_candidates
from .store_suite import StoreConformance

__all__ = [
    "EmbedderConformance",
    "HashEmbedder",
    "InMemoryStore",
    "RankerConformance",
    "StoreConformance",
    "TickingClock",
    "make_candidate",
    "sample_candidates",
]
