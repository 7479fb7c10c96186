"""The example reranker passes the public conformance suite, and lifts exact phrases, names and ids."""

from collections.abc import Sequence
from datetime import datetime

import pytest
from mcp_memory_reranker_phrases import PhraseReranker, PhrasesSettings, mcp_memory_rerankers, query_cues

from mcp_memory_core import Candidate, MemoryEngine, ScoredCandidate, Settings
from mcp_memory_core.plugins import PluginManager
from mcp_memory_testing import HashEmbedder, InMemoryStore, RerankerConformance, TickingClock, make_candidate
from mcp_memory_testing.ranker_suite import NOW


class TestPhraseRerankerConformance(RerankerConformance):
    @pytest.fixture
    def reranker(self):
        return PhraseReranker()


def ranked(*contents: str) -> list[ScoredCandidate]:
    """The ranker's order: as given, best first."""
    return [
        ScoredCandidate(make_candidate(text, 0.9 - i * 0.01), 0.9 - i * 0.01, {"similarity": 0.9 - i * 0.01})
        for i, text in enumerate(contents)
    ]


def order(query: str, given: list[ScoredCandidate], **options) -> list[str]:
    return [s.candidate.memory.content for s in PhraseReranker(**options).rerank(query, given, NOW)]


def cues(query: str) -> list[tuple[str, str]]:
    return [(cue.text, cue.kind) for cue in query_cues(query)]


def test_it_reads_quoted_phrases_identifiers_and_names_but_not_question_words():
    assert cues('Why does "connection reset by peer" show up in ops/deploy.sh?') == [
        ("connection reset by peer", "phrase"),
        ("ops/deploy.sh", "identifier"),
    ]
    assert cues("Is Caroline's talk on v2.3.1 or PROJ-1234?") == [
        ("Caroline", "name"),
        ("v2.3.1", "identifier"),
        ("PROJ-1234", "identifier"),
    ]
    assert cues("Who maintains the OAuth flow and the API") == [
        ("OAuth", "identifier"),
        ("API", "identifier"),
    ]
    assert cues("What did we decide last Tuesday?") == []
    assert cues("find 'green tea' notes, don't guess") == [("green tea", "phrase")]


def test_a_run_of_names_is_also_a_name_but_punctuation_ends_a_run():
    assert cues("Alice, Bob and Carol flew to New York") == [
        ("Alice", "name"),
        ("Bob", "name"),
        ("Carol", "name"),
        ("New", "name"),
        ("York", "name"),
        ("New York", "name"),
    ]


def test_a_quoted_phrase_lifts_the_memory_that_holds_it_above_paraphrases():
    given = ranked(
        "the server keeps dropping connections from peers",
        "peers reset the connection on the staging server",
        "deploy log: Connection  reset by peer (errno 104)",
    )
    assert (
        order('the error "connection reset by peer"', given)[0]
        == "deploy log: Connection  reset by peer (errno 104)"
    )


def test_an_identifier_lifts_its_own_ticket_over_a_near_twin():
    given = ranked(
        "PROJ-1243: the deploy to staging failed twice on friday",
        "PROJ-12345 is about the billing export",
        "PROJ-1234 fixed: the deploy needed a new token",
    )
    assert order("what happened with PROJ-1234 and the deploy?", given) == [
        "PROJ-1234 fixed: the deploy needed a new token",
        "PROJ-1243: the deploy to staging failed twice on friday",
        "PROJ-12345 is about the billing export",
    ]


def test_names_match_as_written_and_on_word_boundaries():
    given = ranked(
        "Caroline paints landscapes",
        "the annual report from Annie",
        "an unpaid bill from the garage",
        "Ann paints portraits",
        "Bill repaired the garage door",
    )
    assert order("What does Ann paint?", given)[0] == "Ann paints portraits"
    assert order("Did Bill fix the garage?", given)[0] == "Bill repaired the garage door"


def test_a_name_every_candidate_holds_changes_nothing():
    given = ranked(
        "Caroline: I went to the LGBTQ support group yesterday",
        "Caroline: the adoption agency called me back",
        "Caroline: I love painting sunsets",
    )
    texts = [s.candidate.memory.content for s in given]
    assert order("What did Caroline say about the adoption agency?", given) == texts


