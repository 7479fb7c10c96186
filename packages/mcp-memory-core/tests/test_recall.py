"""recall.pack (memory_injection): the final text, counted as a whole, never exceeds the budget,
whatever the tokenizer does with the joins."""

from datetime import UTC, datetime

import pytest

from mcp_memory_core.models import Memory, SearchHit
from mcp_memory_core.recall import HEADER, approximate_tokens, pack

NOW = datetime(2024, 5, 8, 12, 0, tzinfo=UTC)


def hits(*contents: str) -> list[SearchHit]:
    return [
        SearchHit(
            memory=Memory(content=c, created_at=NOW), score=1.0, matched_id=None, similarity=1.0, parts={}
        )
        for c in contents
    ]


def words(text: str) -> int:
    return len(text.split())


def joins_cost_more(text: str) -> int:
    """A tokenizer that counts a joined text above its parts (each newline after the first costs
    more the more there are): the per-line sum underestimates it."""
    newlines = text.count("\n")
    return words(text) + newlines * newlines


FOUND = hits("the standup is at 9:30", "deploys are on fridays", "the office plants need water", "x " * 40)


@pytest.mark.parametrize("count", [words, joins_cost_more, approximate_tokens])
def test_the_whole_text_fits_for_every_budget(count):
    for budget in range(1, 200):
        recall = pack(FOUND, budget, count, NOW)
        assert recall.tokens == (count(recall.text) if recall.text else 0) <= budget
        assert count(recall.prompt) <= budget
        if recall.text:
            assert recall.text.startswith(HEADER) and len(recall.text.splitlines()) == len(recall.hits) + 1


def test_lines_the_sum_admits_but_the_whole_does_not_are_dropped_from_the_end():
    sum_of_parts = words(HEADER) + sum(
        words(f"- [semantic, just now] {h.memory.content}") + 1 for h in FOUND[:3]
    )
    recall = pack(FOUND, sum_of_parts, joins_cost_more, NOW)
    assert [h.memory.content for h in recall.hits] == [h.memory.content for h in FOUND[:2]]
    assert joins_cost_more(recall.text) <= sum_of_parts


def test_a_skipped_long_line_lets_a_shorter_one_after_it_in():
    found = hits("a " * 60, "short one")
    recall = pack(found, 20, words, NOW)
    assert [h.memory.content for h in recall.hits] == ["short one"]


def test_when_nothing_fits_the_note_says_why_within_the_budget():
    assert pack(FOUND, 3, words, NOW).prompt == ""  # not even the note fits
    none_fit = pack(hits("a " * 60), 20, words, NOW)
    assert (
        none_fit.text == ""
        and none_fit.prompt == "No relevant memory fits in 20 tokens: ask for a larger token_budget."
    )
    assert pack([], 20, words, NOW).prompt == "No stored memory is relevant to this query."
