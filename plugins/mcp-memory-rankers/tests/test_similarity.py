import pytest

from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import RankerConformance, make_candidate
from mcp_memory_testing.ranker_suite import NOW


class TestSimilarityRankerConformance(RankerConformance):
    @pytest.fixture
    def ranker(self):
        return SimilarityRanker()


def test_orders_by_similarity_only():
    old_close = make_candidate("old but close", 0.9, age_days=400, importance=0.0)
    new_far = make_candidate("new but far", 0.2, age_days=0, importance=1.0, access_count=50)
    ranked = SimilarityRanker().rank("q", [new_far, old_close], NOW)
    assert [s.candidate for s in ranked] == [old_close, new_far]
    assert ranked[0].score == pytest.approx(0.9)
    assert ranked[0].parts == {"similarity": pytest.approx(0.9)}


def test_keyword_only_candidates_rank_last():
    keyword_only = make_candidate("kw", None, keyword_score=9.0, keyword_rank=1)
    vector = make_candidate("vec", -0.5)
    ranked = SimilarityRanker().rank("q", [keyword_only, vector], NOW)
    assert ranked[0].candidate is vector
