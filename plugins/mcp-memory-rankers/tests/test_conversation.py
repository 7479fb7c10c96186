"""The hybrid ranker reads a memory in its conversation: the previous turn, its thread, its date."""

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from mcp_memory_core.query_dates import TimeSpan
from mcp_memory_core.turns import names_someone
from mcp_memory_rankers import HybridRanker, HybridSettings
from mcp_memory_rankers.conversation import ContextWeights, date_closeness
from mcp_memory_testing import make_candidate
from mcp_memory_testing.ranker_suite import NOW


def linked(*candidates):
    """Chain candidates as consecutive turns of one thread."""
    out = list(candidates)
    for i, c in enumerate(out):
        out[i] = dataclasses.replace(
            c,
            previous_id=candidates[i - 1].memory.id if i else None,
            next_id=candidates[i + 1].memory.id if i + 1 < len(candidates) else None,
        )
    return out


def test_a_reply_borrows_from_the_question_it_answers():
    question = make_candidate("Mel: did you go camping in the mountains?", 0.70, thread="s1")
    reply = make_candidate("Caroline: yes! the kids loved it", 0.30, thread="s1")
    stranger = make_candidate("Caroline: mountains are pretty", 0.40, thread="s2")
    question, reply = linked(question, reply)
    ranked = HybridRanker(HybridSettings(thread_weight=0)).rank(
        "camping trip", [stranger, reply, question], NOW
    )
    by_id = {s.candidate.memory.id: s for s in ranked}
    assert by_id[reply.memory.id].parts["neighbour"] == pytest.approx(0.3 * 0.7 * 0.70)
    assert by_id[stranger.memory.id].parts["neighbour"] == 0
    assert [s.candidate.memory.id for s in ranked].index(reply.memory.id) < [
        s.candidate.memory.id for s in ranked
    ].index(stranger.memory.id)
    alone = HybridRanker(HybridSettings(neighbour_weight=0, thread_weight=0)).rank(
        "camping trip", [stranger, reply, question], NOW
    )
    assert alone[1].candidate.memory.id == stranger.memory.id  # without its question, the reply is last


def test_a_reply_to_a_statement_borrows_no_score_but_its_keywords():
    """Only an answer is about what the turn before it said: "Caroline: that sounds lovely! how are
    the kids?" after a statement moves on, so it borrows nothing of the statement's score; the
    statement's keyword evidence still counts, down-weighted, as its own."""
    statement = make_candidate("Mel: we went camping in the mountains.", 0.7, keyword_score=8.0, thread="s")
    reply = make_candidate("Caroline: that sounds lovely! how are the kids?", 0.3, thread="s")
    statement, reply = linked(statement, reply)
    scored = {s.candidate.memory.id: s for s in HybridRanker().rank("camping", [statement, reply], NOW)}
    assert scored[reply.memory.id].parts["neighbour"] == 0
    assert scored[reply.memory.id].parts["keyword"] > 0


def test_the_previous_turns_keywords_count_for_the_reply():
    question = make_candidate("Mel: did you see the aurora?", 0.5, keyword_score=8.0, thread="s1")
    reply = make_candidate("Caroline: yes, green and purple", 0.5, thread="s1")
    question, reply = linked(question, reply)
    settings = HybridSettings(neighbour_weight=0, thread_weight=0, date_weight=0)
    scored = {s.candidate.memory.id: s for s in HybridRanker(settings).rank("aurora", [question, reply], NOW)}
    assert scored[reply.memory.id].parts["keyword"] == pytest.approx(0.3 * (0.3 * 8.0) / (8.0 + 1.0))
    off = HybridRanker(settings.model_copy(update={"neighbour_keyword_weight": 0}))
    assert {s.candidate.memory.id: s for s in off.rank("aurora", [question, reply], NOW)}[
        reply.memory.id
    ].parts["keyword"] == 0


