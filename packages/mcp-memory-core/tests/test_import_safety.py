"""Imports that cannot half-happen or corrupt the database: everything is checked before anything is
written, lone surrogates are repaired and counted, chains stay inside one owner's namespace, dates are
sane, and a UTF-8 byte order mark is accepted. Errors name the line (or conversation) at fault."""

from __future__ import annotations

import json
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from test_transfer import chatgpt_export, good_line, make_engine

from mcp_memory_core import InvalidInputError, Memory, MemoryEngine, Scope
from mcp_memory_core.models import derived_id
from mcp_memory_core.transfer import check_records, detect_format, import_records, read_memories

FIRST_ID = "6f1c1f8e-2f55-4a55-8a55-000000000001"


def memory_id(number: int) -> str:
    return f"6f1c1f8e-2f55-4a55-8a55-{number:012d}"


def export_file(tmp_path: Path, records: list[str], name: str = "export.jsonl") -> Path:
    header = json.dumps({"format": "mcp-memory", "version": 1, "count": len(records)})
    path = tmp_path / name
    path.write_text("\n".join([header, *records]) + "\n", encoding="utf-8")
    return path


def import_file(engine: MemoryEngine, path: Path, format: Any = "mcp-memory", **options: Any) -> Any:
    return import_records(engine, read_memories(path, format, now=engine.clock(), **options))


def stored(engine: MemoryEngine) -> list[Memory]:
    engine.open()
    return list(engine.store.iter_all())


# -- (a) a bad line anywhere: its line number, and nothing written ------------------------------------
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"importance": 1.5}, "line 501: invalid memory: importance"),  # held by the reader already
        ({"owner": "mallory"}, "line 501: this memory belongs to 'mallory'"),  # the engine's rule
    ],
)
def test_a_bad_line_at_500_of_1000_names_it_and_writes_nothing(
    tmp_path: Path, bad: dict[str, Any], message: str
) -> None:
    records = [good_line(id=memory_id(n), content=f"memory {n}") for n in range(1, 1001)]
    records[499] = good_line(id=memory_id(500), content="memory 500", **bad)
    engine = make_engine()
    with pytest.raises(InvalidInputError) as caught:
        import_file(engine, export_file(tmp_path, records))
    assert stored(engine) == []
    assert str(caught.value).startswith(message)


def test_duplicate_ids_are_refused_before_any_batch_is_written() -> None:
    engine = make_engine()
    now = engine.clock()
    memories = [
        Memory(id=memory_id(n), content=f"memory {n}", created_at=now, updated_at=now) for n in range(1, 10)
    ]
    with pytest.raises(InvalidInputError) as caught:
        import_records(engine, [*memories, memories[0]], batch_size=4)
    assert stored(engine) == []
    assert str(caught.value) == f"memory {memory_id(1)}: this id appears twice in the import."


# -- (b) lone surrogates: replaced with U+FFFD and counted, in every format --------------------------
def test_chatgpt_lone_surrogates_are_repaired_and_counted(tmp_path: Path) -> None:
    sqlite_vec = pytest.importorskip("mcp_memory_sqlite_vec")
    export = chatgpt_export()
    export[0]["title"] = "Trip \ud83d"
    export[0]["mapping"]["n2"]["message"]["content"]["parts"] = [
        "I'm vegetarian \ud83d and \ude00 hate flights."
    ]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export), encoding="utf-8")  # ensure_ascii: "\ud83d" escapes, as ChatGPT writes
    engine = make_engine(sqlite_vec.SqliteVecStore(tmp_path / "memories.db"), namespace="chats")
    outcome = import_file(engine, path, "chatgpt", namespace="chats")
    assert (outcome.inserted, outcome.repaired) == (2, 3)
    veg = next(m for m in stored(engine) if m.metadata["message_id"] == "n2")
    assert veg.content == "I'm vegetarian \ufffd and \ufffd hate flights."
    assert veg.metadata["conversation"] == "Trip \ufffd"
    engine.close()


