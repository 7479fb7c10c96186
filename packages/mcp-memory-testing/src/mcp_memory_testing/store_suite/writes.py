"""Writing and reading back: insert, get, update_fields, record_access, purge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from mcp_memory_core import Memory, MemoryFilter, MemoryType, Store
from mcp_memory_core.models import PrivacyScope

from .base import StoreSuite
from .data import ALL, BASE_TIME, SEARCH, hit_ids, memory, row_ids


class WriteTests(StoreSuite):
    """What is written is read back exactly; a failed insert stores nothing; updates and purges reach
    every read method."""

    def test_roundtrip_every_field(self, opened: Store) -> None:
        """Troubleshooting: every Memory field must come back equal. Usual culprits: datetimes stored
        without timezone or microseconds (store UTC with full precision and return timezone-aware
        datetimes), tags returned as a list instead of a tuple, metadata flattened or stringified, type
        returned as a plain string that is not a MemoryType, pinned returned as 0/1, unicode mangled."""
        full = Memory(
            content="Ünïcödé ✓ — emoji 🙂, CJK 記憶, RTL שלום, newline\nand tab\t and quote \" '",
            metadata={
                "source": "conformance",
                "nested": {"list": [1, 2.5, "three", None, True], "deep": {"x": {"y": "z"}}},
                "ünï": "cödé",
                "empty": {},
            },
            created_at=datetime(2023, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            updated_at=datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
            superseded_by="11111111-2222-3333-4444-555555555555",
            deleted_at=datetime(2024, 2, 29, 8, 30, 0, 500000, tzinfo=UTC),
            namespace="project-ünï/sub",
            type=MemoryType.PROCEDURAL,
            tags=("pytest", "ünï", "with space", "a"),
            importance=0.25,
            pinned=True,
            access_count=7,
            last_accessed=datetime(2024, 3, 1, tzinfo=UTC),
            owner="alice@example.org",
            privacy_scope=PrivacyScope.TEAM,
            occurred_at=datetime(1999, 12, 31, 12, 0, 0, 123456, tzinfo=UTC),
            thread="chat ünï/42",
        )
        minimal = Memory(content="x")
        offset = Memory(
            content="created in another timezone",
            created_at=datetime(2024, 6, 1, 17, 30, 0, 42, tzinfo=timezone(timedelta(hours=5, minutes=30))),
            updated_at=datetime(2024, 6, 1, 12, 0, 0, 42, tzinfo=UTC),
        )
        self.add(opened, [full, minimal, offset])
        got = opened.get([full.id, minimal.id, offset.id])
        assert got[full.id] == full
        assert got[minimal.id] == minimal
        assert got[offset.id] == offset  # the same instant; the timezone may be normalized to UTC
        for m in got.values():
            for stamp in (m.created_at, m.updated_at, m.deleted_at, m.last_accessed):
                if stamp is not None:
                    assert stamp.tzinfo is not None and stamp.utcoffset() is not None, "naive datetime"
        g = got[full.id]
        assert g.created_at.utcoffset() == timedelta(0)
        assert g.created_at.microsecond == 999999
        assert isinstance(g.tags, tuple) and g.tags == full.tags
        assert g.type is MemoryType.PROCEDURAL
        assert g.pinned is True
        assert g.privacy_scope is PrivacyScope.TEAM and g.owner == "alice@example.org"
        assert g.occurred_at == full.occurred_at and g.thread == "chat ünï/42"
        assert got[minimal.id].occurred_at == minimal.created_at and got[minimal.id].thread is None
        assert g.metadata["nested"]["list"] == [1, 2.5, "three", None, True]
        assert got[minimal.id].deleted_at is None and got[minimal.id].last_accessed is None

    def test_get_missing_ids(self, opened: Store) -> None:
        """Troubleshooting: ``get`` returns a dict holding only the ids that exist; a missing id is
        absent, never an exception or a None value. ``get([])`` is ``{}``."""
        items = [memory(1), memory(2)]
        self.add(opened, items)
        missing = "99999999-9999-9999-9999-999999999999"
        assert opened.get([missing]) == {}
        assert opened.get([]) == {}
        got = opened.get([items[0].id, missing, items[1].id, items[0].id])
        assert set(got) == {items[0].id, items[1].id}

    def test_get_returns_tombstones_and_superseded(self, opened: Store) -> None:
        """Troubleshooting: ``get`` ignores filters: deleted and superseded memories and every namespace
        come back (the engine resolves chains with it)."""
        items = [
            memory(1, deleted_at=BASE_TIME),
            memory(2, superseded_by="11111111-2222-3333-4444-555555555555"),
            memory(3, namespace="elsewhere"),
        ]
        self.add(opened, items)
        assert set(opened.get([m.id for m in items])) == {m.id for m in items}

    def test_insert_duplicate_id_stores_nothing_of_the_batch(self, opened: Store) -> None:
        """Troubleshooting: inserting an id that already exists must raise, and the whole ``insert``
        call must be atomic: the other memories of that batch must not be stored either (write the batch
        in one transaction)."""
        first = memory(1)
        self.add(opened, [first])
        fresh = memory(2)
        with pytest.raises(Exception):  # noqa: B017 - any error type is acceptable
            self.add(opened, [fresh, first.model_copy(update={"content": "dup"})], seed=5)
        assert opened.get([fresh.id]) == {}
        assert opened.get([first.id])[first.id].content == first.content
        assert opened.count(ALL) == 1

    def test_insert_many(self, opened: Store) -> None:
        """Troubleshooting: one ``insert`` call may carry many memories; row i of ``vectors`` belongs to
        memory i. If KNN finds the wrong ids, vectors were paired with the wrong rows."""
        items = [memory(i) for i in range(100)]
        vectors = self.add(opened, items, seed=3)
        assert opened.count(ALL) == 100
        for i in (0, 37, 99):
            assert opened.knn(vectors[i], 1, ALL)[0][0] == items[i].id

    def test_update_fields(self, opened: Store) -> None:
        """Troubleshooting: ``update_fields`` sets exactly the given fields of one memory and leaves every
        other field (and every other memory) untouched; values round-trip like in insert."""
        target, other = memory(1, tags=("a",)), memory(2)
        self.add(opened, [target, other])
        stamp = BASE_TIME + timedelta(days=1, microseconds=7)
        changes: dict[str, Any] = {
            "superseded_by": other.id,
            "updated_at": stamp,
            "pinned": True,
            "importance": 0.9,
            "access_count": 3,
            "last_accessed": stamp,
            "metadata": {"k": {"v": [1, 2]}},
            "tags": ("b", "c"),
        }
        opened.update_fields(target.id, changes)
        got = opened.get([target.id, other.id])
        assert got[target.id] == target.model_copy(update=changes)
        assert got[other.id] == other
        opened.update_fields(target.id, {"deleted_at": stamp})
        assert opened.get([target.id])[target.id].deleted_at == stamp
        assert opened.get([target.id])[target.id].pinned is True

    def test_update_fields_moves_memory_between_filters(self, opened: Store) -> None:
        """Troubleshooting: filters must see updates. A store that copies flags into its vector or
        keyword index (e.g. sqlite-vec metadata columns) must update that copy in ``update_fields`` too,
        or tombstoned memories keep turning up in search (and un-deleted ones never come back)."""
        items = [memory(i, content=f"walrus fact {i}") for i in range(3)]
        vectors = self.add(opened, items)
        victim = items[0]
        opened.update_fields(victim.id, {"deleted_at": BASE_TIME})
        assert victim.id not in dict(opened.knn(vectors[0], 3, SEARCH))
        assert victim.id not in {m.id for m in opened.list(SEARCH, 10)}
        assert opened.count(SEARCH) == 2
        if opened.capabilities.keyword_search:
            assert victim.id not in dict(opened.keyword_search("walrus", 10, SEARCH))
        opened.update_fields(victim.id, {"deleted_at": None})
        assert opened.knn(vectors[0], 1, SEARCH)[0][0] == victim.id
        opened.update_fields(items[1].id, {"superseded_by": items[2].id})
        heads = MemoryFilter(include_superseded=False)
        assert items[1].id not in dict(opened.knn(vectors[1], 3, heads))
        assert opened.knn(vectors[1], 1, SEARCH)[0][0] == items[1].id
        assert opened.count(heads) == 2

    def test_record_access(self, opened: Store) -> None:
        """Troubleshooting: ``record_access(counts, when)`` ADDS ``counts[id]`` to ``access_count``
        (as an SQL increment ``access_count = access_count + ?``, never read-modify-write across
        processes), sets ``last_accessed = when``, ignores unknown ids (no error, no new row), and
        leaves every other field alone."""
        a, b, c = memory(1, access_count=7), memory(2), memory(3)
        self.add(opened, [a, b, c])
        t1, t2 = BASE_TIME + timedelta(days=1), BASE_TIME + timedelta(days=2, microseconds=3)
        missing = "99999999-9999-9999-9999-999999999999"
        opened.record_access({a.id: 2, missing: 5}, t1)
        opened.record_access({a.id: 3, b.id: 1}, t2)
        opened.record_access({}, t2)
        got = opened.get([a.id, b.id, c.id, missing])
        assert set(got) == {a.id, b.id, c.id}
        assert got[a.id] == a.model_copy(update={"access_count": 12, "last_accessed": t2})
        assert got[b.id] == b.model_copy(update={"access_count": 1, "last_accessed": t2})
        assert got[c.id] == c
        assert opened.count(ALL) == 3
        with opened.transaction():
            opened.record_access({c.id: 4}, t1)
        assert opened.get([c.id])[c.id].access_count == 4

    def test_purge_everywhere(self, opened: Store) -> None:
        """Troubleshooting: after ``purge`` a memory is gone from get, knn, keyword_search, list and
        count (with every filter, tombstones included), and the id can be inserted again. ``purge``
        returns the number of memories it removed."""
        items = [memory(i, content=f"pelican fact {i}", tags=("bird",)) for i in range(4)]
        vectors = self.add(opened, items)
        opened.update_fields(items[1].id, {"deleted_at": BASE_TIME})
        assert opened.purge([items[0].id, items[1].id]) == 2
        gone = {items[0].id, items[1].id}
        assert opened.get(list(gone)) == {}
        for where in (ALL, SEARCH, MemoryFilter(tags_any=frozenset({"bird"}), include_deleted=True)):
            assert not gone & hit_ids(opened.knn(vectors[0], 10, where))
            assert not gone & row_ids(opened.list(where, 10))
            assert opened.count(where) == 2
            if opened.capabilities.keyword_search:
                assert not gone & hit_ids(opened.keyword_search("pelican", 10, where))
        self.add(opened, [items[0]], vectors=vectors[:1])
        assert opened.knn(vectors[0], 1, SEARCH)[0][0] == items[0].id