def test_a_thread_with_several_matches_rises_together():
    best_alone = make_candidate("a lone good match", 0.60, thread="lone")
    pair = [
        make_candidate("half of a good pair", 0.55, thread="pair"),
        make_candidate("other half", 0.55, thread="pair"),
    ]
    loose = make_candidate("no thread at all", 0.60)
    ranked = HybridRanker(HybridSettings(neighbour_weight=0)).rank("q", [best_alone, loose, *pair], NOW)
    parts = {s.candidate.memory.id: s.parts["thread"] for s in ranked}
    assert parts[pair[0].memory.id] == pytest.approx(0.3 * 0.7 * 0.55)  # mean of its two best
    assert parts[best_alone.memory.id] == pytest.approx(0.3 * 0.7 * 0.60 / 2)  # a thread of one
    assert parts[loose.memory.id] == parts[best_alone.memory.id]  # no thread: a thread of one
    assert ranked[0].candidate.memory.thread == "pair"


def test_facts_one_session_stored_are_not_one_conversation():
    """An agent's unrelated facts share its MCP session's default thread: a strong match among them
    must not lift its neighbours in storage above a better match from another session."""
    session = "mcp-session:0b3f6c1e-0000-4000-8000-000000000001"
    other = "mcp-session:0b3f6c1e-0000-4000-8000-000000000002"
    strong = make_candidate("The user's shell is fish", 0.80, thread=session)
    unrelated = make_candidate("Invoices go out on the 1st", 0.30, thread=session)
    better = make_candidate("Standups are at 9:30", 0.35, thread=other)
    ranked = HybridRanker(HybridSettings(neighbour_weight=0)).rank("q", [strong, unrelated, better], NOW)
    order = [s.candidate.memory.id for s in ranked]
    assert order.index(better.memory.id) < order.index(unrelated.memory.id)
    # a thread the client named is a conversation, and so are turns with speakers in a session's thread
    named = [make_candidate(text, sim, thread="standup-notes") for text, sim in (("a", 0.8), ("b", 0.3))]
    turns = [make_candidate(text, sim, thread=session) for text, sim in (("Mel: a", 0.8), ("Ana: b", 0.3))]
    for pair in (named, turns):
        parts = {s.candidate.memory.id: s.parts["thread"] for s in HybridRanker().rank("q", pair, NOW)}
        assert parts[pair[0].memory.id] == parts[pair[1].memory.id] > 0
    # facts under headings in a session's thread are not turns: each is a thread of one
    headed = [
        make_candidate(text, sim, thread=session)
        for text, sim in (("The freshness SLO: 99% in 5 minutes", 0.8), ("Health checks: /healthz", 0.3))
    ]
    parts = {s.candidate.memory.id: s.parts["thread"] for s in HybridRanker().rank("q", headed, NOW)}
    assert parts[headed[1].memory.id] < parts[headed[0].memory.id]


@pytest.mark.parametrize(
    ("label", "speaks"),
    [
        ("Caroline", True),
        ("Dr. Okafor", True),
        ("Mary Ann Evans", True),
        ("assistant", True),
        ("User", True),
        ("Health checks", False),
        ("The freshness SLO", False),
        ("Decision", False),
        ("Meeting notes 2024-03-12", False),
        ("GKE maintenance window", False),
        ("Pipelines must be idempotent", False),
    ],
)
def test_a_label_is_a_speaker_when_it_reads_as_a_name(label, speaks):
    assert names_someone(label) is speaks


def test_a_date_in_the_query_lifts_memories_of_that_time():
    may = make_candidate("Mel: we went to the beach", 0.5, occurred_at=datetime(2023, 5, 20, tzinfo=UTC))
    june = make_candidate("Mel: we went to the beach", 0.5, occurred_at=datetime(2023, 6, 4, tzinfo=UTC))
    july = make_candidate("Mel: we went to the beach", 0.5, occurred_at=datetime(2023, 7, 30, tzinfo=UTC))
    ranker = HybridRanker()
    for query, first in (
        ("beach in May 2023", may),
        ("beach on 4 June, 2023", june),
        ("beach in July", july),
    ):
        ranked = ranker.rank(query, [may, june, july], NOW)
        assert ranked[0].candidate is first, query
        assert ranked[0].parts["date"] == pytest.approx(0.3)
    undated = ranker.rank("beach trip", [may, june, july], NOW)
    assert all(s.parts["date"] == 0 for s in undated)


