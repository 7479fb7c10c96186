"""Registers the first-party rankers."""

from __future__ import annotations

from collections.abc import Iterator

from mcp_memory_core import RankerSpec, hookimpl

from .similarity import SimilarityRanker


@hookimpl
def mcp_memory_rankers() -> Iterator[RankerSpec]:
    yield RankerSpec(
        name="similarity",
        factory=lambda settings: SimilarityRanker(),
        description="Cosine similarity only (seed 000)",
    )
