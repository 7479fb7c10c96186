"""Every first-party ranker passes the conformance suite, and each does what its name says."""

from datetime import timedelta

import pytest

from mcp_memory_core import Memory, RankerSpec
from mcp_memory_core.plugins import plugin_manager_from_settings
from mcp_memory_rankers import (
    HybridRanker,
    HybridSettings,
    ImportanceRanker,
    RecencyRanker,
    RecencySettings,
)
from mcp_memory_rankers.hybrid import names_exact_string
from mcp_memory_rankers.recency import context_overlap, strength
from mcp_memory_testing import RankerConformance, make_candidate
from mcp_memory_testing.ranker_suite import NOW


class TestHybridLinear(RankerConformance):
    @pytest.fixture
    def ranker(self):
        return HybridRanker(HybridSettings(method="linear"))


class TestHybridRRF(RankerConformance):
    @pytest.fixture
    def ranker(self):
        return HybridRanker(HybridSettings(method="rrf"))


class TestRecency(RankerConformance):
    @pytest.fixture
    def ranker(self):
        return RecencyRanker(context={"project": "demo"})


class TestImportance(RankerConformance):
    @pytest.fixture
    def ranker(self):
        return ImportanceRanker()


NO_CONTEXT = {"neighbour_weight": 0, "neighbour_keyword_weight": 0, "thread_weight": 0, "date_weight": 0}


def test_hybrid_keyword_lifts_an_exact_match():
    semantic = make_candidate("about the same error", 0.60, vector_rank=1)
    exact = make_candidate("has the error E-20417", 0.55, vector_rank=2, keyword_score=7.0, keyword_rank=1)
    for method in ("linear", "rrf"):
        ranked = HybridRanker(HybridSettings(method=method)).rank("error E-20417", [semantic, exact], NOW)
        assert ranked[0].candidate is exact, method
        assert set(ranked[0].parts) == {"vector", "keyword", "neighbour", "thread", "date", "question"}
        assert ranked[0].score == pytest.approx(sum(ranked[0].parts.values()))


def test_hybrid_linear_scales_keyword_per_query():
    a = make_candidate("a", 0.5, keyword_score=10.0, keyword_rank=1)
    b = make_candidate("b", 0.5, keyword_score=5.0, keyword_rank=2)
    settings = HybridSettings(vector_weight=0.7, keyword_weight=0.3, facts_exact_only=False, **NO_CONTEXT)
    ranked = HybridRanker(settings).rank("q", [b, a], NOW)
    assert [s.score for s in ranked] == pytest.approx([0.35 + 0.3 * 10 / 11, 0.35 + 0.3 * 5 / 11])


def test_among_short_facts_only_an_exact_string_in_the_query_lets_words_count():
    """On short facts the vectors single the memory out (a focused query): a word in common, a name
    included, is left to them ("Which Rust tool ..." must not lift the fact that merely says Rust);
    a number or an identifier, which an embedding reads poorly, still counts. A conversation's
    turns keep their keyword evidence."""
    right = make_candidate("Tern supports Linux and macOS", 0.292, vector_rank=1)
    named = make_candidate("Tern is a Rust CLI", 0.289, vector_rank=2, keyword_score=6.0, keyword_rank=1)
    ranked = HybridRanker().rank("Which systems does their Rust tool run on?", [named, right], NOW)
    assert ranked[0].candidate is right and ranked[1].parts["keyword"] == 0
    exact = make_candidate("Tern 0.4 adds Windows", 0.289, vector_rank=2, keyword_score=6.0, keyword_rank=1)
    ranked = HybridRanker().rank("Does Tern 0.4 run on Windows?", [exact, right], NOW)
    assert ranked[0].candidate is exact and ranked[0].parts["keyword"] > 0
    turn = make_candidate("Jon: Tern is my Rust CLI", 0.289, vector_rank=2, keyword_score=6.0, keyword_rank=1)
    ranked = HybridRanker().rank("Which systems does their Rust tool run on?", [turn, right], NOW)
    assert {s.candidate.memory.id: s.parts["keyword"] for s in ranked}[turn.memory.id] > 0
    assert names_exact_string("port 8443") and names_exact_string("acct_1N8xQ2LkT5")
    assert (
        names_exact_string("uv.lock") and names_exact_string("src/app") and names_exact_string("maxRetries")
    )
    assert not names_exact_string("Which Rust tool does the API use?")


def test_a_weak_query_among_facts_is_ranked_by_meaning_not_a_chance_word():
    """A paraphrase sharing no word with its fact has a weak best match, and its nearest memories
    lie as close (the query is not focused): a word the query shares with another fact by chance
    still does not count. A turn's words do (a conversation's turns all lie close)."""
    right = make_candidate("CLAUDE.md is kept under 100 lines", 0.200, vector_rank=1)
    chance = make_candidate(
        "Petra attaches a recording to the bugs she files",
        0.190,
        vector_rank=2,
        keyword_score=6.0,
        keyword_rank=1,
    )
    ranker = HybridRanker(HybridSettings(**NO_CONTEXT))
    assert not ranker._focused([right, chance], 0.200)
    ranked = ranker.rank("How long may the assistant instruction file get?", [chance, right], NOW)
    assert ranked[0].candidate is right and ranked[1].parts["keyword"] == 0
    turn = make_candidate(
        "Ann: the bugs she files come with a recording",
        0.190,
        vector_rank=2,
        keyword_score=6.0,
        keyword_rank=1,
    )
    ranked = ranker.rank("How long may the assistant instruction file get?", [turn, right], NOW)
    assert {s.candidate.memory.id: s.parts["keyword"] for s in ranked}[turn.memory.id] > 0