def test_last_week_counts_from_the_newest_memory_not_from_today():
    newest = datetime(2023, 8, 16, 12, tzinfo=UTC)  # a Wednesday
    week_before = make_candidate(
        "John: the fundraiser went well", 0.5, occurred_at=newest - timedelta(days=7)
    )
    latest = make_candidate("John: quiet day", 0.5, occurred_at=newest)
    ranked = HybridRanker().rank("what happened last week?", [latest, week_before], NOW)
    assert ranked[0].candidate is week_before and ranked[0].parts["date"] == pytest.approx(0.3)


def test_date_closeness_fades_faster_before_than_after():
    span = TimeSpan(datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))
    weights = ContextWeights()
    assert date_closeness([span], datetime(2023, 5, 15, tzinfo=UTC), weights) == 1.0
    after = date_closeness([span], datetime(2023, 6, 4, tzinfo=UTC), weights)
    before = date_closeness([span], datetime(2023, 4, 28, tzinfo=UTC), weights)
    assert 0 < before < after < 1


@pytest.mark.parametrize(
    ("first", "second", "borrows"),
    [
        ("Mel: did you go camping in the mountains?", "Caroline: yes! the kids loved it", True),
        ("Mel: we went camping in the mountains.", "Mel: the kids loved it", False),  # same speaker
        ("The project deploys to the mountains cluster", "The user likes tea", False),  # facts, no speakers
        # facts filed under headings: a topic is not a speaker, and two headings are not two people
        ("Health checks: /healthz is the liveness probe?", "The freshness SLO: 99% within 5 minutes", False),
        ("Decision: deploys stay on Fridays?", "Code style: f-strings for formatting", False),
    ],
)
def test_only_a_turn_by_someone_else_is_a_reply(first, second, borrows):
    question, reply = linked(make_candidate(first, 0.7, thread="s"), make_candidate(second, 0.3, thread="s"))
    scored = {s.candidate.memory.id: s for s in HybridRanker().rank("camping", [question, reply], NOW)}
    assert (scored[reply.memory.id].parts["neighbour"] > 0) is borrows


def test_a_role_in_metadata_is_a_speaker():
    question = make_candidate("did you go camping?", 0.7, thread="c", metadata={"role": "user"})
    reply = make_candidate("yes, in June", 0.3, thread="c", metadata={"role": "assistant"})
    question, reply = linked(question, reply)
    scored = {s.candidate.memory.id: s for s in HybridRanker().rank("camping", [question, reply], NOW)}
    assert scored[reply.memory.id].parts["neighbour"] > 0


def test_a_turn_that_only_asks_ranks_below_the_answer_it_is_as_close_to():
    """ "When are you opening the studio?" names the studio's opening without saying anything about
    it: at the same similarity, the turn that says something ranks first."""
    asking = make_candidate("Gina: When are you opening the studio?", 0.6, thread="s")
    telling = make_candidate("Jon: The studio opens tomorrow. It took me six months.", 0.6, thread="t")
    ranked = HybridRanker().rank("when does the studio open?", [asking, telling], NOW)
    assert ranked[0].candidate is telling
    parts = {s.candidate.memory.id: s.parts for s in ranked}
    asked = parts[asking.memory.id]
    assert asked["question"] == pytest.approx(-0.2 * sum(v for k, v in asked.items() if k != "question"))
    assert parts[telling.memory.id]["question"] == 0
    off = HybridRanker(HybridSettings(question_weight=0)).rank("studio", [asking], NOW)
    assert off[0].parts["question"] == 0


@pytest.mark.parametrize(
    ("text", "discounted"),
    [
        ("Gina: When are you opening the studio?", True),
        ("Gina: Wow, congrats! That's huge. How long did it take?", True),
        ("Gina: One. Two. Three. Four. Five sentences before asking?", False),  # said something first
        ("Gina: The studio opens tomorrow.", False),
        ("When does the user's studio open?", False),  # a fact an agent stored, not a turn
    ],
)
def test_only_a_turn_that_mostly_asks_is_discounted(text, discounted):
    (scored,) = HybridRanker().rank("studio", [make_candidate(text, 0.5, thread="s")], NOW)
    assert (scored.parts["question"] < 0) is discounted
