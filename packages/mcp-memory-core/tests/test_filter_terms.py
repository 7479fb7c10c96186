"""The shared filter compiler: what each MemoryFilter field means, said once (filter_terms), and the
SQL every SQL store shares (sql_filters), rendered here in a second dialect (psycopg-style) to show
a store only writes its dialect's parts. Each store's agreement with the reference semantics is
checked by StoreConformance (test_filter_fields_alone_and_combined and friends)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from mcp_memory_core import Memory, MemoryFilter, MemoryType
from mcp_memory_core.filter_terms import (
    Absent,
    AllTags,
    AnyTag,
    AtOrAfter,
    Before,
    Equals,
    MetadataEquals,
    OneOf,
    VisibleTo,
    compile_filter,
    matches,
)
from mcp_memory_core.models import MetadataValue, PrivacyScope, Visibility
from mcp_memory_core.sql_filters import Condition, SqlFilter

T0 = datetime(2025, 1, 1, tzinfo=UTC)


class ArraySql(SqlFilter):
    """A dialect with arrays and jsonb (PostgreSQL-like), for the renderer's own tests."""

    marker = "%s"

    def one_of(self, column: str, values: Sequence[str]) -> Condition:
        return f"{column} = ANY(%s)", [list(values)]

    def time(self, when: datetime) -> datetime:
        return when

    def any_tag(self, p: str, tags: Sequence[str]) -> Condition:
        return f"{p}tags && %s", [list(tags)]

    def all_tags(self, p: str, tags: Sequence[str]) -> Condition:
        return f"{p}tags @> %s", [list(tags)]

    def metadata_equals(self, p: str, key: str, value: MetadataValue) -> Condition:
        return f"{p}metadata -> %s = %s", [key, value]


def test_the_default_filter_is_the_search_view() -> None:
    """Default namespace, no tombstones; replaced versions match (search resolves them to heads)."""
    assert compile_filter(MemoryFilter()) == [Equals("namespace", "default"), Absent("deleted_at")]
    assert compile_filter(MemoryFilter(namespace=None, include_deleted=True)) == []


@pytest.mark.parametrize("field", ["ids", "types", "tags_any", "namespaces", "threads", "superseded_by_in"])
def test_an_empty_set_matches_nothing(field: str) -> None:
    where = MemoryFilter(**{field: frozenset()})
    assert compile_filter(where) is None
    assert not matches(where, Memory(content="anything"))
    assert ArraySql().render(where) == ("1 = 0", [])


def test_an_empty_tags_all_matches_everything() -> None:
    assert compile_filter(MemoryFilter(namespace=None, include_deleted=True, tags_all=frozenset())) == []


def test_every_field_becomes_one_term_with_sorted_values() -> None:
    where = MemoryFilter(
        namespace="n",
        namespaces=frozenset({"n", "user"}),
        owner="ann",
        visible_to=Visibility("ann", frozenset({"bob", "al"})),
        include_superseded=False,
        ids=frozenset({"b", "a"}),
        types=frozenset({MemoryType.SEMANTIC}),
        threads=frozenset({"t"}),
        superseded_by_in=frozenset({"x"}),
        created_after=T0,
        created_before=T0,
        occurred_after=T0,
        occurred_before=T0,
        tags_any=frozenset({"z", "y"}),
        tags_all=frozenset({"y"}),
        pinned=True,
        metadata=(("k", 1), ("j", None)),
    )
    assert compile_filter(where) == [
        Equals("namespace", "n"),
        Equals("owner", "ann"),
        VisibleTo("ann", ("al", "bob")),
        Absent("deleted_at"),
        Absent("superseded_by"),
        OneOf("namespace", ("n", "user")),
        OneOf("id", ("a", "b")),
        OneOf("type", ("semantic",)),
        OneOf("thread", ("t",)),
        OneOf("superseded_by", ("x",)),
        AtOrAfter("created_at", T0),
        Before("created_at", T0),
        AtOrAfter("occurred_at", T0),
        Before("occurred_at", T0),
        AnyTag(("y", "z")),
        AllTags(("y",)),
        Equals("pinned", True),
        MetadataEquals("k", 1),
        MetadataEquals("j", None),
    ]


def test_a_second_dialect_renders_the_same_terms() -> None:
    where = MemoryFilter(
        visible_to=Visibility("ann", frozenset({"bob"})),
        types=frozenset({MemoryType.WORKING}),
        created_after=T0,
        tags_all=frozenset({"red"}),
        pinned=False,
        metadata=(("k", "v"),),
    )
    sql, params = ArraySql().render(where, alias="m")
    assert sql == (
        "m.namespace = %s AND (m.owner = %s OR m.privacy_scope = 'public' OR "
        "(m.privacy_scope = 'team' AND m.owner = ANY(%s))) AND m.deleted_at IS NULL AND "
        "m.type = ANY(%s) AND m.created_at >= %s AND m.tags @> %s AND m.pinned = %s AND "
        "m.metadata -> %s = %s"
    )
    assert params == ["default", "ann", ["bob"], ["working"], T0, ["red"], False, "k", "v"]


def test_visibility_without_teammates_is_own_and_public_only() -> None:
    where = MemoryFilter(namespace=None, visible_to=Visibility("ann"))
    sql, params = ArraySql().render(where)
    assert "team' AND 1 = 0" in sql and params == ["ann"]
    mine = Memory(content="a", owner="ann")
    public = Memory(content="b", owner="bob", privacy_scope=PrivacyScope.PUBLIC)
    team = Memory(content="c", owner="bob", privacy_scope=PrivacyScope.TEAM)
    assert [matches(where, m) for m in (mine, public, team)] == [True, True, False]
    teammate = MemoryFilter(namespace=None, visible_to=Visibility("ann", frozenset({"bob"})))
    assert matches(teammate, team)


def test_metadata_equality_is_json_equality() -> None:
    """A boolean equals only a boolean, 1 equals 1.0, "1" is not 1, None is null and not missing."""
    memory = Memory(content="x", metadata={"b": True, "n": 1.0, "s": "1", "z": None})

    def meta(key: str, value: MetadataValue) -> bool:
        return matches(MemoryFilter(metadata=((key, value),)), memory)

    assert meta("b", True) and not meta("b", 1)
    assert meta("n", 1) and not meta("n", True) and not meta("n", "1")
    assert meta("s", "1") and not meta("s", 1)
    assert meta("z", None) and not meta("missing", None)


def test_an_unusable_metadata_value_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="metadata filter values must be"):
        compile_filter(MemoryFilter(metadata=(("k", [1]),)))  # type: ignore[arg-type]


def test_a_term_the_renderer_does_not_know_fails_loudly() -> None:
    with pytest.raises(TypeError, match="unknown filter term"):
        ArraySql().term(object(), "")  # type: ignore[arg-type]