def test_a_rarer_cue_outweighs_a_common_one():
    given = ranked(
        "Melanie: we went camping in the mountains",
        "Caroline: the beach was lovely",
        "Caroline: my kids painted all day",
        "Melanie: I painted a sunset",
        "Caroline: the Pride parade was amazing",
        "Caroline: I read a book",
    )
    result = order("What did Melanie do for Pride?", given)
    assert result.index("Caroline: the Pride parade was amazing") < result.index(
        "Melanie: I painted a sunset"
    )
    assert (
        result[0] == "Melanie: we went camping in the mountains"
    )  # both cues' partial lift on top of first place


def test_without_cues_or_weight_the_rankers_order_stays():
    given = ranked("first memory", "second memory", "third memory")
    texts = [s.candidate.memory.content for s in given]
    assert order("what did we decide?", given) == texts
    assert order("PROJ-9 third", ranked("PROJ-9 first", "x", "third"), weight=0.0) == [
        "PROJ-9 first",
        "x",
        "third",
    ]
    result = PhraseReranker().rerank("what did we decide?", given, NOW)
    assert [s.parts["phrases"] for s in result] == [0.0, 0.0, 0.0]
    assert [s.score for s in result] == sorted((s.score for s in result), reverse=True)


def test_every_cue_comes_first_and_half_of_them_rise_half_the_window():
    fillers = [f"note {i} about lunch" for i in range(20)]
    given = ranked(*fillers, "PROJ-7 note about lunch")
    assert order("PROJ-7 lunch", given)[0] == "PROJ-7 note about lunch"  # from last to first
    given = ranked("PROJ-8 note about lunch", *fillers[1:], "PROJ-7 note about lunch")
    assert order("PROJ-7 or PROJ-8 lunch", given).index("PROJ-7 note about lunch") == 10  # from 20


@pytest.mark.parametrize(("options", "message"), [({"weight": 1.5}, "weight"), ({"depth": 0}, "depth")])
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        PhraseReranker(**options)


def test_the_plugin_registers_phrases_with_settings_from_the_environment(monkeypatch):
    monkeypatch.setenv("MCP_MEMORY_PHRASES_DEPTH", "7")
    monkeypatch.setenv("MCP_MEMORY_PHRASES_WEIGHT", "0.25")
    manager = PluginManager()
    manager.register(
        type("P", (), {"mcp_memory_rerankers": staticmethod(mcp_memory_rerankers)}), name="phrases"
    )
    spec = manager.reranker("phrases")
    assert spec.settings_model is PhrasesSettings and "phrases" in spec.description.lower()
    reranker = spec.factory(Settings())
    assert (reranker.name, reranker.depth, reranker.weight, reranker.heavy) == ("phrases", 7, 0.25, False)


class _Similarity:
    """The smallest ranker: vector similarity (the first-party rankers are not in this venv)."""

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        scored = [
            ScoredCandidate(c, c.vector_similarity or 0.0, {"similarity": c.vector_similarity or 0.0})
            for c in candidates
        ]
        return sorted(scored, key=lambda s: -s.score)


def test_in_a_real_search_it_lifts_the_ticket_the_query_names():
    def engine(*rerankers):
        return MemoryEngine(
            store,
            HashEmbedder(),
            _Similarity(),
            clock=TickingClock(),
            track_access=False,
            rerankers=rerankers,
        )

    store = InMemoryStore()
    plain = engine()
    plain.store_memory("PROJ-1243 the deploy failed on the staging cluster again")
    plain.store_memory("PROJ-1234 fixed with a new token")
    query = "why did the deploy fail on the staging cluster for PROJ-1234"
    assert plain.search(query, limit=1).hits[0].memory.content.startswith("PROJ-1243")
    found = engine(PhraseReranker()).search(query, limit=1)
    assert found.warnings == []
    assert found.hits[0].memory.content == "PROJ-1234 fixed with a new token"
    assert found.hits[0].parts["phrases"] == 1.0 and "similarity" in found.hits[0].parts
