"""Export / import: the mcp-memory JSON Lines format (lossless, byte-identical round trips), and the
ChatGPT and MCP knowledge-graph importers."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import InvalidInputError, Memory, MemoryEngine, MemoryType, Scope
from mcp_memory_core.passages import split_passages
from mcp_memory_core.protocols import StoreCapabilities, Vector
from mcp_memory_core.transfer import (
    ExportRecord,
    decode_vectors,
    default_import_namespace,
    detect_format,
    encode_vectors,
    export_memories,
    import_chatgpt,
    import_knowledge_graph,
    import_records,
    parse_chatgpt_conversations,
    parse_knowledge_graph,
    read_mcp_memory_jsonl,
    read_memories,
)
from mcp_memory_rankers import SimilarityRanker
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock

NOW = datetime(2026, 2, 3, 4, 5, 6, 789012, tzinfo=UTC)


class MicroClock:
    """Ticks by 1.234567 ms: timestamps with every microsecond digit in use."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1234567)
        return self.now


def make_engine(store: Any = None, namespace: str = "default", clock: Any = None) -> MemoryEngine:
    return MemoryEngine(
        store if store is not None else InMemoryStore(),
        HashEmbedder(),
        SimilarityRanker(),
        namespace=namespace,
        clock=clock or MicroClock(),
    )


def populate(engine: MemoryEngine) -> dict[str, str]:
    """A chain A→B→C, a tombstone, a pin, tags, unicode metadata, access counts, two namespaces."""
    a = engine.store_memory("alpha bravo staging runs postgres 13", {"project": "atlas"}).memory
    b = engine.update_memory(a.id, "staging runs postgres 15 now").memory
    c = engine.update_memory(b.id, "staging runs postgres 16 since march", tags=["db", "staging"]).memory
    gone = engine.store_memory("the old vpn password rotates weekly").memory
    engine.delete_memory(gone.id)
    pinned = engine.store_memory(
        "Zoë prefers tea — 緑茶, never coffee ☕",
        {"lang": "日本語", "nested": {"ü": [1, 2.5, True, None]}},
        type="procedural",
        tags=["préférence", "tea"],
        importance=0.9,
    ).memory
    engine.pin_memory(pinned.id)
    engine.search_memories("tea coffee", limit=3)  # access statistics
    work = MemoryEngine(engine.store, engine.embedder, engine.ranker, namespace="work", clock=engine.clock)
    w = work.store_memory(
        "deploys happen on tuesdays", type="episodic", occurred_at="2025-12-02T10:00:00Z", thread="chat 7"
    ).memory
    return {"a": a.id, "b": b.id, "c": c.id, "gone": gone.id, "pinned": pinned.id, "work": w.id}


def export_text(engine: MemoryEngine, namespace: str | None = None, now: datetime = NOW) -> str:
    out = io.StringIO()
    export_memories(engine, out, namespace=namespace, now=now)
    return out.getvalue()


def reimport(text: str, engine: MemoryEngine) -> Any:
    return import_records(engine, read_mcp_memory_jsonl(io.StringIO(text)))


# -- the mcp-memory format ---------------------------------------------------------------------------
def test_export_record_mirrors_every_memory_field() -> None:
    assert set(ExportRecord.model_fields) - {"vectors"} == set(Memory.model_fields)


def test_export_format_header_and_records() -> None:
    engine = make_engine()
    ids = populate(engine)
    lines = export_text(engine).splitlines()
    header = json.loads(lines[0])
    assert header == {
        "format": "mcp-memory",
        "version": 1,
        "exported_at": "2026-02-03T04:05:06.789012+00:00",
        "count": 6,
    }
    records = [json.loads(line) for line in lines[1:]]
    assert len(records) == 6
    assert all(set(r) == set(Memory.model_fields) for r in records)
    assert [(r["namespace"], r["created_at"], r["id"]) for r in records] == sorted(
        (r["namespace"], r["created_at"], r["id"]) for r in records
    )
    by_id = {r["id"]: r for r in records}
    assert by_id[ids["a"]]["superseded_by"] == ids["b"] and by_id[ids["b"]]["superseded_by"] == ids["c"]
    assert by_id[ids["gone"]]["deleted_at"] is not None
    assert by_id[ids["pinned"]]["pinned"] is True and by_id[ids["pinned"]]["access_count"] == 1
    assert by_id[ids["pinned"]]["tags"] == ["préférence", "tea"]
    assert by_id[ids["work"]]["namespace"] == "work"
    assert by_id[ids["c"]]["created_at"].endswith("+00:00") and "." in by_id[ids["c"]]["created_at"]
    assert "vector" not in lines[1] and "embedding" not in lines[1]
    assert "緑茶" in export_text(engine)  # ensure_ascii=False: readable UTF-8


