"""U+0000 (NUL) has one fate in every store, decided by the engine: PostgreSQL's text cannot hold it,
so nothing mcp-memory stores or filters on may carry one. A write or a filter holding one is refused
with one sentence; an import refuses each memory holding one, by id in its outcome, and imports the
rest (a memory whose newer version is refused is refused with it: its chain would be broken)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_import_safety import export_file, memory_id, stored
from test_transfer import good_line, make_engine

from mcp_memory_core import InvalidInputError, MemoryEngine
from mcp_memory_core.filters import Filters
from mcp_memory_core.transfer import import_records, read_memories

REFUSED = "contains a NUL character (U+0000), which mcp-memory does not store; remove it."


@pytest.fixture(params=["in-memory", "sqlite-vec"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryEngine]:
    if request.param == "in-memory":
        engine = make_engine()
    else:
        sqlite_vec = pytest.importorskip("mcp_memory_sqlite_vec")
        engine = make_engine(sqlite_vec.SqliteVecStore(tmp_path / "memories.db"))
    try:
        yield engine
    finally:
        engine.close()


WRITES: dict[str, Callable[[MemoryEngine], Any]] = {
    "content": lambda e: e.store_memory("x\x00y"),
    "a metadata value": lambda e: e.store_memory("ok", {"topic": "a\x00b"}),
    "a nested metadata value": lambda e: e.store_memory("ok", {"topic": {"deep": ["a\x00b"]}}),
    "a metadata key": lambda e: e.store_memory("ok", {"to\x00pic": "a"}),
    "a tag": lambda e: e.store_memory("ok", tags=["fine", "ta\x00g"]),
    "the thread": lambda e: e.store_memory("ok", thread="chat\x00one"),
    "updated content": lambda e: e.update_memory(e.store_memory("ok").memory.id, "new\x00text"),
    "updated metadata": lambda e: e.update_memory(e.store_memory("ok").memory.id, "new", {"k": "\x00"}),
    "updated tags": lambda e: e.update_memory(e.store_memory("ok").memory.id, "new", tags=["\x00"]),
}


@pytest.mark.parametrize("write", WRITES.values(), ids=WRITES.keys())
def test_a_write_holding_a_nul_is_refused_in_one_sentence(
    engine: MemoryEngine, write: Callable[[MemoryEngine], Any]
) -> None:
    before = len(stored(engine))
    with pytest.raises(InvalidInputError) as caught:
        write(engine)
    assert str(caught.value).endswith(REFUSED) and "\n" not in str(caught.value)
    assert len(stored(engine)) - before <= 1  # the memory an update starts from, never the refused one
    assert all("\x00" not in json.dumps(m.model_dump(mode="json")) for m in stored(engine))


FILTERS: dict[str, dict[str, Any]] = {
    "tags": {"tags": ["a\x00"]},
    "metadata value": {"metadata": {"topic": "a\x00b"}},
    "metadata key": {"metadata": {"to\x00pic": "a"}},
    "thread": {"thread": "chat\x00"},
}


@pytest.mark.parametrize("given", FILTERS.values(), ids=FILTERS.keys())
def test_a_filter_holding_a_nul_is_refused_in_one_sentence(given: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError) as caught:
        Filters.parse(**given)
    assert str(caught.value).endswith(REFUSED)


def test_an_import_refuses_each_memory_holding_a_nul_by_id_and_imports_the_rest(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    """Lines 2 and 3 hold a NUL (content, a tag); line 4 is an older version of line 3 (refused with
    it); line 5 a metadata value. Lines 1 and 6 are imported; the outcome names the four others."""
    records = [
        good_line(id=memory_id(1), content="first"),
        good_line(id=memory_id(2), content="second\x00"),
        good_line(id=memory_id(3), content="third, the head", tags=["t\x00"]),
        good_line(id=memory_id(4), content="third, older", superseded_by=memory_id(3)),
        good_line(id=memory_id(5), content="fifth", metadata={"note": ["\x00"]}),
        good_line(id=memory_id(6), content="sixth"),
    ]
    assert "\\u0000" in records[1]  # as an export writes it: JSON escapes the character
    path = export_file(tmp_path, records)
    outcome = import_records(engine, read_memories(path, "mcp-memory", now=engine.clock()))
    assert (outcome.inserted, outcome.skipped) == (2, 0)
    assert sorted(m.id for m in stored(engine)) == [memory_id(1), memory_id(6)]
    assert sorted(outcome.refused) == [memory_id(n) for n in (2, 3, 4, 5)]
    assert outcome.refused[memory_id(2)] == f"content {REFUSED}"
    assert outcome.refused[memory_id(3)] == f"tags {REFUSED}"
    assert outcome.refused[memory_id(4)] == (
        f"its newer version {memory_id(3)} is refused: import the whole chain once that one is fixed."
    )
    assert outcome.refused[memory_id(5)] == f"metadata {REFUSED}"
    again = import_records(engine, read_memories(path, "mcp-memory", now=engine.clock()))
    assert (again.inserted, again.skipped, len(again.refused)) == (0, 2, 4)
