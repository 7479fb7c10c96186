"""The example ranker passes the public conformance suite, and diversifies."""

import pytest
from mcp_memory_ranker_mmr import MMRRanker, jaccard, words

from mcp_memory_testing import RankerConformance, make_candidate
from mcp_memory_testing.ranker_suite import NOW


class TestMMRConformance(RankerConformance):
    @pytest.fixture
    def ranker(self):
        return MMRRanker()


def test_near_repeat_is_pushed_below_a_different_result():
    first = make_candidate("the deploy runs on tuesday mornings", 0.90)
    repeat = make_candidate("the deploy runs on tuesday mornings too", 0.89)
    different = make_candidate("rollbacks need the on-call engineer", 0.80)
    ranked = MMRRanker(diversity=0.3).rank("deploy", [first, repeat, different], NOW)
    assert [s.candidate for s in ranked] == [first, different, repeat]
    assert ranked[2].parts["redundancy"] > 0.8


def test_zero_diversity_is_plain_similarity():
    a, b, c = (make_candidate("same words", s) for s in (0.5, 0.9, 0.7))
    assert [s.candidate for s in MMRRanker(diversity=0.0).rank("q", [a, b, c], NOW)] == [b, c, a]


def test_jaccard():
    assert jaccard(words("a b c"), words("b c d")) == pytest.approx(2 / 4)
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_bad_diversity():
    with pytest.raises(ValueError, match="diversity"):
        MMRRanker(diversity=1.5)


def test_beyond_the_pool_follows_relevance_below_the_pool():
    candidates = [make_candidate(f"note {i} words", 0.9 - i * 0.01) for i in range(8)]
    ranked = MMRRanker(diversity=0.3, pool=3).rank("q", candidates, NOW)
    assert [s.candidate for s in ranked[3:]] == candidates[3:]
    assert max(s.score for s in ranked[3:]) <= min(s.score for s in ranked[:3])