def test_mcp_memory_lone_surrogates_are_repaired_and_counted(tmp_path: Path) -> None:
    line = good_line(content="tea \ud83d", metadata={"note\udc00": ["\ud83d"]}, tags=["\ude00"])
    assert "\\ud83d" in line  # json.dumps escapes it: the file holds a lone surrogate escape
    engine = make_engine()
    outcome = import_file(engine, export_file(tmp_path, [line]))
    assert (outcome.inserted, outcome.repaired) == (1, 4)
    (memory,) = stored(engine)
    assert memory.content == "tea \ufffd" and memory.metadata == {"note\ufffd": ["\ufffd"]}
    assert memory.tags == ("\ufffd",)


def test_knowledge_graph_lone_surrogates_are_repaired_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    entity = {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["Likes \udc00 tea"]}
    path.write_text(json.dumps(entity) + "\n", encoding="utf-8")
    engine = make_engine()
    outcome = import_file(engine, path, "mcp-knowledge-graph")
    assert (outcome.inserted, outcome.repaired) == (1, 1)
    assert [m.content for m in stored(engine)] == ["Ada: Likes \ufffd tea"]


def test_surrogate_pairs_are_not_repairs(tmp_path: Path) -> None:
    path = tmp_path / "memory.jsonl"
    entity = {"type": "entity", "name": "Ada", "observations": ["Likes \U0001f375 tea"]}
    path.write_text(json.dumps(entity) + "\n", encoding="utf-8")  # "\ud83c\udf75": a pair
    parsed = read_memories(path, "mcp-knowledge-graph")
    assert parsed.repaired == 0 and [m.content for m in parsed] == ["Ada: Likes \U0001f375 tea"]


# -- (c) chains never cross namespaces or owners -------------------------------------------------------
def test_a_chain_across_namespaces_in_one_file_is_refused(tmp_path: Path) -> None:
    old = good_line(id=memory_id(1), namespace="work", superseded_by=memory_id(2))
    new = good_line(id=memory_id(2), namespace="home")
    engine = make_engine()
    with pytest.raises(InvalidInputError) as caught:
        import_file(engine, export_file(tmp_path, [old, new]))
    assert str(caught.value) == (
        f"line 2: superseded_by names memory {memory_id(2)} in namespace 'home', but this memory is in "
        "'work': a chain of versions never crosses namespaces."
    )
    assert stored(engine) == []


def test_a_chain_into_a_stored_memory_of_another_namespace_is_refused(tmp_path: Path) -> None:
    engine = make_engine()
    elsewhere = engine.store_memory("the newer version, elsewhere", namespace="home").memory
    with pytest.raises(InvalidInputError, match=r"line 2: superseded_by names memory .* in namespace 'home'"):
        import_file(engine, export_file(tmp_path, [good_line(namespace="work", superseded_by=elsewhere.id)]))
    assert [m.id for m in stored(engine)] == [elsewhere.id]


def test_a_chain_into_another_owners_memory_is_refused_like_a_missing_one(tmp_path: Path) -> None:
    engine = make_engine()
    bob = Scope.for_user("bob", project="default")
    theirs = engine.store_memory("bob's newer version", privacy_scope="public", scope=bob).memory
    missing = memory_id(99)
    for target in (theirs.id, missing):
        with pytest.raises(InvalidInputError) as caught:
            import_file(engine, export_file(tmp_path, [good_line(superseded_by=target)]))
        assert str(caught.value) == (
            f"line 2: superseded_by names memory {target}, which is neither in this import nor one of "
            "your memories: export the whole chain (every version) and import it together."
        )
    assert [m.id for m in stored(engine)] == [theirs.id]


def test_a_chain_continuing_into_ones_own_stored_memory_is_accepted(tmp_path: Path) -> None:
    engine = make_engine()
    head = engine.store_memory("staging runs postgres 16").memory
    outcome = import_file(engine, export_file(tmp_path, [good_line(superseded_by=head.id)]))
    assert outcome.inserted == 1
    assert engine.get_memory(FIRST_ID).head_id == head.id


# -- (c2) a chain never loops: a cycle would hide every version in it from search ----------------------
def engine_on(store_kind: str, tmp_path: Path) -> MemoryEngine:
    tmp_path.mkdir(parents=True, exist_ok=True)
    if store_kind == "sqlite":
        sqlite_vec = pytest.importorskip("mcp_memory_sqlite_vec")
        return make_engine(sqlite_vec.SqliteVecStore(tmp_path / "memories.db"))
    if store_kind == "vault":
        markdown = pytest.importorskip("mcp_memory_markdown")
        return make_engine(markdown.MarkdownStore(tmp_path / "vault", namespace="default", owner="local"))
    return make_engine()