def test_round_trip_is_byte_identical() -> None:
    original = make_engine()
    ids = populate(original)
    first = export_text(original)
    fresh = make_engine()
    outcome = reimport(first, fresh)
    assert (outcome.inserted, outcome.skipped) == (6, 0)
    assert export_text(fresh) == first
    # and the imported database behaves: old wording finds the head, the tombstone stays hidden
    hits = fresh.search_memories("alpha bravo staging runs postgres 13", limit=3)
    assert hits[0].memory.id == ids["c"] and hits[0].matched_id == ids["a"]
    assert ids["gone"] not in [h.memory.id for h in fresh.search_memories("vpn password rotates", limit=5)]


def test_round_trip_through_the_sqlite_store_is_byte_identical(tmp_path: Path) -> None:
    sqlite_vec = pytest.importorskip("mcp_memory_sqlite_vec")
    original = make_engine(sqlite_vec.SqliteVecStore(tmp_path / "a.db"))
    populate(original)
    first = export_text(original)
    fresh = make_engine(sqlite_vec.SqliteVecStore(tmp_path / "b.db"))
    reimport(first, fresh)
    assert export_text(fresh) == first
    original.close()
    fresh.close()


def test_reimport_inserts_nothing() -> None:
    original = make_engine()
    populate(original)
    text = export_text(original)
    fresh = make_engine()
    reimport(text, fresh)
    again = reimport(text, fresh)
    assert (again.inserted, again.skipped) == (0, 6)
    assert export_text(fresh) == text


def test_export_one_namespace_and_exported_at_default() -> None:
    engine = make_engine()
    ids = populate(engine)
    lines = export_text(engine, namespace="work").splitlines()
    assert json.loads(lines[0])["count"] == 1 and json.loads(lines[1])["id"] == ids["work"]
    out = io.StringIO()
    assert export_memories(engine, out, namespace="nobody") == 0
    header = json.loads(out.getvalue())
    assert header["count"] == 0 and datetime.fromisoformat(header["exported_at"]).tzinfo is not None


def test_progress_callback_covers_every_record() -> None:
    original = make_engine()
    populate(original)
    seen: list[int] = []
    import_records(
        make_engine(),
        read_mcp_memory_jsonl(io.StringIO(export_text(original))),
        batch_size=4,
        on_batch=seen.append,
    )
    assert seen == [4, 2]


def good_line(**changes: Any) -> str:
    record = {
        "id": "6f1c1f8e-2f55-4a55-8a55-000000000001",
        "content": "hello",
        "metadata": {},
        "created_at": "2026-01-01T00:00:00.000000+00:00",
        "updated_at": "2026-01-01T00:00:00.000000+00:00",
        "superseded_by": None,
        "deleted_at": None,
        "namespace": "default",
        "type": "semantic",
        "tags": [],
        "importance": 0.5,
        "pinned": False,
        "access_count": 0,
        "last_accessed": None,
    }
    record.update(changes)
    return json.dumps(record)


