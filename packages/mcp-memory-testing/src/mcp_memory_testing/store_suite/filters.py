"""Filter fields: what each ``MemoryFilter`` field selects."""

from __future__ import annotations

from datetime import timedelta, timezone
from typing import Any

import numpy as np

from mcp_memory_core import MemoryFilter, MemoryType, Store

from .base import StoreSuite
from .data import BASE_TIME, hit_ids, memory, near, row_ids, unit_vectors


class FilterTests(StoreSuite):
    """Every ``MemoryFilter`` field selects what ``MemoryFilter.matches`` selects, in every read method,
    before the top-k."""

    def test_filter_fields_alone_and_combined(self, opened: Store) -> None:
        """Troubleshooting: every MemoryFilter field (types, tags_any, tags_all, created_after,
        created_before, occurred_after, occurred_before, threads, metadata, ids, id_prefix; with namespace and
        the lifecycle flags) must give the same set in
        ``knn``, ``keyword_search``, ``list`` and ``count`` as ``MemoryFilter.matches`` (the reference
        semantics). Usual culprits: tags matched as substrings of a JSON text (use exact elements),
        ``tags_all`` of an empty set (matches everything), ``types`` stored as text vs codes, metadata
        compared as text (``1`` must not match ``"1"``), bool treated as int."""
        items, _ = self._filter_corpus(opened)
        t10 = BASE_TIME + timedelta(seconds=10)
        t30 = BASE_TIME + timedelta(seconds=30)
        some_ids = frozenset(m.id for m in items[::5])
        fields: dict[str, dict[str, Any]] = {
            "one type": {"types": frozenset({MemoryType.EPISODIC})},
            "two types": {"types": frozenset({MemoryType.WORKING, MemoryType.PROCEDURAL})},
            "no types": {"types": frozenset()},
            "tags_any": {"tags_any": frozenset({"red"})},
            "tags_any unicode": {"tags_any": frozenset({"ünï code", "with space"})},
            "tags_any unknown": {"tags_any": frozenset({"nope", "with"})},
            "tags_any empty": {"tags_any": frozenset()},
            "tags_all": {"tags_all": frozenset({"red", "green"})},
            "tags_all three": {"tags_all": frozenset({"green", "emoji 🙂", "with space"})},
            "tags_all empty": {"tags_all": frozenset()},
            "after": {"created_after": t10},
            "before": {"created_before": t10},
            "window": {"created_after": t10, "created_before": t30},
            "occurred after": {"occurred_after": BASE_TIME - timedelta(days=20)},
            "occurred before": {"occurred_before": BASE_TIME - timedelta(days=20)},
            "occurred window": {
                "occurred_after": BASE_TIME - timedelta(days=30),
                "occurred_before": BASE_TIME - timedelta(days=10),
            },
            "one thread": {"threads": frozenset({"thread 1"})},
            "two threads": {"threads": frozenset({"thread 0", "thread 2", "no such thread"})},
            "no threads": {"threads": frozenset()},
            "metadata int": {"metadata": (("n", 1),)},
            "metadata str": {"metadata": (("s", "1"),)},
            "metadata float vs int": {"metadata": (("f", 2),)},
            "metadata bool": {"metadata": (("flag", True),)},
            "metadata two keys": {"metadata": (("n", 1), ("flag", False))},
            "metadata null": {"metadata": (("nullable", None),)},
            "metadata quoted key": {"metadata": (('we"ird.key $[0]', "x"),)},
            "metadata missing key": {"metadata": (("absent", None),)},
            "ids": {"ids": some_ids},
            "id prefix": {"id_prefix": items[3].id[:8]},
            "id prefix of one character": {"id_prefix": items[0].id[:1]},
            "id prefix of nothing": {"id_prefix": "zz"},
            "combined": {
                "types": frozenset({MemoryType.WORKING, MemoryType.SEMANTIC}),
                "tags_any": frozenset({"red", "blue"}),
                "created_after": BASE_TIME + timedelta(seconds=4),
                "metadata": (("flag", True),),
                "threads": frozenset({"thread 0", "thread 1"}),
            },
            "combined all": {
                "tags_all": frozenset({"green"}),
                "created_before": BASE_TIME + timedelta(seconds=40),
                "metadata": (("s", "0"),),
                "ids": some_ids | frozenset(m.id for m in items[::3]),
            },
        }
        views: dict[str, dict[str, Any]] = {
            "search": {},
            "heads": {"include_superseded": False},
            "everything": {"namespace": None, "include_deleted": True},
        }
        for label, values in fields.items():
            for view, flags in views.items():
                self._check_filter(opened, items, MemoryFilter(**values, **flags), f"{label} / {view}")

    def test_filters_apply_before_top_k(self, opened: Store) -> None:
        """Troubleshooting: EVERY filter field applies before the top-k. With 200 non-matching memories
        closer to the query (and better keyword matches, and newer) than 5 matching ones, ``k=5`` must
        return exactly the 5 matching ones from knn, keyword_search and list. With sqlite-vec, a JOIN or
        WHERE on the rows table filters AFTER the KNN: put the field in a vec0 metadata column, or
        compute the matching rows first and pass ``rowid IN (…)`` or scan them exactly."""
        query = unit_vectors(1, self.dimensions, 101)[0]
        old = BASE_TIME - timedelta(days=1)
        wanted = [
            memory(
                i,
                content="quokka " + " ".join(f"filler{j}" for j in range(30)),
                created_at=old + timedelta(seconds=i),
                type=MemoryType.PROCEDURAL,
                tags=("wanted one",),
                metadata={"k": "yes"},
                occurred_at=old - timedelta(days=365),
                thread="wanted",
            )
            for i in range(5)
        ]
        crowd = [
            memory(
                100 + i,
                content="quokka quokka",
                type=MemoryType.SEMANTIC,
                tags=("other",),
                metadata={"k": "no"},
            )
            for i in range(200)
        ]
        self.add(opened, wanted, vectors=self._far_from(query, 5, 102))
        self.add(opened, crowd, vectors=np.stack([near(query, 1000 + i) for i in range(200)]))
        expected = {m.id for m in wanted}
        filters = {
            "types": MemoryFilter(types=frozenset({MemoryType.PROCEDURAL})),
            "tags_any": MemoryFilter(tags_any=frozenset({"wanted one"})),
            "tags_all": MemoryFilter(tags_all=frozenset({"wanted one"})),
            "metadata": MemoryFilter(metadata=(("k", "yes"),)),
            "created_before": MemoryFilter(created_before=BASE_TIME),
            "created window": MemoryFilter(created_after=old, created_before=old + timedelta(hours=1)),
            "ids": MemoryFilter(ids=frozenset(expected)),
            "occurred_before": MemoryFilter(occurred_before=old),
            "threads": MemoryFilter(threads=frozenset({"wanted"})),
        }
        for label, where in filters.items():
            assert hit_ids(opened.knn(query, 5, where)) == expected, label
            assert row_ids(opened.list(where, 5)) == expected, label
            assert opened.count(where) == 5, label
            if opened.capabilities.keyword_search:
                assert hit_ids(opened.keyword_search("quokka", 5, where)) == expected, label
        crowd_only = MemoryFilter(created_after=BASE_TIME - timedelta(seconds=1))
        assert hit_ids(opened.knn(-query, 300, crowd_only)) == {m.id for m in crowd}

    def test_metadata_filter_json_equality(self, opened: Store) -> None:
        """Troubleshooting: metadata filters use JSON equality on top-level keys: ``1`` matches 1 and
        1.0 but not ``"1"`` nor ``true``; ``True`` matches only true; ``None`` matches a JSON null, not a
        missing key; nested values never equal a scalar. In SQLite check ``json_type`` (or json_each's
        ``type``) besides the value: ``json_extract`` turns true into 1 and null/missing into NULL."""
        values: list[Any] = [1, 1.0, "1", True, False, 0, None, [1], {"v": 1}, "true", 2.5]
        items = [memory(i, metadata={"v": value}) for i, value in enumerate(values)]
        items.append(memory(len(values), metadata={"other": 1}))
        self.add(opened, items)
        by_value: list[tuple[Any, set[int]]] = [
            (1, {0, 1}),
            (1.0, {0, 1}),
            ("1", {2}),
            (True, {3}),
            (False, {4}),
            (0, {5}),
            (None, {6}),
            ("true", {9}),
            (2.5, {10}),
            ("missing", set()),
        ]
        query = unit_vectors(1, self.dimensions, 111)[0]
        for value, positions in by_value:
            where = MemoryFilter(metadata=(("v", value),))
            expected = {items[p].id for p in positions}
            assert {m.id for m in items if where.matches(m)} == expected, value  # the reference agrees
            assert row_ids(opened.list(where, 100)) == expected, value
            assert hit_ids(opened.knn(query, 100, where)) == expected, value
            assert opened.count(where) == len(expected), value

    def test_created_boundaries(self, opened: Store) -> None:
        """Troubleshooting: ``created_after`` is inclusive and ``created_before`` exclusive, to the
        microsecond, whatever timezone the bound is written in. Off-by-one here usually means
        datetimes compared as text, truncated to milliseconds, or compared in local time."""
        t0 = BASE_TIME + timedelta(hours=2)
        tick = timedelta(microseconds=1)
        before, at, after = (
            memory(i, created_at=t0 + d, updated_at=t0) for i, d in enumerate((-tick, 0 * tick, tick))
        )
        self.add(opened, [before, at, after])
        shifted = t0.astimezone(timezone(timedelta(hours=-7)))
        query = unit_vectors(1, self.dimensions, 121)[0]
        cases = [
            (MemoryFilter(created_after=t0), {at.id, after.id}),
            (MemoryFilter(created_after=shifted), {at.id, after.id}),
            (MemoryFilter(created_before=t0), {before.id}),
            (MemoryFilter(created_before=shifted), {before.id}),
            (MemoryFilter(created_after=t0, created_before=t0 + tick), {at.id}),
            (MemoryFilter(created_after=t0, created_before=t0), set()),
        ]
        for where, expected in cases:
            assert row_ids(opened.list(where, 10)) == expected, where
            assert hit_ids(opened.knn(query, 10, where)) == expected, where
            assert opened.count(where) == len(expected), where

    def test_tags_exact_unicode_and_updates(self, opened: Store) -> None:
        """Troubleshooting: tags match as whole, case-sensitive strings: unicode, spaces, quotes and
        JSON-looking text included; a word inside a tag is not the tag. Tag filters must follow
        ``update_fields(tags=…)`` (an index of tags kept beside the rows must be rewritten)."""
        tags = ("ünï code", "with space", "emoji 🙂", "CJK 記憶", 'quote "x"', '["json"]', "%_like")
        items = [memory(i, tags=(tag,)) for i, tag in enumerate(tags)]
        self.add(opened, items)
        for item, tag in zip(items, tags, strict=True):
            assert row_ids(opened.list(MemoryFilter(tags_any=frozenset({tag})), 10)) == {item.id}, tag
            assert row_ids(opened.list(MemoryFilter(tags_all=frozenset({tag})), 10)) == {item.id}, tag
        for wrong in ("with", "Ünï code", "space", "json", "%", "_like", "x"):
            assert opened.count(MemoryFilter(tags_any=frozenset({wrong}))) == 0, wrong
        opened.update_fields(items[0].id, {"tags": ("with space", "new tag")})
        both = MemoryFilter(tags_all=frozenset({"with space", "new tag"}))
        assert row_ids(opened.list(both, 10)) == {items[0].id}
        assert opened.count(MemoryFilter(tags_any=frozenset({"ünï code"}))) == 0
        assert row_ids(opened.list(MemoryFilter(tags_any=frozenset({"with space"})), 10)) == {
            items[0].id,
            items[1].id,
        }
        query = unit_vectors(1, self.dimensions, 131)[0]
        assert hit_ids(opened.knn(query, 10, both)) == {items[0].id}

    def test_lifecycle_filters_pinned_and_predecessors(self, opened: Store) -> None:
        """Troubleshooting: ``pinned`` (True/False, None = either) and ``superseded_by_in`` (memories
        whose ``superseded_by`` is one of these ids) must filter in knn, list and count like every other
        field, before the top-k. The engine finds a chain's predecessors and expirable memories with them."""
        head = memory(10)
        old = memory(1, superseded_by=head.id)
        older = memory(0, superseded_by=old.id)
        pinned = memory(5, pinned=True)
        items = [older, old, head, pinned, *(memory(20 + i) for i in range(6))]
        vectors = self.add(opened, items)
        base = MemoryFilter(namespace=None, include_superseded=True)
        by_pred = MemoryFilter(namespace=None, superseded_by_in=frozenset({head.id, old.id}))
        assert row_ids(opened.list(by_pred, 10)) == {old.id, older.id}
        assert hit_ids(opened.knn(vectors[9], 2, by_pred)) == {old.id, older.id}
        assert opened.count(by_pred) == 2
        assert opened.list(MemoryFilter(namespace=None, superseded_by_in=frozenset()), 10) == []
        only_pinned = MemoryFilter(namespace=None, pinned=True)
        assert row_ids(opened.list(only_pinned, 10)) == {pinned.id}
        assert hit_ids(opened.knn(vectors[9], 3, only_pinned)) == {pinned.id}
        unpinned = MemoryFilter(namespace=None, pinned=False)
        assert opened.count(unpinned) == opened.count(base) - 1
