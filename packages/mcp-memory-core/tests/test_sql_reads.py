"""The shared reads of a SQL store (sql_reads), over stdlib sqlite3 and a dialect written in the test:
what a store gets by filling in a dialect, without any plugin."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import sql_reads
from mcp_memory_core.models import Memory, MemoryFilter
from mcp_memory_core.row_codec import COLUMNS, JsonTextRowCodec, to_micros
from mcp_memory_core.sql_filters import Condition, SqlFilter
from mcp_memory_core.sql_reads import SqlDialect, SqlReads

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class JsonListFilter(SqlFilter):
    """Enough of a dialect for these tests: lists as JSON arrays, times as microseconds."""

    def one_of(self, column: str, values: Sequence[str]) -> Condition:
        return f"{column} IN (SELECT value FROM json_each(?))", [json.dumps(list(values))]

    def time(self, when: datetime) -> int:
        return to_micros(when)

    def boolean(self, value: bool) -> int:
        return int(value)

    def any_tag(self, p: str, tags: Sequence[str]) -> Condition:
        raise NotImplementedError

    def all_tags(self, p: str, tags: Sequence[str]) -> Condition:
        raise NotImplementedError

    def metadata_equals(self, p: str, key: str, value: Any) -> Condition:
        raise NotImplementedError


class BlobDialect(SqlDialect):
    def __init__(self) -> None:
        super().__init__(
            memories="memories", passages="passages", filters=JsonListFilter(), codec=JsonTextRowCodec()
        )

    def vectors_of(self, stored: Sequence[Any]) -> Any:
        return np.stack([np.frombuffer(blob, dtype=np.float32) for blob in stored])

    def vector_param(self, vector: Any) -> bytes:
        return np.asarray(vector, dtype=np.float32).tobytes()


class TinyStore(SqlReads):
    _dialect = BlobDialect()

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE TABLE memories (seq INTEGER PRIMARY KEY, {', '.join(COLUMNS)})")
        self.conn.execute("CREATE TABLE passages (vrow INTEGER PRIMARY KEY, seq INTEGER, embedding BLOB)")
        self.checked = 0

    def add(self, memory: Memory, *vectors: list[float]) -> None:
        marks = ", ".join("?" * len(COLUMNS))
        seq = self.conn.execute(
            f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({marks})",
            self._dialect.codec.encode(memory),
        ).lastrowid
        for vector in vectors:
            blob = self._dialect.vector_param(vector)
            self.conn.execute("INSERT INTO passages (seq, embedding) VALUES (?, ?)", (seq, blob))

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Any]:
        yield self.conn

    def _check_model(self, conn: Any) -> None:
        self.checked += 1


def memory(content: str, minutes: int, **fields: Any) -> Memory:
    return Memory(content=content, namespace="proj", created_at=T0 + timedelta(minutes=minutes), **fields)


@pytest.fixture
def store() -> TinyStore:
    s = TinyStore()
    s.add(memory("first", 0, thread="t", id="a"), [1, 0])
    s.add(memory("second", 1, thread="t", id="b"), [0, 1], [1, 1])
    s.add(memory("third", 2, thread="t", id="c", deleted_at=T0), [1, 1])
    s.add(memory("elsewhere", 3, id="d").model_copy(update={"namespace": "user"}), [0, 1])
    return s


def test_get_returns_the_known_memories_by_id(store: TinyStore) -> None:
    found = store.get(["b", "missing", "b", "a"])
    assert sorted(found) == ["a", "b"] and found["b"].content == "second" and found["b"].thread == "t"
    assert store.get([]) == {}


def test_vectors_are_a_memorys_rows_in_order_after_the_model_check(store: TinyStore) -> None:
    found = store.vectors(["b"])
    assert found["b"].tolist() == [[0.0, 1.0], [1.0, 1.0]] and found["b"].dtype == np.float32
    assert store.checked == 1


def test_list_pages_newest_first_and_count_and_namespaces_agree(store: TinyStore) -> None:
    everything = MemoryFilter(namespace=None, include_deleted=True)
    first = store.list(everything, 2)
    assert [m.id for m in first] == ["d", "c"]
    rest = store.list(everything, 10, after=(first[-1].created_at, first[-1].id))
    assert [m.id for m in rest] == ["b", "a"]
    assert [m.id for m in store.list(MemoryFilter(namespace="proj"), 10)] == ["b", "a"]  # no tombstone
    assert store.count(everything) == 4 and store.count(MemoryFilter(namespace="proj")) == 2
    assert store.namespaces() == {"proj": 2, "user": 1}  # every row's namespace, live ones counted
    assert store.list(everything, 0) == [] and store.count(MemoryFilter(ids=[])) == 0


def test_thread_neighbours_follow_the_filter(store: TinyStore) -> None:
    assert store.thread_neighbours(["b"], MemoryFilter(namespace="proj", include_deleted=True)) == {
        "b": ("a", "c")
    }
    assert store.thread_neighbours(["b"], MemoryFilter(namespace="proj")) == {
        "b": ("a", None)
    }  # the tombstone is left out
    assert store.thread_neighbours(["d"], MemoryFilter(namespace=None)) == {}  # not in a thread


def test_iter_all_reads_every_memory_in_batches(store: TinyStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sql_reads, "ITER_BATCH", 3)
    assert [m.id for m in store.iter_all()] == ["a", "b", "c", "d"]
