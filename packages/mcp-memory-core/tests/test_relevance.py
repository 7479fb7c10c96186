"""The relevance floor: what clears it, the background it measures against, and the engine's use."""

import dataclasses

import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_core.relevance import ALL_MINILM_L6_V2, BACKGROUND_K, BACKGROUND_PRIOR, RelevanceFloor
from mcp_memory_rankers import HybridRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock, make_candidate

FLOOR = RelevanceFloor(min_similarity=0.40, min_standout=0.14, min_keyword_similarity=0.30)


def crowd(similarities):
    return [make_candidate(f"m{i}", s, vector_rank=i + 1) for i, s in enumerate(similarities)]


def test_background_is_the_median_of_the_nearest_padded_with_the_prior():
    assert FLOOR.background(crowd([0.5] * 40)) == pytest.approx(0.5)
    assert FLOOR.background(crowd([0.9, 0.8])) == pytest.approx(BACKGROUND_PRIOR)  # a tiny store
    assert FLOOR.background(crowd([0.3] * BACKGROUND_K + [0.9] * 10)) == pytest.approx(0.3)  # the nearest 32
    assert FLOOR.background(crowd([0.6] * 20 + [0.2] * 20)) == pytest.approx(0.6)
    keyword_only = [make_candidate("k", None, keyword_score=3.0, keyword_rank=1)]
    assert FLOOR.background(keyword_only) == pytest.approx(BACKGROUND_PRIOR)


@pytest.mark.parametrize(
    ("similarity", "background", "clears"),
    [
        (0.45, 0.60, True),  # clearly about the query, however close the rest
        (0.35, 0.15, True),  # stands out of a store of unrelated facts: a paraphrase
        (0.30, 0.20, False),  # the best of many equally distant memories: an off-topic question
        (0.39, 0.26, False),
        (None, 0.10, False),  # found by keywords only
    ],
)
def test_a_candidate_clears_by_similarity_or_by_standing_out(similarity, background, clears):
    candidate = make_candidate("x", similarity)
    assert FLOOR.clears(candidate, {candidate.memory.id: candidate}, background) is clears


@pytest.mark.parametrize(("similarity", "clears"), [(0.32, True), (0.28, False), (None, False)])
def test_a_shared_word_lowers_the_bar(similarity, clears):
    candidate = make_candidate("Biscuit learned to fetch", similarity, keyword_score=2.5, keyword_rank=1)
    assert FLOOR.clears(candidate, {candidate.memory.id: candidate}, background=0.25) is clears


def test_a_reply_clears_through_the_question_it_answers():
    question = make_candidate("Mel: did you go camping?", 0.55)
    reply = dataclasses.replace(
        make_candidate("Caroline: yes, loved it", 0.10), previous_id=question.memory.id
    )
    by_id = {c.memory.id: c for c in (question, reply)}
    assert FLOOR.clears(reply, by_id, background=0.3)
    same_speaker = dataclasses.replace(make_candidate("Mel: and then?", 0.10), previous_id=question.memory.id)
    assert not FLOOR.clears(same_speaker, {**by_id, same_speaker.memory.id: same_speaker}, background=0.3)
    assert not FLOOR.clears(
        reply, {reply.memory.id: reply}, background=0.3
    )  # its question is not a candidate


def test_the_engine_holds_back_what_does_not_clear_and_says_so():
    # Hashed bag-of-words vectors are not MiniLM's cosine scale: a floor for them.
    floor = RelevanceFloor(min_similarity=0.7, min_standout=0.5, min_keyword_similarity=0.7)
    engine = MemoryEngine(
        InMemoryStore(), HashEmbedder(), HybridRanker(), clock=TickingClock(), relevance_floor=floor
    )
    for i in range(40):
        engine.store_memory(f"note {i} about lunch orders and printer paper")
    engine.store_memory("the quarterly planning offsite is in Lisbon")
    found = engine.search("quarterly planning offsite Lisbon", limit=5)
    assert [h.memory.content for h in found.hits][:1] == ["the quarterly planning offsite is in Lisbon"]
    assert found.floor is not None and (found.floor["min_similarity"], found.floor["min_standout"]) == (
        0.7,
        0.5,
    )
    nothing = engine.search("volcano eruption seismology", limit=5)
    assert nothing.hits == [] and nothing.below_floor > 0
    engine.relevance_floor = None
    unfloored = engine.search("volcano eruption seismology", limit=5)
    assert len(unfloored.hits) == 5 and unfloored.floor is None and unfloored.below_floor == 0


