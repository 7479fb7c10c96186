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
    """``diversity`` is 1 − λ: 0 ranks by similarity alone, higher values push near-repeats down."""

    def __init__(self, diversity: float = 0.3) -> None:
        if not 0.0 <= diversity <= 1.0:
            raise ValueError(f"diversity must be from 0 to 1; got {diversity}")
        self.diversity = diversity

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        relevance = [c.vector_similarity if c.vector_similarity is not None else -1.0 for c in candidates]
        texts = [words(c.memory.content) for c in candidates]
        remaining = list(range(len(candidates)))
        chosen: list[int] = []
        ranked: list[ScoredCandidate] = []
        while remaining:
            best, best_score, best_overlap = remaining[0], float("-inf"), 0.0
            for i in remaining:  # ties keep input order: first best wins
                overlap = max((jaccard(texts[i], texts[j]) for j in chosen), default=0.0)
                score = (1 - self.diversity) * relevance[i] - self.diversity * overlap
                if score > best_score:
                    best, best_score, best_overlap = i, score, overlap
            chosen.append(best)
            remaining.remove(best)
            ranked.append(
                ScoredCandidate(
                    candidate=candidates[best],
                    score=best_score,
                    parts={"relevance": relevance[best], "redundancy": best_overlap},
                )
            )
        # Greedy scores can rise after a redundant pick; the order is the ranking, so make the
        # scores agree with it (each at most the previous one).
        for index in range(1, len(ranked)):
            previous = ranked[index - 1].score
            if ranked[index].score > previous:
                current = ranked[index]
                ranked[index] = ScoredCandidate(current.candidate, previous, current.parts)
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
