"""RerankerConformance: what every reranker must do. Subclass it and provide a ``reranker`` fixture.

The engine skips (with a warning in the search result) a reranker that raises, runs past its time
limit, or returns anything but a reordering of what it was given; these tests catch that before a
user does.
"""

from __future__ import annotations

import builtins
import math
import re
import socket
import time
from collections.abc import Sequence

import pytest

from mcp_memory_core import Reranker, ScoredCandidate

from .guard import OverrideGuard
from .ranker_suite import NOW, make_candidate, sample_candidates

DEFAULT_TIMEOUT = 2.0  # seconds: MCP_MEMORY_RERANKER_TIMEOUT's default
_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")


def sample_ranked(count: int | None = None) -> list[ScoredCandidate]:
    """A ranker's output as a reranker receives it: :func:`sample_candidates` (or ``count`` made up
    the same way), best first, scored and with a ``similarity`` part."""
    candidates = sample_candidates()
    if count is not None:
        candidates = [
            make_candidate(
                f"memory number {i} about topic {i % 3}", 0.95 - i * 0.9 / count, vector_rank=i + 1
            )
            for i in range(count)
        ]
    return [
        ScoredCandidate(c, 1.0 - i / len(candidates), {"similarity": c.vector_similarity or 0.0})
        for i, c in enumerate(candidates)
    ]


def _ids(ranked: Sequence[ScoredCandidate]) -> list[int]:
    return [id(s.candidate) for s in ranked]


