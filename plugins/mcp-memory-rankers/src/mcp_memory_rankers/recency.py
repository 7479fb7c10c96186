"""Seed 001's ranking: 0.5·similarity + 0.3·recency + 0.2·context overlap (weights settable).

recency is the memory's strength: 0.95 ** days since it was created, boosted ×1.1 per access, capped
at 1. context overlap is the fraction of the current context (project, cwd, platform …, captured
when the ranker is built) that the memory's ``metadata["context"]`` shares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import Candidate, Memory, ScoredCandidate


class RecencySettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_RECENCY_", extra="ignore")

    similarity_weight: float = Field(default=0.5, ge=0)
    recency_weight: float = Field(default=0.3, ge=0)
    context_weight: float = Field(default=0.2, ge=0)
    daily_decay: float = Field(default=0.95, gt=0, le=1)
    access_boost: float = Field(default=1.1, ge=1)


def strength(memory: Memory, now: datetime, daily_decay: float, access_boost: float) -> float:
    days = max((now - memory.created_at).total_seconds() / 86_400, 0.0)
    return min(1.0, float(daily_decay**days) * float(access_boost**memory.access_count))


def context_overlap(memory: Memory, context: Mapping[str, Any]) -> float:
    if not context:
        return 0.0
    stored = memory.metadata.get("context")
    if not isinstance(stored, Mapping):
        return 0.0
    shared = sum(1 for key, value in context.items() if stored.get(key) == value)
    return shared / len(context)


class RecencyRanker:
    def __init__(
        self, settings: RecencySettings | None = None, context: Mapping[str, Any] | None = None
    ) -> None:
        self.settings = settings or RecencySettings()
        self.context = dict(context or {})

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        s = self.settings
        scored = []
        for c in candidates:
            similarity = c.vector_similarity if c.vector_similarity is not None else -1.0
            recency = strength(c.memory, now, s.daily_decay, s.access_boost)
            overlap = context_overlap(c.memory, self.context)
            parts = {
                "similarity": s.similarity_weight * similarity,
                "recency": s.recency_weight * recency,
                "context": s.context_weight * overlap,
            }
            scored.append(ScoredCandidate(candidate=c, score=sum(parts.values()), parts=parts))
        order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
        return [scored[i] for i in order]
