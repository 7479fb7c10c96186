"""RankerConformance: what every ranker must do. Subclass it and provide a ``ranker`` fixture."""

from __future__ import annotations

import builtins
import math
import socket
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mcp_memory_core import Candidate, Memory, Ranker

from .guard import OverrideGuard

NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)


def make_candidate(
    content: str,
    similarity: float | None,
    *,
    keyword_score: float | None = None,
    keyword_rank: int | None = None,
    vector_rank: int | None = None,
    age_days: float = 1.0,
    **fields: Any,
) -> Candidate:
    created = NOW - timedelta(days=age_days)
    memory = Memory(content=content, created_at=created, updated_at=created, **fields)
    return Candidate(
        memory=memory,
        matched_id=memory.id,
        vector_similarity=similarity,
        vector_rank=vector_rank,
        keyword_score=keyword_score,
        keyword_rank=keyword_rank,
    )


def sample_candidates() -> list[Candidate]:
    sims = [0.91, 0.85, 0.77, 0.70, 0.64, 0.52, 0.33, 0.10]
    return [
        make_candidate(
            f"memory number {i} about topic {i % 3}",
            s,
            vector_rank=i + 1,
            keyword_score=(8 - i) / 2 if i % 2 == 0 else None,
            keyword_rank=(i // 2 + 1) if i % 2 == 0 else None,
            age_days=float(i * 3),
            importance=0.1 * i,
            access_count=i,
            tags=(f"t{i % 2}",),
        )
        for i, s in enumerate(sims)
    ]


class RankerConformance(OverrideGuard):
    """Subclass and override the ``ranker`` fixture to return a fresh ranker.

    Capability flags: set ``follows_similarity = False`` if your ranker may legitimately ignore vector
    similarity (then the monotonicity test is skipped).
    """

    follows_similarity: bool = True

    @pytest.fixture
    def ranker(self) -> Ranker:
        raise NotImplementedError("Override the `ranker` fixture to return the ranker under test.")

    def test_implements_protocol(self, ranker: Ranker) -> None:
        """Troubleshooting: the ranker needs a method ``rank(query, candidates, now)`` returning a list of
        ``ScoredCandidate``."""
        assert isinstance(ranker, Ranker)

    def test_empty_candidates_give_empty_result(self, ranker: Ranker) -> None:
        """Troubleshooting: ``rank`` must return ``[]`` for no candidates, not raise or return None."""
        assert ranker.rank("anything", [], NOW) == []

    def test_every_candidate_comes_back_once(self, ranker: Ranker) -> None:
        """Troubleshooting: a ranker orders; it never drops or duplicates candidates. Return one
        ScoredCandidate per input candidate, carrying the same Candidate object."""
        candidates = sample_candidates()
        ranked = ranker.rank("topic 1", candidates, NOW)
        assert sorted(id(s.candidate) for s in ranked) == sorted(id(c) for c in candidates)

    def test_scores_are_finite_and_best_first(self, ranker: Ranker) -> None:
        """Troubleshooting: scores must be finite floats (no NaN/inf) and the list sorted by score,
        highest first."""
        ranked = ranker.rank("topic 1", sample_candidates(), NOW)
        scores = [s.score for s in ranked]
        assert all(isinstance(x, float) and math.isfinite(x) for x in scores), scores
        assert scores == sorted(scores, reverse=True)

    def test_parts_are_named_finite_numbers(self, ranker: Ranker) -> None:
        """Troubleshooting: ``parts`` explains a score: a dict of name -> finite float."""
        for scored in ranker.rank("topic", sample_candidates(), NOW):
            assert all(isinstance(k, str) and math.isfinite(v) for k, v in scored.parts.items())

    def test_deterministic(self, ranker: Ranker) -> None:
        """Troubleshooting: the same query, candidates and ``now`` must give the same order. Don't use
        the wall clock, randomness or set iteration order."""
        candidates = sample_candidates()
        first = [s.candidate.matched_id for s in ranker.rank("topic 2", candidates, NOW)]
        second = [s.candidate.matched_id for s in ranker.rank("topic 2", candidates, NOW)]
        assert first == second

    def test_input_not_mutated(self, ranker: Ranker) -> None:
        """Troubleshooting: sort a copy; the engine reuses the candidate list after ranking."""
        candidates = sample_candidates()
        before = list(candidates)
        ranker.rank("topic", candidates, NOW)
        assert candidates == before

    def test_candidates_without_vector_match(self, ranker: Ranker) -> None:
        """Troubleshooting: keyword-only candidates have ``vector_similarity=None``; handle None instead
        of doing arithmetic on it."""
        candidates = [make_candidate("only keywords", None, keyword_score=3.0, keyword_rank=1)]
        candidates += sample_candidates()[:3]
        ranked = ranker.rank("keywords", candidates, NOW)
        assert len(ranked) == 4
        assert all(math.isfinite(s.score) for s in ranked)

    def test_higher_similarity_wins_all_else_equal(self, ranker: Ranker) -> None:
        """Troubleshooting: with identical other features, the candidate whose vector is more similar
        must not rank lower. Set ``follows_similarity = False`` only if ignoring similarity is the point."""
        if not self.follows_similarity:
            pytest.skip("ranker declares follows_similarity = False")
        low = make_candidate("same text", 0.30, vector_rank=2)
        high = make_candidate("same text", 0.80, vector_rank=1)
        ranked = ranker.rank("same text", [low, high], NOW)
        assert ranked[0].candidate is high

    def test_no_io(self, ranker: Ranker, monkeypatch: pytest.MonkeyPatch) -> None:
        """Troubleshooting: rankers are pure functions: no files, no network. Load what you need in the
        factory, not in ``rank``."""

        def forbidden(*args: object, **kwargs: object) -> None:
            raise AssertionError("ranker performed I/O during rank()")

        monkeypatch.setattr(builtins, "open", forbidden)
        monkeypatch.setattr(socket, "socket", forbidden)
        ranker.rank("topic", sample_candidates(), NOW)


RankerConformance._suite = RankerConformance