HEADER = '{"format": "mcp-memory", "version": 1, "count": 1}'


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], "empty"),
        (["not json"], "line 1: not JSON"),
        (['{"format": "something-else"}'], "line 1: not an mcp-memory export header"),
        (['{"format": "mcp-memory", "version": 3}'], "unsupported export version 3 (written by a newer"),
        (['{"format": "mcp-memory", "version": "one"}'], "line 1: invalid export header: version"),
        ([HEADER, "{broken"], "line 2: not valid JSON"),
        ([HEADER, good_line(importance=1.5)], "line 2: invalid memory: importance"),
        ([HEADER, good_line(id="nope")], "line 2: invalid memory: id: 'nope' is not a memory id"),
        ([HEADER, good_line(content="  ")], "line 2: invalid memory: content"),
        ([HEADER, good_line(created_at="2026-01-01T00:00:00")], "line 2: invalid memory: created_at"),
        ([HEADER, good_line(pinned="yes")], "line 2: invalid memory: pinned"),
        ([HEADER, good_line(type="dream")], "line 2: invalid memory: type"),
        ([HEADER, good_line(vector=[0.1])], "line 2: invalid memory: vector"),
        ([HEADER, good_line(namespace="Bad Name")], "line 2: invalid memory: namespace"),
        ([HEADER, "", good_line(), good_line()], "line 4: duplicate memory id"),
        (['{"format": "mcp-memory", "version": 1, "count": 3}', good_line()], "says 3 memories but"),
    ],
)
def test_bad_input_names_the_line(lines: list[str], message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        list(read_mcp_memory_jsonl(lines))
    assert message in str(caught.value)


def test_reader_accepts_blank_lines_and_normalizes_times() -> None:
    lines = [HEADER, "", good_line(created_at="2026-01-01T02:00:00+02:00", tags=["a"]), "  "]
    (memory,) = read_mcp_memory_jsonl(lines)
    assert memory.created_at == datetime(2026, 1, 1, tzinfo=UTC) and memory.tags == ("a",)
    # an export older than occurred_at and thread: the memory happened when it was created, no thread
    assert memory.occurred_at == memory.created_at and memory.thread is None


def test_occurred_at_and_thread_survive_export_and_import() -> None:
    lines = [HEADER, good_line(occurred_at="2023-05-08T13:56:00+02:00", thread="session 3")]
    (memory,) = read_mcp_memory_jsonl(lines)
    assert memory.occurred_at == datetime(2023, 5, 8, 11, 56, tzinfo=UTC) and memory.thread == "session 3"
    engine = make_engine()
    import_records(engine, [memory])
    out = io.StringIO()
    export_memories(engine, out, now=NOW)
    record = json.loads(out.getvalue().splitlines()[1])
    assert (record["occurred_at"], record["thread"]) == ("2023-05-08T11:56:00.000000+00:00", "session 3")
    with pytest.raises(InvalidInputError, match="line 2: invalid memory: thread"):
        read_mcp_memory_jsonl([HEADER, good_line(thread="")])


def test_a_bad_line_late_in_a_file_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join([HEADER.replace("1}", "2}"), good_line(), good_line(id="bad")]) + "\n")
    engine = make_engine()
    with pytest.raises(InvalidInputError, match="line 3"):
        import_records(engine, read_memories(path, "mcp-memory"))
    assert list(engine.store.iter_all()) == []


def test_the_reader_holds_records_to_the_engines_limits(tmp_path: Path) -> None:
    """A record over the limits is refused before anything is written, naming its line; an engine
    configured with bigger limits reads (and imports) it."""
    from mcp_memory_core.validation import Limits

    path = tmp_path / "export.jsonl"
    path.write_text("\n".join([HEADER, good_line(content="é" * 20_000)]) + "\n")
    engine = make_engine()
    with pytest.raises(InvalidInputError, match=r"line 2: invalid memory: content: content is 40,000 bytes"):
        read_memories(path, "mcp-memory")
    roomy = MemoryEngine(
        InMemoryStore(), HashEmbedder(), SimilarityRanker(), limits=Limits(content_bytes=40_000)
    )
    assert import_records(roomy, read_memories(path, "mcp-memory", limits=roomy.limits)).inserted == 1
    assert list(engine.store.iter_all()) == []