def test_a_facts_dropped_keyword_evidence_does_not_set_the_scale_of_a_turns():
    """In a store of facts and conversations, a focused query without an exact string ranks the
    facts by meaning; their keyword scores must not shrink the turns' keyword evidence either."""
    fact = make_candidate("Tern is a Rust CLI", 0.60, vector_rank=1, keyword_score=9.0, keyword_rank=1)
    turn = make_candidate("Jon: my Rust tool is Tern", 0.58, vector_rank=2, keyword_score=3.0, keyword_rank=2)
    ranked = HybridRanker(HybridSettings(**NO_CONTEXT)).rank(
        "Which Rust tool does Jon use?", [fact, turn], NOW
    )
    parts = {s.candidate.memory.id: s.parts["keyword"] for s in ranked}
    assert parts[fact.memory.id] == 0
    gate = (0.58 / 0.60) ** HybridSettings().focus_gate_power
    assert parts[turn.memory.id] == pytest.approx(0.3 * 3.0 / (3.0 + 1.0) * gate)  # scaled by its own best


def test_hybrid_weak_keyword_matches_do_not_outrank_meaning():
    meaning = make_candidate("the paraphrase", 0.62, vector_rank=1)
    chance = make_candidate("shares a common word", 0.50, vector_rank=2, keyword_score=0.01, keyword_rank=1)
    ranked = HybridRanker().rank("q", [chance, meaning], NOW)
    assert ranked[0].candidate is meaning


def test_hybrid_weights_from_environment(monkeypatch):
    monkeypatch.setenv("MCP_MEMORY_HYBRID_METHOD", "rrf")
    monkeypatch.setenv("MCP_MEMORY_HYBRID_K", "60")
    assert HybridSettings().method == "rrf" and HybridSettings().k == 60


def test_recency_strength_decays_and_access_boosts():
    fresh = Memory(content="x", created_at=NOW)
    week_old = Memory(content="x", created_at=NOW - timedelta(days=7))
    accessed = Memory(content="x", created_at=NOW - timedelta(days=7), access_count=3)
    assert strength(fresh, NOW, 0.95, 1.1) == pytest.approx(1.0)
    assert strength(week_old, NOW, 0.95, 1.1) == pytest.approx(0.95**7)
    assert strength(accessed, NOW, 0.95, 1.1) == pytest.approx(min(1.0, 0.95**7 * 1.1**3))


def test_recency_prefers_newer_when_similarity_ties():
    old = make_candidate("same", 0.7, age_days=60)
    new = make_candidate("same", 0.7, age_days=1)
    ranked = RecencyRanker().rank("q", [old, new], NOW)
    assert ranked[0].candidate is new
    assert ranked[0].parts["recency"] == pytest.approx(0.3 * 0.95**1)


def test_recency_weights_are_settable():
    settings = RecencySettings(similarity_weight=1.0, recency_weight=0.0, context_weight=0.0)
    old_close = make_candidate("a", 0.9, age_days=300)
    new_far = make_candidate("b", 0.5, age_days=0)
    assert RecencyRanker(settings).rank("q", [new_far, old_close], NOW)[0].candidate is old_close


def test_context_overlap_counts_shared_keys():
    memory = Memory(content="x", metadata={"context": {"project": "api", "platform": "linux", "cwd": "/a"}})
    assert context_overlap(memory, {"project": "api", "platform": "darwin"}) == 0.5
    assert context_overlap(memory, {}) == 0.0
    assert context_overlap(Memory(content="x"), {"project": "api"}) == 0.0


def test_importance_lifts_important_memories():
    minor = make_candidate("a", 0.62, importance=0.0)
    major = make_candidate("b", 0.60, importance=1.0)
    ranked = ImportanceRanker().rank("q", [minor, major], NOW)
    assert ranked[0].candidate is major


def test_all_rankers_are_registered():
    pm = plugin_manager_from_settings()
    for name in ("similarity", "hybrid", "recency", "importance"):
        assert isinstance(pm.ranker(name), RankerSpec)
        assert pm.ranker(name).factory(None) is not None


def _facts(word_match_similarity: float, background: float, speaker: str = "") -> list:
    """A query's candidates: the best match by meaning (no shared word), a memory sharing an ordinary
    word with the query, and 30 others at ``background`` similarity; turns of ``speaker`` if given."""
    said = f"{speaker}: " if speaker else ""
    best = make_candidate(f"{said}The user is red-green colour-blind", 0.36, vector_rank=1)
    shares_word = make_candidate(
        f"{said}Tailwind was picked over Bootstrap",
        word_match_similarity,
        vector_rank=2,
        keyword_score=4.0,
        keyword_rank=1,
    )
    rest = [make_candidate(f"{said}fact {i}", background, vector_rank=3 + i) for i in range(30)]
    return [best, shares_word, *rest]


def test_a_shared_word_does_not_outrank_meaning_among_facts():
    """Short facts (the background far below the best match): a word in common counts only for a
    memory nearly as close by meaning as the best."""
    candidates = _facts(word_match_similarity=0.29, background=0.15)
    ranked = HybridRanker().rank("pick a chart palette for them", candidates, NOW)
    assert ranked[0].candidate.memory.content.startswith("The user is red-green")


def test_keywords_still_count_where_the_vectors_cannot_tell_memories_apart():
    """Conversation turns (everything close to the query): the shared word decides."""
    candidates = _facts(word_match_similarity=0.33, background=0.32, speaker="Ann")
    ranked = HybridRanker().rank("pick a chart palette for them", candidates, NOW)
    assert ranked[0].candidate.memory.content.startswith("Ann: Tailwind")
