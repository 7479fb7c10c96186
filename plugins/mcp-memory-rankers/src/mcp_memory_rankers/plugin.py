"""Registers the first-party rankers. Each ranker's weights are settable from the environment
(``MCP_MEMORY_HYBRID_*``, ``MCP_MEMORY_RECENCY_*``, ``MCP_MEMORY_IMPORTANCE_*``)."""

from __future__ import annotations

from collections.abc import Iterator

from mcp_memory_core import RankerSpec, hookimpl
from mcp_memory_core.context import current_context

from .hybrid import HybridRanker, HybridSettings
from .importance import ImportanceRanker, ImportanceSettings
from .recency import RecencyRanker, RecencySettings
from .similarity import SimilarityRanker


@hookimpl
def mcp_memory_rankers() -> Iterator[RankerSpec]:
    yield RankerSpec(
        name="similarity",
        factory=lambda settings: SimilarityRanker(),
        description="Cosine similarity only (seed 000)",
    )
    yield RankerSpec(
        name="hybrid",
        factory=lambda settings: HybridRanker(HybridSettings()),
        description="Vector similarity fused with FTS5 keyword score",
        settings_model=HybridSettings,
    )
    yield RankerSpec(
        name="recency",
        factory=lambda settings: RecencyRanker(RecencySettings(), context=current_context()),
        description="Seed 001: 0.5 similarity + 0.3 recency (0.95^days, x1.1 per access) + 0.2 context",
        settings_model=RecencySettings,
    )
    yield RankerSpec(
        name="importance",
        factory=lambda settings: ImportanceRanker(ImportanceSettings()),
        description="0.7 similarity + 0.3 importance, pinned bonus",
        settings_model=ImportanceSettings,
    )