def test_the_best_ranked_memory_is_never_hidden_above_its_own_bar():
    """A paraphrase sharing no word with its memory can sit as low as the crowd: the ranker's best is
    still returned (at min_best_similarity), the rest of the crowd is not, and below the bar nothing is."""
    from mcp_memory_core import ScoredCandidate

    floor = dataclasses.replace(FLOOR, min_best_similarity=0.15)
    paraphrased = make_candidate("The user runs the Porto half-marathon", 0.24, vector_rank=1)
    others = [make_candidate(f"fact {i}", 0.22, vector_rank=2 + i) for i in range(BACKGROUND_K)]
    ranked = [
        ScoredCandidate(candidate=c, score=1.0 - i / 100, parts={})
        for i, c in enumerate([paraphrased, *others])
    ]
    kept, _ = floor.kept([paraphrased, *others], ranked)
    assert [s.candidate for s in kept] == [paraphrased]
    assert FLOOR.kept([paraphrased, *others], ranked)[0] == []  # without the bar: "nothing stored"
    weak = [dataclasses.replace(c, vector_similarity=0.1) for c in (paraphrased, *others)]
    assert (
        floor.kept(weak, [dataclasses.replace(s, candidate=c) for s, c in zip(ranked, weak, strict=True)])[0]
        == []
    )


@pytest.mark.parametrize(("similarity", "clears"), [(0.36, True), (0.32, False)])
def test_minilm_asks_a_shared_word_to_come_with_some_meaning(similarity, clears):
    # On a store of short facts a word in common with a memory only 0.30-0.35 similar is mostly an
    # off-topic question's near miss ("Which port does Meilisearch listen on?" against what the store
    # says about Meilisearch), rarely the answer: docs/benchmarks.md, "Relevance floor".
    candidate = make_candidate(
        "Meilisearch indexes the product catalogue", similarity, keyword_score=2.5, keyword_rank=1
    )
    assert ALL_MINILM_L6_V2.clears(candidate, {candidate.memory.id: candidate}, background=0.25) is clears


def test_below_the_best_a_memory_needs_the_extra_similarity_whichever_clause_clears_it():
    """In a small store of facts the background is near zero, so a memory 0.2 similar stands out:
    an off-topic question would get a second and third weak result beside the first. Below the
    ranker's best, a memory needs ``min_extra_similarity`` (a reply: its own, or its question's)."""
    from mcp_memory_core import ScoredCandidate

    floor = dataclasses.replace(FLOOR, min_best_similarity=0.20, min_extra_similarity=0.30)
    best = make_candidate("The build server runs Node 20", 0.24, vector_rank=1)
    near = make_candidate("Deploys go through the build server", 0.32, vector_rank=2)
    weak = make_candidate("The CI cache key hashes uv.lock", 0.295, vector_rank=3)
    question = make_candidate("Mel: which Node does the build server run?", 0.45, vector_rank=4)
    reply = dataclasses.replace(
        make_candidate("Caroline: twenty", 0.05, vector_rank=5), previous_id=question.memory.id
    )
    candidates = [best, near, weak, question, reply]
    ranked = [ScoredCandidate(candidate=c, score=1.0 - i / 10, parts={}) for i, c in enumerate(candidates)]
    kept, background = floor.kept(candidates, ranked)
    assert background == pytest.approx(BACKGROUND_PRIOR)
    # weak stands out of the background (0.145 above it) but is below 0.30; the best needs only 0.20
    assert [s.candidate for s in kept] == [best, near, question, reply]
    assert [s.candidate for s in FLOOR.kept(candidates, ranked)[0]] == [near, weak, question, reply]
    assert floor.describe(background)["min_extra_similarity"] == 0.30
