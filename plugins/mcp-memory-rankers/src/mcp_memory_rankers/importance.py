"""Importance-weighted similarity: score = similarity_weight·similarity + importance_weight·importance,
with pinned memories given a fixed bonus."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import Candidate, ScoredCandidate


class ImportanceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_IMPORTANCE_", extra="ignore")

    similarity_weight: float = Field(default=0.7, ge=0)
    importance_weight: float = Field(default=0.3, ge=0)
    pinned_bonus: float = Field(default=0.05, ge=0)


class ImportanceRanker:
    def __init__(self, settings: ImportanceSettings | None = None) -> None:
        self.settings = settings or ImportanceSettings()

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        s = self.settings
        scored = []
        for c in candidates:
            similarity = c.vector_similarity if c.vector_similarity is not None else -1.0
            parts = {
                "similarity": s.similarity_weight * similarity,
                "importance": s.importance_weight * c.memory.importance,
                "pinned": s.pinned_bonus if c.memory.pinned else 0.0,
            }
            scored.append(ScoredCandidate(candidate=c, score=sum(parts.values()), parts=parts))
        order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
        return [scored[i] for i in order]
