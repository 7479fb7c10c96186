"""Retrieval rules: passages, both channels, filters before the top-k, access statistics, fields."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from mcp_memory_core import InvalidInputError, MemoryEngine, MemoryType
from mcp_memory_core.filters import Filters
from mcp_memory_core.passages import (
    MAX_PASSAGES,
    PASSAGE_DISCOUNT,
    discounted,
    is_two_sentences,
    leading_label,
    split_passages,
)
from mcp_memory_core.protocols import StoreCapabilities
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore


def ids(hits):
    return [h.memory.id for h in hits]


def test_single_sentence_is_one_passage():
    assert split_passages("The user prefers pytest.") == ["The user prefers pytest."]
    assert split_passages("Yes. The user prefers pytest.") == ["Yes. The user prefers pytest."]


def test_several_sentences_become_passages_after_the_whole_text():
    text = "We moved the API to Postgres. Deploys happen on Tuesdays! Who owns billing now?"
    assert split_passages(text) == [
        text,
        "We moved the API to Postgres.",
        "Deploys happen on Tuesdays!",
        "Who owns billing now?",
    ]


def test_a_leading_label_is_carried_into_every_passage():
    text = "Project Atlas: Uses Postgres in production. Deploys happen on Fridays."
    assert split_passages(text)[1:] == [
        "Project Atlas: Uses Postgres in production.",
        "Project Atlas: Deploys happen on Fridays.",
    ]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Caroline: I went to the support group.", "Caroline"),
        ("Project Atlas: uses Postgres.", "Project Atlas"),
        ("This is a long sentence before a colon: and then more.", None),
        ("See https://example.com/a for the docs.", None),
        ("No label here at all.", None),
    ],
)
def test_leading_label(text, label):
    assert leading_label(text) == label


def test_long_text_is_capped_in_windows():
    text = " ".join(f"Sentence number {i} is here." for i in range(100))
    passages = split_passages(text)
    assert passages[0] == text and 2 <= len(passages) - 1 <= MAX_PASSAGES
    assert " ".join(passages[1:]) == text  # nothing dropped, only merged


def test_a_sentence_of_a_long_memory_is_found_by_its_own_words(engine):
    long = engine.store_memory(
        "Alpha bravo charlie delta echo. Foxtrot golf hotel india juliet. Kilo lima mike november oscar."
    ).memory
    engine.store_memory("papa quebec romeo sierra tango")
    hit = engine.search_memories("kilo lima mike november oscar", limit=1)[0]
    assert hit.memory.id == long.id
    assert hit.similarity == pytest.approx(1.0, abs=1e-5)  # the passage matched exactly


def test_a_sentence_of_a_two_sentence_fact_counts_a_little_less_than_a_whole_fact():
    """One short sentence alone matches loosely: a two-sentence fact found by a sentence counts it
    PASSAGE_DISCOUNT less (never below its whole text); a single sentence, a turn of a conversation
    and a longer memory keep their similarity."""
    two = "Alpha bravo charlie delta. Echo foxtrot golf hotel."
    assert is_two_sentences(two) and not is_two_sentences("Echo foxtrot golf hotel.")
    assert not is_two_sentences(two + " India juliet kilo lima.") and not is_two_sentences("Echo. Foxtrot.")
    assert discounted(0.9, 0.5) == pytest.approx(0.9 - PASSAGE_DISCOUNT)
    assert discounted(0.52, 0.5) == 0.5 and discounted(0.4, 0.5) == 0.4
    for content, expected in [
        (two, 1.0 - PASSAGE_DISCOUNT),
        ("Ann: " + two, 1.0),  # a turn ("Ann: Echo foxtrot golf hotel." is its sentence)
        (two + " India juliet kilo lima.", 1.0),  # three sentences: the sentence is what is found
    ]:
        engine = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker())
        stored = engine.store_memory(content).memory
        query = "Ann: Echo foxtrot golf hotel." if content.startswith("Ann") else "Echo foxtrot golf hotel."
        [hit] = engine.search_memories(query, limit=1)
        assert hit.memory.id == stored.id and hit.similarity == pytest.approx(expected, abs=1e-5), content


def test_a_store_that_cannot_read_its_vectors_back_keeps_the_sentences_similarity():
    class Opaque(InMemoryStore):
        @property
        def capabilities(self) -> StoreCapabilities:
            return StoreCapabilities(keyword_search=True, concurrent_processes=False, read_vectors=False)

    engine = MemoryEngine(Opaque(), HashEmbedder(), SimilarityRanker())
    engine.store_memory("Alpha bravo charlie delta. Echo foxtrot golf hotel.")
    [hit] = engine.search_memories("Echo foxtrot golf hotel.", limit=1)
    assert hit.similarity == pytest.approx(1.0, abs=1e-5)


def test_candidates_carry_both_channels():
    seen = []

    class Spy(SimilarityRanker):
        def rank(self, query, candidates, now):
            seen.extend(candidates)
            return super().rank(query, candidates, now)

    engine = MemoryEngine(InMemoryStore(), HashEmbedder(), Spy())
    target = engine.store_memory("the cobalt kettle whistles").memory
    engine.store_memory("an unrelated note about taxes")
    engine.search_memories("cobalt kettle", limit=2)
    candidate = next(c for c in seen if c.memory.id == target.id)
    assert candidate.vector_rank == 1 and candidate.keyword_rank == 1
    assert candidate.keyword_score > 0 and candidate.vector_similarity > 0


def test_type_tags_importance_are_stored_and_kept_by_update(engine):
    a = engine.store_memory(
        "uses ruff", type="procedural", tags=["python", " lint ", "python"], importance=0.9
    )
    assert (a.memory.type, a.memory.tags, a.memory.importance) == (
        MemoryType.PROCEDURAL,
        ("python", "lint"),
        0.9,
    )
    b = engine.update_memory(a.memory.id, "uses ruff and mypy").memory
    assert (b.type, b.tags, b.importance) == (MemoryType.PROCEDURAL, ("python", "lint"), 0.9)
    c = engine.update_memory(b.id, "uses ruff, mypy", tags=["ci"], importance=0.2, type="semantic").memory
    assert (c.type, c.tags, c.importance) == (MemoryType.SEMANTIC, ("ci",), 0.2)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"type": "dream"}, "type must be one of"),
        ({"tags": [""]}, "non-empty"),
        ({"tags": ["x" * 65]}, "longer than"),
        ({"importance": 1.5}, "from 0 to 1"),
        ({"importance": float("nan")}, "number"),
    ],
)
def test_bad_fields_are_refused(engine, kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        engine.store_memory("content", **kwargs)


def _many(engine):
    made = {}
    for i in range(30):  # near-duplicates of the query that do NOT match the filters below
        engine.store_memory(f"garden tomato harvest notes {i}", type="episodic", tags=["garden"])
    made["proc"] = engine.store_memory(
        "how to prune roses", type="procedural", tags=["garden", "roses"]
    ).memory
    made["sem"] = engine.store_memory(
        "roses like acidic soil", type="semantic", tags=["roses"], metadata={"plot": 3}
    ).memory
    return made


def test_filters_apply_before_the_top_k(engine):
    made = _many(engine)
    hits = engine.search_memories(
        "garden tomato harvest notes", limit=2, filters=Filters.parse(types=["procedural", "semantic"])
    )
    assert set(ids(hits)) == {made["proc"].id, made["sem"].id}
    hits = engine.search_memories(
        "garden tomato harvest notes", limit=5, filters=Filters.parse(tags=["roses"])
    )
    assert set(ids(hits)) == {made["proc"].id, made["sem"].id}
    hits = engine.search_memories(
        "garden", limit=5, filters=Filters.parse(tags=["garden", "roses"], tags_match="all")
    )
    assert ids(hits) == [made["proc"].id]
    hits = engine.search_memories("garden", limit=5, filters=Filters.parse(metadata={"plot": 3}))
    assert ids(hits) == [made["sem"].id]
    assert engine.search_memories("garden", limit=5, filters=Filters.parse(metadata={"plot": "3"})) == []


def test_date_filters(engine):
    old = engine.store_memory("first note").memory
    engine.clock.now += timedelta(days=10)
    new = engine.store_memory("second note").memory
    cut = old.created_at + timedelta(days=5)
    assert ids(engine.search_memories("note", filters=Filters.parse(created_after=cut))) == [new.id]
    assert ids(engine.search_memories("note", filters=Filters.parse(created_before=cut.isoformat()))) == [
        old.id
    ]
    with pytest.raises(InvalidInputError, match="ISO 8601"):
        Filters.parse(created_after="last tuesday")
    with pytest.raises(InvalidInputError, match="earlier"):
        Filters.parse(created_after=cut, created_before=cut)


def test_filters_judge_the_head_not_the_old_wording(engine):
    a = engine.store_memory("lemon tart recipe", tags=["dessert"]).memory
    b = engine.update_memory(a.id, "lemon tart recipe, less sugar", tags=["baking"]).memory
    assert engine.search_memories("lemon tart recipe", filters=Filters.parse(tags=["dessert"])) == []
    assert ids(engine.search_memories("lemon tart recipe", filters=Filters.parse(tags=["baking"]))) == [b.id]


def test_list_with_filters(engine):
    made = _many(engine)
    page = engine.list_memories(filters=Filters.parse(tags=["roses"]))
    assert {m.id for m in page.memories} == {made["proc"].id, made["sem"].id} and page.total == 2


def test_search_counts_accesses(engine):
    target = engine.store_memory("the wifi password is on the fridge").memory
    other = engine.store_memory("completely different words here").memory
    engine.search_memories("wifi password fridge", limit=1)
    engine.search_memories("wifi password fridge", limit=1)
    seen = engine.get_memory(target.id).memory
    assert seen.access_count == 2 and seen.last_accessed is not None
    assert engine.get_memory(other.id).memory.access_count == 0


def test_access_tracking_can_be_off():
    engine = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), track_access=False)
    target = engine.store_memory("kept still").memory
    engine.search_memories("kept still")
    assert engine.get_memory(target.id).memory.access_count == 0


def test_dates_are_timezone_aware():
    assert Filters.parse(created_after="2026-01-02").created_after == datetime(2026, 1, 2, tzinfo=UTC)


def test_what_a_search_ranks_does_not_depend_on_its_limit():
    """An agent asks with limit 5 or 10: it gets the top of what limit=50 ranks, not the top of a
    smaller pool. Here the third best memory is only the 43rd nearest by itself; its conversation's
    prior lifts it, and a pool sized by the limit (4 x 5) never saw it."""
    from mcp_memory_rankers import HybridRanker

    engine = MemoryEngine(InMemoryStore(), HashEmbedder(1024), HybridRanker(), track_access=False)
    engine.store_memory("alpha beta gamma one", thread="talk")
    engine.store_memory("alpha beta gamma two", thread="talk")
    for i in range(40):
        engine.store_memory(f"alpha filler{i}", thread=f"aside-{i}")
    lifted = engine.store_memory("alpha zed yak wombat", thread="talk").memory
    wide = [hit.memory.id for hit in engine.search_memories("alpha beta gamma", limit=50)]
    assert lifted.id in wide[:5]
    assert [hit.memory.id for hit in engine.search_memories("alpha beta gamma", limit=5)] == wide[:5]


class _PlacedEmbedder:
    """Vectors placed by hand: texts starting with "near" lie at cosine 0.9 from the query, anything
    else at 0.5 (a fake whose meaning and words disagree, which a bag of words cannot be)."""

    model_id, dimensions, loaded = "placed-2", 2, True

    def load(self):
        pass

    def _one(self, text):
        if text.startswith("query"):
            return np.array([1.0, 0.0], dtype=np.float32)
        cos = 0.9 if text.startswith("near") else 0.5
        return np.array([cos, (1 - cos * cos) ** 0.5], dtype=np.float32)

    def embed_documents(self, texts):
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, 2), np.float32)

    def embed_query(self, text):
        return self._one("query " + text)


def test_a_memory_only_the_keyword_channel_found_is_ranked_with_its_similarity():
    """Sixty memories nearer by meaning fill the vector channel; the one that shares the query's rare
    word comes from the keyword channel alone. Its similarity is looked up, not taken as unknown: a
    ranker must not read "beyond the vector channel's depth" as "unrelated"."""
    seen = []

    class Spy(SimilarityRanker):
        def rank(self, query, candidates, now):
            seen.extend(candidates)
            return super().rank(query, candidates, now)

    engine = MemoryEngine(InMemoryStore(), _PlacedEmbedder(), Spy(), track_access=False)
    for i in range(60):
        engine.store_memory(f"near filler number {i}")
    target = engine.store_memory("the zulu memo").memory
    engine.search_memories("zulu", limit=5)
    candidate = next(c for c in seen if c.memory.id == target.id)
    assert candidate.vector_rank is None and candidate.keyword_rank == 1
    assert candidate.vector_similarity == pytest.approx(0.5, abs=1e-5)
    assert candidate.matched_id == target.id
