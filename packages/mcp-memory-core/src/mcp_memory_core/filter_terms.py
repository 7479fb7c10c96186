"""What a store must match: a :class:`MemoryFilter`, compiled to a flat list of terms that must all hold.

This is the one place that says what a filter field means. A store renders the terms in its own
query language (:mod:`.sql_filters` for SQL stores) or evaluates them in Python (:func:`matches`, the
reference semantics, used by the in-memory store and the conformance suite). Adding a filter field
means adding it here: every store then fails loudly on a term it does not know, instead of silently
ignoring the field.

Fields and their terms:

- ``namespace``, ``owner``, ``pinned`` → :class:`Equals`; ``namespaces``, ``ids``, ``types``,
  ``threads``, ``superseded_by_in`` → :class:`OneOf` (an empty set matches nothing);
- ``include_deleted=False`` / ``include_superseded=False`` → :class:`Absent` (``deleted_at`` /
  ``superseded_by`` is null): tombstones and replaced versions;
- ``created_*`` / ``occurred_*`` → :class:`AtOrAfter` (inclusive) and :class:`Before` (exclusive);
- ``tags_any`` / ``tags_all`` → :class:`AnyTag` / :class:`AllTags`;
- ``metadata`` pairs → :class:`MetadataEquals` (JSON equality: ``True`` is not ``1``, ``1 == 1.0``,
  ``"1" != 1``, ``None`` is JSON null and not a missing key);
- ``visible_to`` → :class:`VisibleTo` (the owner, public memories, and team memories of teammates);
- ``id_prefix`` → :class:`StartsWith` (the id begins with it: a short id the user typed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from .memory import DEFAULT_NAMESPACE, Memory, MemoryType, MetadataValue, PrivacyScope, Visibility


@dataclass(frozen=True)
class MemoryFilter:
    """What a store must match. Stores apply every field BEFORE their top-k, never after.

    ``include_deleted`` and ``include_superseded`` default to the search view: vectors of superseded
    versions still match (the engine resolves them to their head), tombstones never do.
    The user-facing fields: ``types`` (any of), ``tags_any`` (at least one of), ``tags_all`` (every
    one of), ``created_after`` (inclusive) / ``created_before`` (exclusive), the same pair for
    ``occurred_at`` (``occurred_after`` / ``occurred_before``), ``threads`` (any of), and ``metadata``: top-level
    key = value pairs that must all hold (JSON equality: ``1`` and ``"1"`` differ).
    Lifecycle fields the engine uses: ``pinned`` (TTL sweeps skip pinned memories) and
    ``superseded_by_in`` (memories whose ``superseded_by`` is one of these ids: a chain's predecessors).
    Who may see what (the engine's Scope): ``namespaces`` (any of these; ``None``: no limit, on top of
    ``namespace``), ``owner`` (exactly this owner) and ``visible_to`` (see :class:`Visibility`).
    ``id_prefix``: ids that begin with it (a memory looked up by the first characters of its id).
    """

    namespace: str | None = DEFAULT_NAMESPACE
    include_deleted: bool = False
    include_superseded: bool = True
    ids: frozenset[str] | None = None
    types: frozenset[MemoryType] | None = None
    tags_any: frozenset[str] | None = None
    tags_all: frozenset[str] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    metadata: tuple[tuple[str, MetadataValue], ...] = ()
    pinned: bool | None = None
    superseded_by_in: frozenset[str] | None = None
    namespaces: frozenset[str] | None = None
    owner: str | None = None
    visible_to: Visibility | None = None
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None
    threads: frozenset[str] | None = None
    id_prefix: str | None = None

    @property
    def narrows_content(self) -> bool:
        """True when a user-facing field is set (anything beyond namespace and lifecycle flags)."""
        return bool(
            self.types is not None
            or self.tags_any is not None
            or self.tags_all is not None
            or self.created_after is not None
            or self.created_before is not None
            or self.occurred_after is not None
            or self.occurred_before is not None
            or self.threads is not None
            or self.pinned is not None
            or self.metadata
        )

    def matches(self, memory: Memory) -> bool:
        """The reference semantics of the filter (:func:`matches`), for stores that filter in Python."""
        return matches(self, memory)


# Columns a term may name: a store maps each to its own column.
EqualsField = Literal["namespace", "owner", "pinned"]
OneOfField = Literal["namespace", "id", "type", "thread", "superseded_by"]
AbsentField = Literal["deleted_at", "superseded_by"]
TimeField = Literal["created_at", "occurred_at"]


@dataclass(frozen=True)
class Equals:
    field: EqualsField
    value: str | bool


@dataclass(frozen=True)
class OneOf:
    """The field's value is one of ``values`` (sorted, never empty)."""

    field: OneOfField
    values: tuple[str, ...]


@dataclass(frozen=True)
class Absent:
    field: AbsentField


@dataclass(frozen=True)
class AtOrAfter:
    field: TimeField
    when: datetime


@dataclass(frozen=True)
class Before:
    field: TimeField
    when: datetime


@dataclass(frozen=True)
class StartsWith:
    """The id begins with ``prefix`` (never empty)."""

    field: Literal["id"]
    prefix: str


@dataclass(frozen=True)
class AnyTag:
    tags: tuple[str, ...]


@dataclass(frozen=True)
class AllTags:
    tags: tuple[str, ...]


@dataclass(frozen=True)
class MetadataEquals:
    key: str
    value: MetadataValue


@dataclass(frozen=True)
class VisibleTo:
    """Owned by ``principal``, or public, or team-scoped and owned by one of ``teammates``."""

    principal: str
    teammates: tuple[str, ...]


Term = (
    Equals | OneOf | Absent | AtOrAfter | Before | StartsWith | AnyTag | AllTags | MetadataEquals | VisibleTo
)


def compile_filter(where: MemoryFilter) -> list[Term] | None:
    """The terms of ``where``, all of which must hold; None when nothing can match (an empty set in
    ``ids``, ``types``, ``tags_any``, ``namespaces``, ``threads`` or ``superseded_by_in``)."""
    sets: list[tuple[OneOfField, frozenset[Any] | None]] = [
        ("namespace", where.namespaces),
        ("id", where.ids),
        ("type", None if where.types is None else frozenset(str(t) for t in where.types)),
        ("thread", where.threads),
        ("superseded_by", where.superseded_by_in),
    ]
    if any(values is not None and not values for _, values in sets) or (
        where.tags_any is not None and not where.tags_any
    ):
        return None
    terms: list[Term] = []
    if where.namespace is not None:
        terms.append(Equals("namespace", where.namespace))
    if where.owner is not None:
        terms.append(Equals("owner", where.owner))
    if where.visible_to is not None:
        terms.append(VisibleTo(where.visible_to.principal, tuple(sorted(where.visible_to.teammates))))
    if not where.include_deleted:
        terms.append(Absent("deleted_at"))
    if not where.include_superseded:
        terms.append(Absent("superseded_by"))
    terms += [OneOf(name, tuple(sorted(values))) for name, values in sets if values is not None]
    if where.id_prefix:
        terms.append(StartsWith("id", where.id_prefix))
    return terms + _content_terms(where)


def _content_terms(where: MemoryFilter) -> list[Term]:
    """The terms of the user-facing fields: times, tags, pinned and metadata."""
    terms: list[Term] = []
    for name, after, before in (
        ("created_at", where.created_after, where.created_before),
        ("occurred_at", where.occurred_after, where.occurred_before),
    ):
        if after is not None:
            terms.append(AtOrAfter(name, after))  # type: ignore[arg-type]
        if before is not None:
            terms.append(Before(name, before))  # type: ignore[arg-type]
    if where.tags_any is not None:
        terms.append(AnyTag(tuple(sorted(where.tags_any))))
    if where.tags_all:
        terms.append(AllTags(tuple(sorted(where.tags_all))))
    if where.pinned is not None:
        terms.append(Equals("pinned", where.pinned))
    for key, value in where.metadata:
        if value is not None and not isinstance(value, str | int | float | bool):
            raise ValueError(f"metadata filter values must be str, int, float, bool or None; got {value!r}")
        terms.append(MetadataEquals(key, value))
    return terms


def matches_nothing(where: MemoryFilter) -> bool:
    return compile_filter(where) is None


def matches(where: MemoryFilter, memory: Memory) -> bool:
    """The reference semantics of ``where``, for stores that filter in Python."""
    terms = compile_filter(where)
    return terms is not None and all(holds(term, memory) for term in terms)


def holds(term: Term, memory: Memory) -> bool:
    """Whether one term holds for ``memory``."""
    match term:
        case Equals(field, value):
            return bool(getattr(memory, field) == value)
        case OneOf(field, values):
            value = memory.type.value if field == "type" else getattr(memory, field)
            return value in values
        case Absent(field):
            return getattr(memory, field) is None
        case AtOrAfter(field, when):
            return bool(getattr(memory, field) >= when)
        case Before(field, when):
            return bool(getattr(memory, field) < when)
        case StartsWith(field, prefix):
            return str(getattr(memory, field)).startswith(prefix)
        case AnyTag(tags):
            return not set(tags).isdisjoint(memory.tags)
        case AllTags(tags):
            return set(tags).issubset(memory.tags)
        case MetadataEquals(key, value):
            return key in memory.metadata and json_equal(memory.metadata[key], value)
        case VisibleTo(principal, teammates):
            return (
                memory.owner == principal
                or memory.privacy_scope == PrivacyScope.PUBLIC
                or (memory.privacy_scope == PrivacyScope.TEAM and memory.owner in teammates)
            )
    raise TypeError(f"unknown filter term {term!r}")


def json_equal(stored: Any, wanted: MetadataValue) -> bool:
    """JSON equality: a boolean equals only a boolean; numbers compare by value (1 == 1.0)."""
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return isinstance(stored, bool) and isinstance(wanted, bool) and stored == wanted
    return bool(stored == wanted)
