"""Conformance suites and fakes for mcp-memory plugins."""

from .embedder_suite import EmbedderConformance
from .fakes import HashEmbedder, InMemoryStore
from .ranker_suite import RankerConformance, make_candidate, sample_candidates

__all__ = [
    "EmbedderConformance",
    "HashEmbedder",
    "InMemoryStore",
    "RankerConformance",
    "StoreConformance",
    "make_candidate",
    "sample_candidates",
]


def __getattr__(name: str) -> object:
    # The store suite is imported lazily so a half-written suite never breaks the other suites' imports.
    if name == "StoreConformance":
        from .store_suite import StoreConformance

        return StoreConformance
    raise AttributeError(name)
