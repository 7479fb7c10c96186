"""The fakes pass their own suites: the suites can pass, and the reference implementations are right."""

import pytest

from mcp_memory_testing import EmbedderConformance, HashEmbedder, RankerConformance, StoreConformance
from mcp_memory_testing.guard import troubleshooting_documented


class TestHashEmbedder(EmbedderConformance):
    semantic = False

    @pytest.fixture
    def embedder(self) -> HashEmbedder:
        return HashEmbedder()


class _ReverseRanker:
    """Deliberately wrong: orders by ascending similarity."""

    def rank(self, query, candidates, now):
        from mcp_memory_core import ScoredCandidate

        scored = [ScoredCandidate(c, -(c.vector_similarity or 0.0)) for c in candidates]
        return sorted(scored, key=lambda s: -s.score)


def test_ranker_suite_catches_a_wrong_ranker():
    suite = RankerConformance()
    with pytest.raises(AssertionError):
        suite.test_higher_similarity_wins_all_else_equal(_ReverseRanker())


def test_override_guard_catches_silent_override():
    class Sneaky(RankerConformance):
        def test_deterministic(self, ranker):  # overrides without xfail
            pass

    with pytest.raises(AssertionError, match="without xfail"):
        Sneaky().test_standard_tests_not_overridden_silently()


def test_override_guard_accepts_xfail_override():
    class Honest(RankerConformance):
        @pytest.mark.xfail(reason="documented gap")
        def test_deterministic(self, ranker):
            raise AssertionError

    Honest().test_standard_tests_not_overridden_silently()


@pytest.mark.parametrize("suite", [EmbedderConformance, RankerConformance, StoreConformance])
def test_every_suite_test_has_troubleshooting(suite):
    assert troubleshooting_documented(suite) == []
