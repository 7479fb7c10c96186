"""Render a :class:`~.models.MemoryFilter` as SQL conditions: the part every SQL store shares.

:func:`.filter_terms.compile_filter` says what the filter means; :class:`SqlFilter` turns each term
into a condition on the memories table, and leaves to a store's subclass only what its dialect
writes differently: the parameter marker, how a list is bound, how a time is stored, and how tags
and metadata are kept. The Scope rule (:class:`~.filter_terms.VisibleTo`) and the lifecycle rules
(tombstones, replaced versions) are written here once, so two stores cannot disagree on who sees
what.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from .filter_terms import (
    Absent,
    AllTags,
    AnyTag,
    AtOrAfter,
    Before,
    Equals,
    MetadataEquals,
    OneOf,
    StartsWith,
    Term,
    VisibleTo,
    compile_filter,
)
from .models import MemoryFilter, MetadataValue, PrivacyScope

Condition = tuple[str, list[Any]]


class SqlFilter(ABC):
    """Renders filter terms for one SQL dialect; subclasses fill in the dialect's parts."""

    #: the DB-API parameter marker: ``?`` (SQLite) or ``%s`` (psycopg)
    marker = "?"
    #: an always-false condition, for a filter that matches nothing
    nothing = "1 = 0"

    def render(self, where: MemoryFilter, alias: str = "") -> Condition:
        """The conditions of ``where`` joined by AND (without WHERE; ``""`` when there are none),
        and their parameters. ``alias`` qualifies the memories table's columns."""
        terms = compile_filter(where)
        if terms is None:
            return self.nothing, []
        sql: list[str] = []
        params: list[Any] = []
        prefix = f"{alias}." if alias else ""
        for term in terms:
            condition, more = self.term(term, prefix)
            sql.append(condition)
            params += more
        return " AND ".join(sql), params

    def term(self, term: Term, p: str) -> Condition:
        m = self.marker
        match term:
            case Equals("pinned", value):
                return f"{p}pinned = {m}", [self.boolean(bool(value))]
            case Equals(field, value):
                return f"{p}{field} = {m}", [value]
            case OneOf(field, values):
                return self.one_of(f"{p}{field}", values)
            case Absent(field):
                return f"{p}{field} IS NULL", []
            case AtOrAfter(field, when):
                return f"{p}{field} >= {m}", [self.time(when)]
            case Before(field, when):
                return f"{p}{field} < {m}", [self.time(when)]
            case StartsWith(field, prefix):
                # substr, not LIKE (case-insensitive in SQLite) nor a range (a collation may order "-")
                return f"substr({p}{field}, 1, {m}) = {m}", [len(prefix), prefix]
            case AnyTag(tags):
                return self.any_tag(p, tags)
            case AllTags(tags):
                return self.all_tags(p, tags)
            case MetadataEquals(key, value):
                return self.metadata_equals(p, key, value)
            case VisibleTo(principal, teammates):
                team, params = self.one_of(f"{p}owner", teammates) if teammates else (self.nothing, [])
                return (
                    f"({p}owner = {m} OR {p}privacy_scope = '{PrivacyScope.PUBLIC.value}' OR "
                    f"({p}privacy_scope = '{PrivacyScope.TEAM.value}' AND {team}))",
                    [principal, *params],
                )
        raise TypeError(f"unknown filter term {term!r}")

    # -- the dialect ------------------------------------------------------------------------------
    @abstractmethod
    def one_of(self, column: str, values: Sequence[str]) -> Condition:
        """``column`` is one of ``values`` (never empty), as one bound parameter."""

    @abstractmethod
    def time(self, when: datetime) -> Any:
        """A time as the store keeps it."""

    def boolean(self, value: bool) -> Any:
        return value

    @abstractmethod
    def any_tag(self, p: str, tags: Sequence[str]) -> Condition: ...

    @abstractmethod
    def all_tags(self, p: str, tags: Sequence[str]) -> Condition: ...

    @abstractmethod
    def metadata_equals(self, p: str, key: str, value: MetadataValue) -> Condition:
        """JSON equality of top-level ``metadata[key]`` with ``value`` (see :mod:`.filter_terms`)."""
