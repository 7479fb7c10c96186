"""Maximal marginal relevance: relevant results that do not repeat each other.

Greedy MMR (Carbonell & Goldstein, 1998): pick the candidate maximizing
``λ · relevance − (1 − λ) · (highest overlap with anything already picked)``. Relevance is the vector
similarity (a keyword-only match counts as the least similar); overlap is the Jaccard similarity of
the two memories' word sets, so the ranker needs nothing but the candidates themselves.

Built only against ``mcp_memory_core``'s public API, as any third party would.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from datetime import datetime

from mcp_memory_core import Candidate, RankerSpec, ScoredCandidate, Settings, hookimpl

_WORD = re.compile(r"\w+")


def words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


class MMRRanker:
    """``diversity`` is 1 − λ: 0 ranks by similarity alone, higher values push near-repeats down.

    Only the ``pool`` most relevant candidates are diversified (MMR is quadratic in its pool); the rest
    follow in order of relevance, below them.
    """

    def __init__(self, diversity: float = 0.3, pool: int = 50) -> None:
        if not 0.0 <= diversity <= 1.0:
            raise ValueError(f"diversity must be from 0 to 1; got {diversity}")
        self.diversity = diversity
        self.pool = pool

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        relevance = [c.vector_similarity if c.vector_similarity is not None else -1.0 for c in candidates]
        by_relevance = sorted(range(len(candidates)), key=lambda i: (-relevance[i], i))
        remaining, rest = by_relevance[: self.pool], by_relevance[self.pool :]
        texts = {i: words(candidates[i].memory.content) for i in remaining}
        overlap = dict.fromkeys(remaining, 0.0)  # highest overlap with anything picked so far
        ranked: list[ScoredCandidate] = []
        while remaining:
            scores = {i: (1 - self.diversity) * relevance[i] - self.diversity * overlap[i] for i in remaining}
            best = max(remaining, key=lambda i: scores[i])  # ties: the more relevant (earlier) one
            remaining.remove(best)
            ranked.append(
                ScoredCandidate(
                    candidate=candidates[best],
                    score=min(scores[best], ranked[-1].score) if ranked else scores[best],
                    parts={"relevance": relevance[best], "redundancy": overlap[best]},
                )
            )
            for i in remaining:
                overlap[i] = max(overlap[i], jaccard(texts[i], texts[best]))
        floor = ranked[-1].score if ranked else 0.0
        for i in rest:  # beyond the pool: relevance order, scored below everything diversified
            floor = min(floor, (1 - self.diversity) * relevance[i] - self.diversity)
            ranked.append(
                ScoredCandidate(candidates[i], floor, {"relevance": relevance[i], "redundancy": 0.0})
            )
        return ranked


def _factory(settings: Settings) -> MMRRanker:
    return MMRRanker(diversity=float(os.environ.get("MCP_MEMORY_MMR_DIVERSITY", "0.3")))


@hookimpl
def mcp_memory_rankers() -> Iterator[RankerSpec]:
    yield RankerSpec(
        name="mmr",
        factory=_factory,
        description="Maximal marginal relevance: similar results that don't repeat each other (example plugin)",
    )
