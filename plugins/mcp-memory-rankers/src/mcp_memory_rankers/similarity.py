"""Seed 000's ranking: semantic similarity only — no decay, no boosting."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from mcp_memory_core import Candidate, ScoredCandidate


class SimilarityRanker:
    """Orders by vector cosine similarity; ties keep the input order."""

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        scored = []
        for c in candidates:
            # No vector match: score as the least similar a cosine can be, so it sorts last.
            similarity = c.vector_similarity if c.vector_similarity is not None else -1.0
            scored.append(ScoredCandidate(candidate=c, score=similarity, parts={"similarity": similarity}))
        order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
        return [scored[i] for i in order]