@pytest.mark.parametrize("store_kind", ["memory", "sqlite", "vault"])
@pytest.mark.parametrize(
    ("links", "refused", "loop"),
    [
        ({1: 1}, 1, [1, 1]),
        ({1: 2, 2: 1}, 1, [1, 2, 1]),
        ({1: 2, 2: 3, 3: 1}, 1, [1, 2, 3, 1]),
        ({1: 2, 2: 3, 3: 2}, 2, [2, 3, 2]),  # 1 leads into the loop; the first version on it is named
    ],
)
def test_a_chain_that_loops_is_refused_and_nothing_is_written(
    tmp_path: Path, store_kind: str, links: dict[int, int], refused: int, loop: list[int]
) -> None:
    engine = engine_on(store_kind, tmp_path)
    records = [
        good_line(id=memory_id(n), content=f"version {n}", superseded_by=memory_id(t))
        for n, t in links.items()
    ]
    records.append(good_line(id=memory_id(9), content="an unrelated memory"))
    with pytest.raises(InvalidInputError) as caught:
        import_file(engine, export_file(tmp_path, records))
    assert str(caught.value) == (
        f"line {refused + 1}: superseded_by leads back to this memory "
        f"({' → '.join(memory_id(n) for n in loop)}): the newest version of a chain has no superseded_by."
    )
    assert stored(engine) == []
    engine.close()


# -- (c3) another user's id answers like a missing one ----------------------------------------------------
BOB = Scope.for_user("bob", project="default")


def bobs_file(tmp_path: Path, taken: str, name: str) -> Path:
    """Bob's export: an old version (whose id is ``taken``) superseded by a newer one, and a third memory."""
    return export_file(
        tmp_path,
        [
            good_line(id=taken, content="bob's old version", owner="bob", superseded_by=memory_id(2)),
            good_line(id=memory_id(2), content="bob's new version", owner="bob"),
            good_line(id=memory_id(3), content="bob's other memory", owner="bob"),
        ],
        name,
    )


def import_as_bob(engine: MemoryEngine, path: Path) -> Any:
    records = read_memories(path, "mcp-memory", owner="bob", limits=engine.limits)
    check_records(engine, records, scope=BOB)
    return import_records(engine, records, scope=BOB)


ALICE = Scope.for_user("alice", project="default")


@pytest.mark.parametrize("store_kind", ["memory", "sqlite", "vault"])
def test_importing_another_users_id_answers_exactly_like_a_missing_id(
    tmp_path: Path, store_kind: str
) -> None:
    answers = {}
    for case in ("taken", "missing"):
        engine = engine_on(store_kind, tmp_path / case)
        alices = engine.store_memory("alice's private note", scope=ALICE).memory
        taken = alices.id if case == "taken" else memory_id(77)
        path = bobs_file(tmp_path, taken, f"{case}.jsonl")
        first, again = import_as_bob(engine, path), import_as_bob(engine, path)
        answers[case] = ((first.inserted, first.skipped), (again.inserted, again.skipped))
        assert engine.get_memory(alices.id, scope=ALICE).memory.content == "alice's private note"
        old = [m for m in stored(engine) if m.content == "bob's old version"]
        assert len(old) == 1 and old[0].owner == "bob" and old[0].superseded_by == memory_id(2)
        assert (old[0].id == taken) == (case == "missing")  # Alice's id is not Bob's to take
        assert engine.get_memory(old[0].id, scope=BOB).head_id == memory_id(2)
        engine.close()
    assert answers["taken"] == answers["missing"] == ((3, 0), (0, 3))


def test_a_reference_to_a_rewritten_id_follows_it(tmp_path: Path) -> None:
    engine = make_engine()
    alices = engine.store_memory(
        "alice's private note", scope=Scope.for_user("alice", project="default")
    ).memory
    path = export_file(
        tmp_path,
        [
            good_line(id=memory_id(1), content="bob's oldest", owner="bob", superseded_by=alices.id),
            good_line(id=alices.id, content="bob's newest", owner="bob"),
        ],
    )
    assert import_as_bob(engine, path).inserted == 2
    oldest = next(m for m in stored(engine) if m.id == memory_id(1))
    newest = next(m for m in stored(engine) if m.content == "bob's newest")
    assert oldest.superseded_by == newest.id != alices.id and newest.owner == "bob"
    assert engine.get_memory(memory_id(1), scope=BOB).head_id == newest.id