class RerankerConformance(OverrideGuard):
    """Subclass and override the ``reranker`` fixture to return a fresh reranker (the suite calls
    ``load()`` itself where it needs the reranker loaded).

    ``query`` is what the reranking tests search for; override it if your reranker needs a query of
    a certain kind to do anything.
    """

    query: str = "memory about topic 1"

    @pytest.fixture
    def reranker(self) -> Reranker:
        raise NotImplementedError("Override the `reranker` fixture to return the reranker under test.")

    def _rerank(self, reranker: Reranker, ranked: Sequence[ScoredCandidate]) -> list[ScoredCandidate]:
        reranker.load()
        return reranker.rerank(self.query, ranked, NOW)

    def test_implements_protocol(self, reranker: Reranker) -> None:
        """Troubleshooting: a reranker needs ``name`` (the lowercase name it registers under),
        ``depth`` (int), ``heavy`` (bool), ``load()`` and ``rerank(query, ranked, now)``."""
        assert isinstance(reranker, Reranker)
        assert isinstance(reranker.name, str) and _NAME.match(reranker.name), reranker.name
        assert isinstance(reranker.heavy, bool)

    def test_depth_is_at_least_one(self, reranker: Reranker) -> None:
        """Troubleshooting: ``depth`` is how many of the ranker's best candidates the reranker sees:
        a whole number (an int, not a float or bool), at least 1. The engine refuses anything else."""
        depth = reranker.depth
        assert isinstance(depth, int) and not isinstance(depth, bool), depth
        assert depth >= 1

    def test_load_is_idempotent(self, reranker: Reranker) -> None:
        """Troubleshooting: the server may call ``load()`` more than once (warm-up, then first use):
        the second call must do nothing, and reranking must work after it."""
        reranker.load()
        reranker.load()
        assert len(reranker.rerank(self.query, sample_ranked(), NOW)) == len(sample_ranked())

    def test_returns_a_reordering_of_its_input(self, reranker: Reranker) -> None:
        """Troubleshooting: return one ScoredCandidate per input, carrying the same Candidate object,
        none dropped, repeated or added. The engine skips a reranker whose answer is anything else."""
        ranked = sample_ranked()
        result = self._rerank(reranker, ranked)
        assert isinstance(result, list)
        assert all(isinstance(s, ScoredCandidate) for s in result)
        assert sorted(_ids(result)) == sorted(_ids(ranked))

    def test_one_candidate_comes_back(self, reranker: Reranker) -> None:
        """Troubleshooting: a search with a single result still goes through the reranker."""
        ranked = sample_ranked()[:1]
        assert _ids(self._rerank(reranker, ranked)) == _ids(ranked)

    def test_empty_input_gives_empty_result(self, reranker: Reranker) -> None:
        """Troubleshooting: ``rerank`` must return ``[]`` for no candidates, not raise or return None."""
        assert self._rerank(reranker, []) == []

    def test_deterministic(self, reranker: Reranker) -> None:
        """Troubleshooting: the same query, candidates and ``now`` must give the same order and scores.
        Don't use the wall clock, randomness or set iteration order."""
        ranked = sample_ranked()
        first = [(id(s.candidate), s.score) for s in self._rerank(reranker, ranked)]
        second = [(id(s.candidate), s.score) for s in self._rerank(reranker, ranked)]
        assert first == second

    def test_input_not_mutated(self, reranker: Reranker) -> None:
        """Troubleshooting: build new ScoredCandidates (they are frozen) with a new ``parts`` dict:
        ``{**scored.parts, "my-reranker": score}``; never sort the input list in place."""
        ranked = sample_ranked()
        before = [(id(s.candidate), s.score, dict(s.parts)) for s in ranked]
        self._rerank(reranker, ranked)
        assert [(id(s.candidate), s.score, dict(s.parts)) for s in ranked] == before

    def test_scores_are_finite(self, reranker: Reranker) -> None:
        """Troubleshooting: scores must be finite floats (no NaN/inf): the engine skips a reranker
        that gives anything else."""
        result = self._rerank(reranker, sample_ranked())
        assert all(isinstance(s.score, float) and math.isfinite(s.score) for s in result), result

    def test_adds_a_part_named_after_itself(self, reranker: Reranker) -> None:
        """Troubleshooting: ``search_memories(explain=true)`` shows ``parts``: keep the ranker's and add
        one named after the reranker (``reranker.name``), a finite number."""
        ranked = sample_ranked()
        given = {id(s.candidate): dict(s.parts) for s in ranked}
        for scored in self._rerank(reranker, ranked):
            assert math.isfinite(scored.parts[reranker.name])
            assert given[id(scored.candidate)].items() <= scored.parts.items()
            assert all(isinstance(k, str) and math.isfinite(v) for k, v in scored.parts.items())

    def test_candidates_without_vector_match(self, reranker: Reranker) -> None:
        """Troubleshooting: keyword-only candidates have ``vector_similarity=None``; handle None
        instead of doing arithmetic on it."""
        keyword_only = make_candidate("only keywords about topic 1", None, keyword_score=3.0, keyword_rank=1)
        ranked = [ScoredCandidate(keyword_only, 1.0, {"keyword": 1.0}), *sample_ranked()[:3]]
        result = self._rerank(reranker, ranked)
        assert sorted(_ids(result)) == sorted(_ids(ranked))

    def test_fast_enough_for_the_default_time_limit(self, reranker: Reranker) -> None:
        """Troubleshooting: the engine waits MCP_MEMORY_RERANKER_TIMEOUT (2 s by default) for a
        reranker and skips it after that. Reranking ``depth`` candidates (up to 100 here) once loaded
        must take well under that: lower ``depth`` or make ``rerank`` cheaper."""
        ranked = sample_ranked(min(reranker.depth, 100))
        reranker.load()
        started = time.perf_counter()
        reranker.rerank(self.query, ranked, NOW)
        assert time.perf_counter() - started < DEFAULT_TIMEOUT / 2

    def test_no_io(self, reranker: Reranker, monkeypatch: pytest.MonkeyPatch) -> None:
        """Troubleshooting: ``rerank`` does no I/O: no files, no network. Read your model in
        ``load()`` (the suite calls it before forbidding I/O)."""
        reranker.load()

        def forbidden(*args: object, **kwargs: object) -> None:
            raise AssertionError("reranker performed I/O during rerank()")

        monkeypatch.setattr(builtins, "open", forbidden)
        monkeypatch.setattr(socket, "socket", forbidden)
        reranker.rerank(self.query, sample_ranked(), NOW)


RerankerConformance._suite = RerankerConformance
