"""Dates a query names, as spans: absolute forms, bare months and relative phrases."""

from datetime import UTC, datetime

import pytest

from mcp_memory_core.query_dates import TimeSpan, dates_in

ANCHOR = datetime(2023, 8, 16, 15, 30, tzinfo=UTC)  # a Wednesday


def day(y, m, d):
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("What did Gina find on 1 February, 2023?", day(2023, 2, 1), day(2023, 2, 2)),
        ("What book did Tim finish on 8th December, 2023?", day(2023, 12, 8), day(2023, 12, 9)),
        ("How did Joanna feel on October 25, 2022?", day(2022, 10, 25), day(2022, 10, 26)),
        ("the release of 2024-03-05", day(2024, 3, 5), day(2024, 3, 6)),
        ("What setback did Melanie face in October 2023?", day(2023, 10, 1), day(2023, 11, 1)),
        ("plans for Dec 2023", day(2023, 12, 1), day(2024, 1, 1)),
        ("the 2023-05 numbers", day(2023, 5, 1), day(2023, 6, 1)),
        ("trips in 2022", day(2022, 1, 1), day(2023, 1, 1)),
        ("When did Melanie go camping in June?", day(2023, 6, 1), day(2023, 7, 1)),
        ("what did we decide in December?", day(2022, 12, 1), day(2023, 1, 1)),  # the latest December
        ("what happened on 3 June?", day(2023, 6, 3), day(2023, 6, 4)),
        ("what did I do yesterday", day(2023, 8, 15), day(2023, 8, 16)),
        ("anything today?", day(2023, 8, 16), day(2023, 8, 17)),
        ("what happened last week", day(2023, 8, 7), day(2023, 8, 14)),
        ("plans from last month", day(2023, 7, 1), day(2023, 8, 1)),
        ("goals from last year", day(2022, 1, 1), day(2023, 1, 1)),
        ("what did we do last weekend", day(2023, 8, 12), day(2023, 8, 14)),
        ("the meeting last Tuesday", day(2023, 8, 15), day(2023, 8, 16)),
        ("the meeting last Wednesday", day(2023, 8, 9), day(2023, 8, 10)),  # not today
        ("what changed this month", day(2023, 8, 1), day(2023, 9, 1)),
    ],
)
def test_named_dates(query, start, end):
    assert dates_in(query, ANCHOR) == [TimeSpan(start, end)]


def test_ago_is_a_window_around_the_day():
    [span] = dates_in("the bug we saw three weeks ago", ANCHOR)
    assert span.start < day(2023, 7, 26) < span.end and span.days <= 8


@pytest.mark.parametrize(
    "query",
    [
        "May I ask what Caroline likes?",  # the verb, not the month
        "What is the capital of France?",
        "Where did John go between the matches?",
        "the 2023rd attempt",
        "room 2023",
    ],
)
def test_no_date(query):
    assert dates_in(query, ANCHOR) == []


def test_several_dates_each_once():
    spans = dates_in("Where was John between August 11, 2023 and August 15, 2023?", ANCHOR)
    assert spans == [
        TimeSpan(day(2023, 8, 11), day(2023, 8, 12)),
        TimeSpan(day(2023, 8, 15), day(2023, 8, 16)),
    ]


def test_an_impossible_day_still_names_its_month():
    assert dates_in("on 31 February, 2023", ANCHOR) == [TimeSpan(day(2023, 2, 1), day(2023, 3, 1))]