def test_a_derived_id_planted_by_a_third_user_is_passed_over(tmp_path: Path) -> None:
    engine = make_engine()
    alices = engine.store_memory("alice's private note", scope=ALICE).memory
    planted = derived_id("import-owner", "bob", alices.id)
    carol = Scope.for_user("carol", project="default")
    carols = export_file(
        tmp_path, [good_line(id=planted, content="carol's trap", owner="carol")], "carol.jsonl"
    )
    assert (
        import_records(engine, read_memories(carols, "mcp-memory", owner="carol"), scope=carol).inserted == 1
    )
    path = export_file(tmp_path, [good_line(id=alices.id, content="bob's memory", owner="bob")], "bob.jsonl")
    assert (import_as_bob(engine, path).inserted, import_as_bob(engine, path).skipped) == (1, 1)
    (bobs,) = [m for m in stored(engine) if m.owner == "bob"]
    assert bobs.id not in (alices.id, planted) and bobs.content == "bob's memory"


# -- (d) dates outside 1970 .. now + 1 day ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("created_at", "9999-12-31T00:00:00+00:00"),
        ("created_at", "1900-01-01T00:00:00+00:00"),
        ("updated_at", "2026-01-03T00:00:00+00:00"),  # two days after the test clock's "now"
        ("deleted_at", "1969-12-31T23:59:59+00:00"),
        ("last_accessed", "0001-01-01T00:00:00+00:00"),
    ],
)
def test_dates_out_of_range_are_refused_with_the_line(tmp_path: Path, field: str, value: str) -> None:
    records = [good_line(id=memory_id(1)), good_line(id=memory_id(2), **{field: value})]
    engine = make_engine()
    with pytest.raises(InvalidInputError) as caught:
        import_file(engine, export_file(tmp_path, records))
    assert str(caught.value).startswith(f"line 3: {field} {value} is outside the accepted range")
    assert stored(engine) == []


def test_dates_at_the_edges_of_the_range_are_accepted(tmp_path: Path) -> None:
    engine = make_engine()
    soon = (engine.clock() + timedelta(hours=23)).isoformat()
    epoch = "1970-01-01T00:00:00+00:00"
    outcome = import_file(engine, export_file(tmp_path, [good_line(created_at=epoch, updated_at=soon)]))
    assert outcome.inserted == 1


def test_a_chatgpt_message_from_year_9999_names_the_conversation(tmp_path: Path) -> None:
    export = chatgpt_export()
    export[0]["mapping"]["n2"]["message"]["create_time"] = 253_402_000_000.0  # in the year 9999
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    engine = make_engine()
    with pytest.raises(InvalidInputError) as caught:
        import_file(engine, path, "chatgpt")
    assert str(caught.value).startswith(
        "conversation 1 ('Trip to Lisbon'), message n2: created_at 9999-"
    ) and "is outside the accepted range" in str(caught.value)
    assert stored(engine) == []


# -- (e) a UTF-8 byte order mark is accepted ---------------------------------------------------------------
def test_a_byte_order_mark_is_accepted_in_every_format(tmp_path: Path) -> None:
    ours = export_file(tmp_path, [good_line()])
    graph = tmp_path / "memory.jsonl"
    graph.write_text('{"type": "entity", "name": "Ada", "observations": ["Writes Rust"]}\n', encoding="utf-8")
    chats = tmp_path / "conversations.json"
    chats.write_text(json.dumps(chatgpt_export()), encoding="utf-8")
    archive = tmp_path / "chatgpt.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("conversations.json", "\ufeff" + json.dumps(chatgpt_export()))
    for path in (ours, graph, chats):
        path.write_text("\ufeff" + path.read_text(encoding="utf-8"), encoding="utf-8")
    expected = {ours: "mcp-memory", graph: "mcp-knowledge-graph", chats: "chatgpt", archive: "chatgpt"}
    for path, format in expected.items():
        assert detect_format(path) == format
        assert len(read_memories(path, format)) >= 1  # type: ignore[arg-type]
    assert [m.content for m in read_memories(ours, "mcp-memory")] == ["hello"]
