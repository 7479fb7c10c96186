"""Dates a search query names ("in May 2023", "on 3 June, 2023", "last week"), as time spans.

Search uses them to lift memories whose ``occurred_at`` lies in or near the span. English only, and
only the forms people use when they ask about the past: a day, a month, a year, an ISO date, and
a few phrases relative to an anchor (``yesterday``, ``last week|month|year|weekend``, ``last
Tuesday``, ``3 days ago``, ``this week|month|year``). A bare month ("in June") is the latest such
month on or before the anchor. Relative phrases count from the anchor, which the caller chooses:
search passes the newest ``occurred_at`` among its candidates (a conversation stored a year ago is
asked about as of its own last day), bounded by now.

Nothing here is a rule about memories; it reads text. It is small on purpose: a full natural-date
parser (``dateparser``) costs ~100 ms to import and tens of ms a query, for forms a question to a
memory server rarely uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10}

_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = [
    ("iso_day", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")),
    ("iso_month", re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)\b(?!-)")),
    ("day", re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b", re.I)),
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("month", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I)),
    (
        "day_no_year",
        re.compile(rf"\b(?:on|since|before|after|by)\s+(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MONTH}\b", re.I),
    ),
    ("day_no_year", re.compile(rf"\b(?:on|since|before|after|by)\s+{_MONTH}\s+{_DAY}\b(?!\s*,?\s*\d)", re.I)),
    # A bare month needs a preposition: "May" alone is too often the verb.
    (
        "bare_month",
        re.compile(
            rf"\b(?:in|during|since|early|late|mid|of|last|this|around|before|after)\s+{_MONTH}\b", re.I
        ),
    ),
    ("year", re.compile(rf"\b(?:in|during|since|of|around|before|after|year)\s+{_YEAR}\b", re.I)),
    (
        "ago",
        re.compile(
            r"\b(?P<count>\d+|a|an|one|two|three|four|five|six|ten)\s+(?P<unit>day|week|month|year)s?\s+ago\b",
            re.I,
        ),
    ),
    ("last", re.compile(r"\b(?:last|past|previous)\s+(?P<unit>week|weekend|month|year)\b", re.I)),
    ("this", re.compile(r"\bthis\s+(?P<unit>week|weekend|month|year)\b", re.I)),
    ("weekday", re.compile(r"\blast\s+(?P<weekday>" + "|".join(WEEKDAYS) + r")\b", re.I)),
    ("yesterday", re.compile(r"\byesterday\b", re.I)),
    ("today", re.compile(r"\btoday\b", re.I)),
]


@dataclass(frozen=True)
class TimeSpan:
    """[start, end): the time a query names."""

    start: datetime
    end: datetime

    @property
    def days(self) -> float:
        return (self.end - self.start).total_seconds() / 86_400


def _day(year: int, month: int, day: int) -> TimeSpan | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return TimeSpan(start, start + timedelta(days=1))


def _month(year: int, month: int) -> TimeSpan | None:
    if not 1 <= month <= 12:
        return None
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return TimeSpan(start, end)


def _year(year: int) -> TimeSpan:
    return TimeSpan(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))


def _latest_month(month: int, anchor: datetime) -> TimeSpan | None:
    year = anchor.year if month <= anchor.month else anchor.year - 1
    return _month(year, month)


def _latest_day(month: int, day: int, anchor: datetime) -> TimeSpan | None:
    span = _day(anchor.year, month, day)
    if span is not None and span.start > anchor:
        span = _day(anchor.year - 1, month, day)
    return span


def _midnight(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def _relative(kind: str, match: re.Match[str], anchor: datetime) -> TimeSpan | None:
    today = _midnight(anchor)
    if kind == "yesterday":
        return TimeSpan(today - timedelta(days=1), today)
    if kind == "today":
        return TimeSpan(today, today + timedelta(days=1))
    if kind == "weekday":
        back = (today.weekday() - WEEKDAYS.index(match["weekday"].lower())) % 7 or 7
        return TimeSpan(today - timedelta(days=back), today - timedelta(days=back - 1))
    unit = match["unit"].lower()
    monday = today - timedelta(days=today.weekday())
    if kind == "ago":
        count = int(match["count"]) if match["count"].isdigit() else NUMBERS[match["count"].lower()]
        size = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * count
        centre = today - timedelta(days=size)
        slack = timedelta(days=max(1, size // 7))  # "three weeks ago" is not to the day
        return TimeSpan(centre - slack, centre + slack + timedelta(days=1))
    if kind == "last":
        if unit == "week":
            return TimeSpan(monday - timedelta(days=7), monday)
        if unit == "weekend":
            saturday = monday - timedelta(days=2)
            return TimeSpan(saturday, monday)
        if unit == "month":
            previous = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
            return _month(previous.year, previous.month)
        return _year(today.year - 1)
    # "this …"
    if unit in ("week", "weekend"):
        return TimeSpan(monday, monday + timedelta(days=7))
    if unit == "month":
        return _month(today.year, today.month)
    return _year(today.year)


def dates_in(query: str, anchor: datetime) -> list[TimeSpan]:
    """The time spans ``query`` names, most specific form first, without overlaps in the text."""
    spans: list[TimeSpan] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(query):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            span = _span(kind, match, anchor)
            if span is not None:
                spans.append(span)
                taken.append(match.span())
    return spans


def _span(kind: str, match: re.Match[str], anchor: datetime) -> TimeSpan | None:
    groups = match.groupdict()
    month = groups.get("month")
    month_number = None
    if month is not None:
        month_number = int(month) if month.isdigit() else MONTHS[month.lower().rstrip(".")]
    if kind in ("iso_day", "day"):
        assert month_number is not None
        return _day(int(match["year"]), month_number, int(match["day"]))
    if kind in ("iso_month", "month"):
        assert month_number is not None
        return _month(int(match["year"]), month_number)
    if kind == "day_no_year":
        assert month_number is not None
        return _latest_day(month_number, int(match["day"]), anchor)
    if kind == "bare_month":
        assert month_number is not None
        return _latest_month(month_number, anchor)
    if kind == "year":
        return _year(int(match["year"]))
    return _relative(kind, match, anchor)