# -- ChatGPT ------------------------------------------------------------------------------------------
def chatgpt_export() -> list[dict[str, Any]]:
    """Two conversations as ChatGPT's conversations.json writes them (trimmed to the fields we read)."""

    def node(
        node_id: str,
        role: str | None,
        parts: list[Any] | None,
        parent: str | None,
        children: list[str],
        create_time: float | None = None,
        content_type: str = "text",
        hidden: bool = False,
    ) -> dict[str, Any]:
        message = None
        if role is not None:
            message = {
                "id": node_id,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": create_time,
                "update_time": None,
                "content": {"content_type": content_type, "parts": parts},
                "status": "finished_successfully",
                "metadata": {"is_visually_hidden_from_conversation": True} if hidden else {},
                "recipient": "all",
            }
        return {"id": node_id, "message": message, "parent": parent, "children": children}

    trip = {
        "title": "Trip to Lisbon",
        "create_time": 1_700_000_000.123456,
        "update_time": 1_700_000_500.0,
        "conversation_id": "c0a1-lisbon",
        "id": "c0a1-lisbon",
        "current_node": "n5",
        "mapping": {
            "root": node("root", None, None, None, ["n1"]),
            "n1": node("n1", "system", [""], "root", ["n2"], hidden=True),
            "n2": node(
                "n2", "user", ["I'm vegetarian and I hate early flights."], "n1", ["n3"], 1_700_000_010.5
            ),
            "n3": node("n3", "assistant", ["Noted! Here are late flights…"], "n2", ["n4"], 1_700_000_020.0),
            "n4": node(
                "n4",
                "user",
                [
                    {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"},
                    "Is this hotel ok?",
                ],
                "n3",
                ["n5"],
                None,  # no time on the message: the conversation's is used
                content_type="multimodal_text",
            ),
            "n5": node("n5", "tool", ["search results"], "n4", [], 1_700_000_040.0),
        },
    }
    empty = {
        "title": "Empty chat",
        "create_time": 1_710_000_000.0,
        "id": "c0a2-empty",
        "mapping": {
            "root": node("root", None, None, None, ["u1"]),
            "u1": node("u1", "user", ["   "], "root", [], 1_710_000_001.0),
            "u2": node("u2", "user", None, "root", [], 1_710_000_002.0, content_type="user_editable_context"),
        },
    }
    return [trip, empty]


def test_chatgpt_one_memory_per_user_message() -> None:
    memories = parse_chatgpt_conversations(chatgpt_export(), namespace="chats")
    assert [m.content for m in memories] == ["Is this hotel ok?", "I'm vegetarian and I hate early flights."]
    hotel, veg = memories
    assert veg.type == MemoryType.SEMANTIC and veg.tags == ("chatgpt",) and veg.namespace == "chats"
    assert veg.metadata == {
        "source": "chatgpt",
        "conversation": "Trip to Lisbon",
        "conversation_id": "c0a1-lisbon",
        "message_id": "n2",
        "role": "user",
    }
    assert veg.created_at == datetime.fromtimestamp(1_700_000_010.5, UTC) == veg.updated_at == veg.occurred_at
    assert veg.thread == hotel.thread == "chatgpt:c0a1-lisbon"  # one thread per conversation
    assert hotel.created_at == datetime.fromtimestamp(1_700_000_000.123456, UTC)
    again = parse_chatgpt_conversations(chatgpt_export(), namespace="chats")
    assert [m.id for m in again] == [m.id for m in memories]  # deterministic ids
    elsewhere = parse_chatgpt_conversations(chatgpt_export(), namespace="other")
    assert not {m.id for m in elsewhere} & {m.id for m in memories}  # per target namespace


def test_chatgpt_assistant_messages_on_request() -> None:
    memories = parse_chatgpt_conversations(chatgpt_export(), include_assistant=True)
    assert [m.metadata["role"] for m in memories] == ["user", "user", "assistant"]


def test_chatgpt_import_is_idempotent_and_searchable() -> None:
    engine = make_engine(namespace="project")
    first = import_chatgpt(engine, chatgpt_export(), namespace="chats")
    assert (first.inserted, first.skipped) == (2, 0)
    again = import_chatgpt(engine, chatgpt_export(), namespace="chats")
    assert (again.inserted, again.skipped) == (0, 2)
    assert {m.namespace for m in engine.store.iter_all()} == {"chats"}


def test_a_chat_export_goes_to_the_user_namespace_unless_one_is_given() -> None:
    """What a person told a chat assistant is about them, not about the project the import ran in."""
    assert {m.namespace for m in parse_chatgpt_conversations(chatgpt_export())} == {"user"}
    engine = make_engine(namespace="project")
    import_chatgpt(engine, chatgpt_export())
    assert {m.namespace for m in engine.store.iter_all()} == {"user"}
    assert default_import_namespace("chatgpt") == "user"
    assert default_import_namespace("mcp-knowledge-graph") is None  # the current project's


def chit_chat_export() -> list[dict[str, Any]]:
    """The Lisbon conversation with greetings and thanks around its facts."""
    export = chatgpt_export()
    mapping = export[0]["mapping"]
    for node_id, role, text, when in (
        ("c1", "user", "hi", 1_700_000_001.0),
        ("c2", "assistant", "Hello! How can I help?", 1_700_000_002.0),
        ("c3", "user", "thanks!", 1_700_000_050.0),
        ("c4", "assistant", "You're welcome!", 1_700_000_051.0),
        ("c5", "user", "ok, my flight lands at 21:40", 1_700_000_052.0),
    ):
        mapping[node_id] = {
            "id": node_id,
            "message": {
                "author": {"role": role},
                "create_time": when,
                "content": {"content_type": "text", "parts": [text]},
            },
            "parent": None,
            "children": [],
        }
    return export


def test_chatgpt_chit_chat_is_left_out_and_counted() -> None:
    users = parse_chatgpt_conversations(chit_chat_export())
    assert [m.content for m in users] == [
        "Is this hotel ok?",
        "I'm vegetarian and I hate early flights.",
        "ok, my flight lands at 21:40",
    ]
    assert users.chit_chat == 2  # "hi", "thanks!"
    both = parse_chatgpt_conversations(chit_chat_export(), include_assistant=True)
    assert both.chit_chat == 3 and "Hello! How can I help?" in [m.content for m in both]
    engine = make_engine()
    outcome = import_chatgpt(engine, chit_chat_export())
    assert (outcome.inserted, outcome.chit_chat) == (3, 2)
    again = import_chatgpt(engine, chit_chat_export())
    assert (again.inserted, again.skipped, again.chit_chat) == (0, 3, 2)


def test_chatgpt_bad_input() -> None:
    with pytest.raises(InvalidInputError, match="list of conversations"):
        parse_chatgpt_conversations({"conversations": []})
    with pytest.raises(InvalidInputError, match=r"conversation 1 .*no 'mapping'"):
        parse_chatgpt_conversations([{"title": "x"}])
    with pytest.raises(InvalidInputError, match="namespace"):
        parse_chatgpt_conversations([], namespace="Not Valid")


def test_chatgpt_long_messages_are_cut_to_the_byte_limit_and_say_so() -> None:
    from mcp_memory_core.validation import Limits

    export = chatgpt_export()
    export[0]["mapping"]["n2"]["message"]["content"]["parts"] = ["é" * 150_000]
    for limits, cap in ((None, 32_768), (Limits(content_bytes=1001), 1001)):
        parsed = parse_chatgpt_conversations(export, **({"limits": limits} if limits else {}))
        veg = next(m for m in parsed if m.metadata["message_id"] == "n2")
        assert cap - 4 < len(veg.content.encode()) <= cap and veg.content.endswith("[truncated]")
        assert veg.metadata["truncated"] is True and veg.metadata["original_chars"] == 150_000


def test_chatgpt_zip_and_format_detection(tmp_path: Path) -> None:
    plain = tmp_path / "conversations.json"
    plain.write_text(json.dumps(chatgpt_export()), encoding="utf-8")
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("chat.html", "<html></html>")
        zf.writestr("conversations.json", json.dumps(chatgpt_export()))
    assert detect_format(plain) == "chatgpt" and detect_format(archive) == "chatgpt"
    from_zip = read_memories(archive, "chatgpt", namespace="chats")
    assert [m.id for m in from_zip] == [m.id for m in read_memories(plain, "chatgpt", namespace="chats")]


# -- MCP knowledge graph -------------------------------------------------------------------------------
KNOWLEDGE_GRAPH = "\n".join(
    json.dumps(line)
    for line in [
        {
            "type": "entity",
            "name": "John_Smith",
            "entityType": "person",
            "observations": ["Speaks fluent Spanish", "Graduated in 2019", "Speaks fluent Spanish"],
        },
        {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": []},
        {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
    ]
)


def test_knowledge_graph_memories() -> None:
    memories = parse_knowledge_graph(KNOWLEDGE_GRAPH.splitlines(), namespace="kg", now=NOW)
    assert [m.content for m in memories] == [
        "John_Smith: Speaks fluent Spanish",
        "John_Smith: Graduated in 2019",
        "John_Smith works at Anthropic",
    ]
    spanish, _, works = memories
    assert spanish.type == MemoryType.SEMANTIC and spanish.tags == ("person",) and spanish.namespace == "kg"
    assert spanish.metadata == {
        "source": "mcp-knowledge-graph",
        "entity": "John_Smith",
        "entity_type": "person",
    }
    assert works.metadata == {
        "source": "mcp-knowledge-graph",
        "from": "John_Smith",
        "relation_type": "works_at",
        "to": "Anthropic",
    }
    assert spanish.created_at == NOW
    later = parse_knowledge_graph(KNOWLEDGE_GRAPH.splitlines(), namespace="kg", now=NOW + timedelta(days=1))
    assert [m.id for m in later] == [m.id for m in memories]


def test_knowledge_graph_import_is_idempotent(tmp_path: Path) -> None:
    engine = make_engine(namespace="kg")
    first = import_knowledge_graph(engine, KNOWLEDGE_GRAPH.splitlines())
    assert (first.inserted, first.skipped) == (3, 0)
    again = import_knowledge_graph(engine, KNOWLEDGE_GRAPH.splitlines())
    assert (again.inserted, again.skipped) == (0, 3)
    hits = engine.search_memories("which language does John speak", limit=1)
    assert hits[0].memory.content == "John_Smith: Speaks fluent Spanish"
    path = tmp_path / "memory.jsonl"
    path.write_text(KNOWLEDGE_GRAPH + "\n")
    assert detect_format(path) == "mcp-knowledge-graph"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"type": "entity"}', "line 1: the entity needs a non-empty string 'name'"),
        ('\n{"type": "entity", "name": "x", "observations": "one"}', "line 2: the entity's 'observations'"),
        (
            '{"type": "relation", "from": "a", "to": "b"}',
            "line 1: the relation needs a non-empty string 'relationType'",
        ),
        ('{"type": "memory"}', "line 1: unknown record type 'memory'"),
        ("[1]", "line 1: expected a JSON object"),
        ("nope", "line 1: not JSON"),
    ],
)
def test_knowledge_graph_bad_lines(text: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_knowledge_graph(text.splitlines())
    assert message in str(caught.value)


def test_format_detection(tmp_path: Path) -> None:
    engine = make_engine()
    populate(engine)
    ours = tmp_path / "export.jsonl"
    ours.write_text(export_text(engine), encoding="utf-8")
    assert detect_format(ours) == "mcp-memory"
    odd = tmp_path / "odd.txt"
    odd.write_text("hello\n")
    with pytest.raises(InvalidInputError, match="Cannot tell the format"):
        detect_format(odd)


# -- exports with vectors (format version 2) ------------------------------------------------------
LONG = (
    "The launch checklist has three parts. First the database is backed up to cold storage. "
    "Then the release branch is tagged by the on-call engineer. Finally the status page is updated."
)


class CountingEmbedder(HashEmbedder):
    """HashEmbedder that counts the texts it embeds."""

    def __init__(self, dimensions: int = 64) -> None:
        super().__init__(dimensions)
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        self.embedded.extend(texts)
        return super().embed_documents(texts)


def engine_with(embedder: HashEmbedder, store: Any = None, **kwargs: Any) -> MemoryEngine:
    return MemoryEngine(
        store if store is not None else InMemoryStore(),
        embedder,
        SimilarityRanker(),
        clock=TickingClock(),
        **kwargs,
    )


def export(engine: MemoryEngine, vectors: bool = True, scope: Scope | None = None) -> str:
    out = io.StringIO()
    export_memories(engine, out, now=NOW, vectors=vectors, scope=scope)
    return out.getvalue()


@pytest.fixture
def source() -> MemoryEngine:
    engine = engine_with(HashEmbedder())
    populate(engine)
    assert len(split_passages(LONG)) == 5  # the whole text and its four sentences
    engine.store_memory(LONG)
    return engine


def all_ids(engine: MemoryEngine) -> list[str]:
    return [m.id for m in engine.iter_memories("*")]


def test_the_export_carries_every_vector_and_names_the_model(source: MemoryEngine) -> None:
    lines = export(source).splitlines()
    header = json.loads(lines[0])
    assert header["version"] == 2
    assert header["embedder"] == {"model": "hash-64", "dimensions": 64}
    records = [json.loads(line) for line in lines[1:]]
    assert len(records) == header["count"] == 7
    stored = source.store.vectors(all_ids(source))  # type: ignore[attr-defined]
    for record in records:
        assert len(record["vectors"]) == len(split_passages(record["content"]))
        assert np.array_equal(decode_vectors(record["vectors"], 64), stored[record["id"]])
    assert max(len(r["vectors"]) for r in records) == 5
    # Without vectors the export is version 1, exactly as before.
    plain = export(source, vectors=False).splitlines()
    assert json.loads(plain[0])["version"] == 1 and "embedder" not in json.loads(plain[0])
    assert all("vectors" not in json.loads(line) for line in plain[1:])


def test_same_model_reuses_the_vectors_and_embeds_nothing(source: MemoryEngine) -> None:
    text = export(source)
    embedder = CountingEmbedder()
    target = engine_with(embedder)
    outcome = import_records(target, read_mcp_memory_jsonl(text.splitlines()))
    assert (outcome.inserted, outcome.skipped, outcome.reused) == (7, 0, 7)
    assert embedder.embedded == []
    ids = all_ids(source)
    before = source.store.vectors(ids)  # type: ignore[attr-defined]
    after = target.store.vectors(ids)  # type: ignore[attr-defined]
    assert set(after) == set(before) == set(ids)
    for memory_id in ids:
        assert np.array_equal(after[memory_id], before[memory_id])
    assert export(target) == text  # and the way back is byte-identical
    hits = target.search_memories("launch checklist database backed up", limit=1)
    assert hits[0].memory.content == LONG


def test_a_memory_imported_under_a_fresh_id_keeps_its_vectors(source: MemoryEngine) -> None:
    text = export(source)
    embedder = CountingEmbedder()
    target = engine_with(embedder)
    taken = all_ids(source)[0]  # another user already holds a memory with this id
    alice = Scope.for_user("alice")
    when = target.clock()
    planted = Memory(
        id=taken, content="alice's", owner="alice", namespace="user", created_at=when, updated_at=when
    )
    target.import_memories([planted], scope=alice)
    embedder.embedded.clear()
    outcome = import_records(target, read_mcp_memory_jsonl(text.splitlines()))
    assert (outcome.inserted, outcome.skipped, outcome.reused) == (7, 0, 7)
    assert embedder.embedded == []


def test_another_model_embeds_again(source: MemoryEngine) -> None:
    embedder = CountingEmbedder(dimensions=32)
    target = engine_with(embedder)
    outcome = import_records(target, read_mcp_memory_jsonl(export(source).splitlines()))
    assert (outcome.inserted, outcome.reused) == (7, 0)
    assert len(embedder.embedded) == 7 + 4  # every memory's text, and LONG's four sentences
    stored = target.store.vectors(all_ids(source))  # type: ignore[attr-defined]
    assert {array.shape[1] for array in stored.values()} == {32}


def test_a_memory_whose_rows_do_not_fit_its_passages_is_embedded_again(source: MemoryEngine) -> None:
    lines = export(source).splitlines()
    records = [json.loads(line) for line in lines[1:]]
    long = next(r for r in records if r["content"] == LONG)
    long["vectors"] = long["vectors"][:2]  # an older split, or an edited file: 2 rows for 5 passages
    text = "\n".join([lines[0], *(json.dumps(r) for r in records)])
    embedder = CountingEmbedder()
    target = engine_with(embedder)
    outcome = import_records(target, read_mcp_memory_jsonl(text.splitlines()))
    assert (outcome.inserted, outcome.reused) == (7, 6)
    assert embedder.embedded == split_passages(LONG)
    assert target.store.vectors([long["id"]])[long["id"]].shape == (5, 64)  # type: ignore[attr-defined]


def test_a_re_import_is_still_a_no_op(source: MemoryEngine) -> None:
    records = read_mcp_memory_jsonl(export(source).splitlines())
    target = engine_with(HashEmbedder())
    import_records(target, records)
    again = import_records(target, records)
    assert (again.inserted, again.skipped, again.reused) == (0, 7, 0)


def _line(record: dict[str, Any], **changes: Any) -> str:
    return json.dumps({**record, **changes})


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        (["not base64!"], "line 2: invalid vectors: vector 1 is not base64"),
        ([base64.b64encode(b"\0" * 12).decode()], "vector 1 holds 3 numbers, the header's embedder 64"),
        (
            [base64.b64encode(np.full(64, np.nan, dtype="<f4").tobytes()).decode()],
            "a vector holds a number that is not finite",
        ),
        ([], "line 2: invalid memory: vectors"),
        ("AAAA", "line 2: invalid memory: vectors"),
    ],
)
def test_a_bad_vector_is_refused_by_its_line(source: MemoryEngine, vectors: Any, message: str) -> None:
    lines = export(source).splitlines()
    first = json.loads(lines[1])
    with pytest.raises(InvalidInputError) as caught:
        read_mcp_memory_jsonl([lines[0], _line(first, vectors=vectors)])
    assert message in str(caught.value)


