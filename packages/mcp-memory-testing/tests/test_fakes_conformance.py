"""The fakes pass their own suites: the suites can pass, and the reference implementations are right."""

import pkgutil
import sys

import pytest
from _pytest.assertion.rewrite import AssertionRewritingHook

from mcp_memory_core import ScoredCandidate
from mcp_memory_testing import (
    EmbedderConformance,
    FailingReranker,
    HashEmbedder,
    RankerConformance,
    RerankerConformance,
    ReversingReranker,
    StoreConformance,
    TokenTableConformance,
    store_suite,
)
from mcp_memory_testing.guard import hidden_tests, troubleshooting_documented


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


@pytest.mark.parametrize(
    "suite",
    [EmbedderConformance, RankerConformance, RerankerConformance, StoreConformance, TokenTableConformance],
)
def test_every_suite_test_has_troubleshooting(suite):
    assert troubleshooting_documented(suite) == []


@pytest.mark.parametrize(
    "suite",
    [EmbedderConformance, RankerConformance, RerankerConformance, StoreConformance, TokenTableConformance],
)
def test_no_suite_test_is_hidden_by_another(suite):
    assert hidden_tests(suite) == []


def test_hidden_tests_names_a_test_two_groups_define():
    class Knn:
        def test_order(self):
            pass

        def test_k(self):
            pass

    class Keyword:
        def test_order(self):
            pass

    class Suite(Keyword, Knn):
        pass

    assert hidden_tests(Suite) == ["test_order"]


def test_store_suite_modules_have_their_asserts_rewritten(pytestconfig):
    """A plugin author's failing check shows the values compared, from every module of the store suite."""
    if pytestconfig.getoption("assertmode") != "rewrite":
        pytest.skip("assertion rewriting is off (--assert=plain)")
    names = [store_suite.__name__] + [
        info.name for info in pkgutil.iter_modules(store_suite.__path__, f"{store_suite.__name__}.")
    ]
    assert len(names) > 10
    for name in names:
        assert isinstance(sys.modules[name].__loader__, AssertionRewritingHook), name


class TestReversingReranker(RerankerConformance):
    @pytest.fixture
    def reranker(self) -> ReversingReranker:
        return ReversingReranker()


@pytest.mark.parametrize(
    ("how", "test"),
    [
        ("drop", "test_returns_a_reordering_of_its_input"),
        ("repeat", "test_returns_a_reordering_of_its_input"),
        ("foreign", "test_returns_a_reordering_of_its_input"),
        ("nan", "test_scores_are_finite"),
        ("none", "test_empty_input_gives_empty_result"),
    ],
)
def test_reranker_suite_catches_a_wrong_reranker(how, test):
    with pytest.raises(AssertionError):
        getattr(RerankerConformance(), test)(FailingReranker(how))


def test_reranker_suite_catches_a_reranker_that_forgets_its_part():
    class Forgetful(ReversingReranker):
        def rerank(self, query, ranked, now):
            return [ScoredCandidate(s.candidate, s.score, {}) for s in super().rerank(query, ranked, now)]

    with pytest.raises(KeyError):
        RerankerConformance().test_adds_a_part_named_after_itself(Forgetful())


def test_reranker_suite_catches_a_reranker_that_mutates_its_input():
    class Meddling(ReversingReranker):
        def rerank(self, query, ranked, now):
            for scored in ranked:
                scored.parts["meddled"] = 1.0
            return super().rerank(query, ranked, now)

    with pytest.raises(AssertionError):
        RerankerConformance().test_input_not_mutated(Meddling())


def test_reranker_suite_catches_a_bad_depth():
    with pytest.raises(AssertionError):
        RerankerConformance().test_depth_is_at_least_one(ReversingReranker(depth=0))
