"""Keyword search: ``keyword_search`` (a capability: ``capabilities.keyword_search``)."""

from __future__ import annotations

import pytest

from mcp_memory_core import MemoryFilter, Store

from .base import StoreSuite
from .data import ALL, BASE_TIME, SEARCH, hit_ids, memory

FTS_HOSTILE_QUERIES = [
    '"',
    '""',
    "'",
    "AND",
    "OR",
    "NOT",
    "-",
    "*",
    "(",
    ")",
    "^",
    ":",
    "a AND (",
    "NEAR(a b)",
    "content:zebra",
    "zebra*",
    '"unterminated phrase',
    "-zebra +giraffe",
    "{x y}",
    "🙂",
    "   ",
    "\x00",
    "ü" * 300,
]


class KeywordTests(StoreSuite):
    """Ranking, query text that is syntax to the index, filters; skipped unless
    ``capabilities.keyword_search``."""

    def _keyword(self, store: Store) -> None:
        if not store.capabilities.keyword_search:
            pytest.skip("store does not offer keyword_search")

    def test_keyword_exact_term_first(self, opened: Store) -> None:
        """Troubleshooting: ``keyword_search`` returns (id, score) with HIGHER = better, best first. With
        SQLite FTS5, ``bm25()`` is lower-is-better: negate it. A memory containing the rare query term
        must outrank memories that don't contain it."""
        self._keyword(opened)
        docs = [
            "The deploy pipeline runs on Tuesdays",
            "Our mascot is a capybara named Lars",
            "Tuesdays are for planning and coffee",
            "Coffee machine is on the second floor",
        ]
        items = [memory(i, content=text) for i, text in enumerate(docs)]
        self.add(opened, items)
        hits = opened.keyword_search("capybara", 10, SEARCH)
        assert hits and hits[0][0] == items[1].id
        assert all(isinstance(i, str) and isinstance(s, float) for i, s in hits)
        hits = opened.keyword_search("what happens on tuesdays with the deploy?", 10, SEARCH)
        assert hits[0][0] == items[0].id
        scores = [s for _, s in hits]
        assert scores == sorted(scores, reverse=True)
        assert opened.keyword_search("capybara", 10, MemoryFilter(namespace="elsewhere")) == []
        assert len(opened.keyword_search("tuesdays coffee", 1, SEARCH)) == 1

    def test_keyword_query_syntax_never_raises(self, opened: Store) -> None:
        """Troubleshooting: user text must never reach the query parser raw. With FTS5, ``"``, ``AND``,
        ``-``, ``*``, ``(``, ``column:`` are syntax: extract words and quote each one (``"word"``), and
        return [] when no word is left. Any exception here is a crash in search_memories."""
        self._keyword(opened)
        self.add(opened, [memory(1, content="zebra and giraffe AND friends, near (the) river: ok")])
        for query in FTS_HOSTILE_QUERIES:
            hits = opened.keyword_search(query, 5, SEARCH)
            assert isinstance(hits, list), query
        assert opened.keyword_search("-zebra +giraffe", 5, SEARCH)

    def test_keyword_filters(self, opened: Store) -> None:
        """Troubleshooting: keyword search applies the same filter as ``knn``, before its top-k:
        tombstones excluded unless ``include_deleted``, superseded excluded when ``include_superseded``
        is false, namespace isolation, ``ids`` restriction."""
        self._keyword(opened)
        dead = [memory(i, content=f"platypus platypus platypus {i}", deleted_at=BASE_TIME) for i in range(20)]
        old = memory(30, content="platypus once", superseded_by="11111111-2222-3333-4444-555555555555")
        live = memory(31, content="a platypus lives here, among many other words")
        other_ns = memory(32, content="platypus platypus", namespace="elsewhere")
        self.add(opened, [*dead, old, live, other_ns])
        ids = hit_ids
        assert ids(opened.keyword_search("platypus", 2, SEARCH)) == {old.id, live.id}
        assert ids(opened.keyword_search("platypus", 2, MemoryFilter(include_superseded=False))) == {live.id}
        assert ids(opened.keyword_search("platypus", 5, MemoryFilter(namespace="elsewhere"))) == {other_ns.id}
        assert len(opened.keyword_search("platypus", 50, MemoryFilter(include_deleted=True))) == 22
        assert len(opened.keyword_search("platypus", 50, ALL)) == 23
        only = MemoryFilter(ids=frozenset({live.id, dead[0].id}))
        assert ids(opened.keyword_search("platypus", 5, only)) == {live.id}
        assert opened.keyword_search("platypus", 5, MemoryFilter(ids=frozenset())) == []
        assert opened.keyword_search("nonexistentword", 5, ALL) == []
