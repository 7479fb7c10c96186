"""Ranking in context: a memory is a turn of a conversation and happened on a day.

Three lifts and one discount on top of a ranker's own score ``s`` (each measured on the LoCoMo dev split; see
docs/benchmarks.md for the figures and commands):

- **neighbour**: an answer — a reply (:func:`mcp_memory_core.turns.is_reply`: the turn just before
  it in its thread was said by someone else) to a turn that asked something
  (:func:`mcp_memory_core.turns.asks`) — borrows ``neighbour_weight · s(previous turn)``: "Caroline:
  yes, the kids loved it" is about the camping trip Mel asked about. A reply to a statement borrows
  no score (it often changes the subject), but the keyword evidence of any reply's previous turn
  counts, down-weighted, as its own (done by the ranker before fusion). Unrelated facts one session
  stored in a row (no speakers, or the same one) borrow nothing from each other;
- **thread**: every memory gets ``thread_weight ·`` the mean of the two best scores in its thread, so
  the conversation a question is about rises together. Only a conversation is a thread here
  (:func:`mcp_memory_core.turns.in_conversation`: a thread the client named, or turns with speakers);
  a memory without one, and each of the unrelated facts an MCP session stored in its default
  thread, is a thread of one;
- **date**: when the query names a time ("in May 2023", "on 3 June", "last week"), memories whose
  ``occurred_at`` lies in it get ``date_weight``, fading with the days outside it (faster before the
  span than after it: people talk about an event in the days after it happened). Relative phrases
  count from the newest ``occurred_at`` among the candidates, never later than now;
- **question** (a discount): a turn that mostly asks (:func:`mcp_memory_core.turns.mostly_asks`:
  it ends with a question mark after at most four sentences) gives up ``question_weight`` of its
  lifted score. "Gina: When are you opening the studio?" shares the words of "how long did it take
  Jon to open his studio?" but holds no answer; the answer is in the turns around it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from mcp_memory_core import Candidate, Memory
from mcp_memory_core.query_dates import TimeSpan, dates_in
from mcp_memory_core.turns import asks, in_conversation, is_reply, mostly_asks

THREAD_TOP = 2  # a thread's prior: the mean of its best two scores


@dataclass(frozen=True)
class ContextWeights:
    neighbour: float = 0.3
    thread: float = 0.3
    date: float = 0.3
    date_after_days: float = 7.0
    date_before_days: float = 2.0
    question: float = 0.2


def questions(candidates: Sequence[Candidate]) -> dict[str, str]:
    """reply id -> the id of the candidate it answers (its previous turn, said by someone else)."""
    by_id = {c.memory.id: c for c in candidates}
    out = {}
    for c in candidates:
        if c.previous_id is None or c.previous_id not in by_id:
            continue
        if is_reply(c.memory, by_id[c.previous_id].memory):
            out[c.memory.id] = c.previous_id
    return out


def neighbour_keywords(
    candidates: Sequence[Candidate], answers: Mapping[str, str], weight: float
) -> dict[str, float]:
    """Each candidate's keyword score plus ``weight ×`` the score of the question it answers
    (``answers``: reply id -> question id, see :func:`questions`); absent: no keyword evidence."""
    own = {c.memory.id: max(c.keyword_score, 0.0) for c in candidates if c.keyword_score is not None}
    out = dict(own)
    if weight > 0:
        for reply, question in answers.items():
            borrowed = own.get(question, 0.0)
            if borrowed > 0:
                out[reply] = own.get(reply, 0.0) + weight * borrowed
    return out


def contextual_parts(
    query: str,
    candidates: Sequence[Candidate],
    answers: Mapping[str, str],
    scores: Mapping[str, float],
    weights: ContextWeights,
    now: datetime,
) -> dict[str, dict[str, float]]:
    """memory id -> {"neighbour", "thread", "date"} lifts to add to ``scores`` (the ranker's own)."""
    answered = _answered_questions(candidates, answers)
    lifted = {
        c.memory.id: scores[c.memory.id]
        + (weights.neighbour * scores[answered[c.memory.id]] if c.memory.id in answered else 0.0)
        for c in candidates
    }
    by_thread: dict[str, list[float]] = {}
    for c in candidates:
        by_thread.setdefault(_thread_key(c), []).append(lifted[c.memory.id])
    prior = {
        thread: sum(sorted(values, reverse=True)[:THREAD_TOP]) / THREAD_TOP
        for thread, values in by_thread.items()
    }
    spans: list[TimeSpan] = []
    if weights.date > 0 and candidates:
        anchor = min(max(c.memory.occurred_at for c in candidates), now)
        spans = dates_in(query, anchor)
    return {
        c.memory.id: {
            "neighbour": lifted[c.memory.id] - scores[c.memory.id],
            "thread": weights.thread * prior[_thread_key(c)],
            "date": weights.date * date_closeness(spans, c.memory.occurred_at, weights) if spans else 0.0,
        }
        for c in candidates
    }


def question_part(memory: Memory, lifted: float, weights: ContextWeights) -> float:
    """The discount of a turn that mostly asks: ``-question`` times its lifted score (0 otherwise)."""
    return -weights.question * lifted if weights.question and mostly_asks(memory) else 0.0


def _answered_questions(candidates: Sequence[Candidate], answers: Mapping[str, str]) -> dict[str, str]:
    """The replies of ``answers`` whose previous turn asked something: reply id -> question id."""
    previous = set(answers.values())
    asked = {c.memory.id for c in candidates if c.memory.id in previous and asks(c.memory)}
    return {reply: question for reply, question in answers.items() if question in asked}


def date_closeness(spans: Sequence[TimeSpan], when: datetime, weights: ContextWeights) -> float:
    """1 inside a span, fading exponentially with the days outside it; the best span counts."""
    best = 0.0
    for span in spans:
        if span.start <= when < span.end:
            return 1.0
        if when >= span.end:
            days, scale = (when - span.end).total_seconds() / 86_400, weights.date_after_days
        else:
            days, scale = (span.start - when).total_seconds() / 86_400, weights.date_before_days
        best = max(best, math.exp(-days / scale) if scale > 0 else 0.0)
    return best


def _thread_key(candidate: Candidate) -> str:
    """A conversation's memories share a prior; anything else (a memory without a thread, facts one
    MCP session stored in a row) is a thread of one."""
    memory = candidate.memory
    return f"thread:{memory.thread}" if in_conversation(memory) else f"memory:{memory.id}"