def test_vectors_without_an_embedder_in_the_header_are_refused(source: MemoryEngine) -> None:
    lines = export(source).splitlines()
    header = {k: v for k, v in json.loads(lines[0]).items() if k != "embedder"}
    with pytest.raises(
        InvalidInputError, match="line 2: this memory carries vectors but the header names no"
    ):
        read_mcp_memory_jsonl([json.dumps(header), lines[1]])


def test_encode_decode_round_trip_is_exact() -> None:
    rows = np.random.default_rng(3).standard_normal((3, 16)).astype(np.float32)
    assert np.array_equal(decode_vectors(encode_vectors(rows), 16), rows)


def test_only_ones_own_vectors_are_exported() -> None:
    alice = Scope.for_user("alice", project="atlas", teams=["core"], teammates=["bob"])
    bob = Scope.for_user("bob", project="atlas", teams=["core"], teammates=["alice"])
    engine = engine_with(HashEmbedder(), require_scope=True)
    shared = engine.store_memory("alice's team note", privacy_scope="team", scope=alice).memory
    secret = engine.store_memory("alice's private note", scope=alice).memory
    own = engine.store_memory("bob's own note", scope=bob).memory
    # Bob can read the team note, but it is alice's to export; her private one he cannot even see.
    assert set(engine.memory_vectors([shared.id, secret.id, own.id], scope=bob).rows) == {own.id}
    lines = export(engine, scope=bob).splitlines()
    assert [json.loads(line)["id"] for line in lines[1:]] == [own.id]


class NoVectorsStore(InMemoryStore):
    @property
    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities(keyword_search=True)


def test_a_store_that_cannot_read_vectors_says_so_before_writing() -> None:
    engine = engine_with(HashEmbedder(), store=NoVectorsStore())
    engine.store_memory("something")
    out = io.StringIO()
    with pytest.raises(InvalidInputError, match="cannot read its vectors back: export without vectors"):
        export_memories(engine, out, vectors=True)
    assert out.getvalue() == ""
