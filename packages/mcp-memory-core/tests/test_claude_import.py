"""The Claude.ai data export (``conversations.json``, or the ``.zip`` it comes in): the person's messages
by default, one thread per conversation, detected beside ChatGPT's, validated whole before anything is
written, idempotent, chit-chat left out and counted, bounded like every other import."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from test_import_safety import import_file, stored
from test_transfer import chatgpt_export, make_engine

from mcp_memory_core import InvalidInputError, MemoryType, Scope
from mcp_memory_core.filters import Filters
from mcp_memory_core.transfer import (
    chat_archive,
    default_import_namespace,
    detect_format,
    import_records,
    parse_claude_conversations,
    read_memories,
)
from mcp_memory_core.validation import Limits

KITCHEN = "0b6f3c55-8f1e-4c53-9a0e-3f1d2b8c7a10"
UNTITLED = "5d2e9a41-7c3b-4f0e-8a6d-1b9c0e4f2a37"
ACCOUNT = {"uuid": "e3b7a9c2-4d1f-4e8a-9b6c-2f0d1a3e5c78"}


def block(text: str, at: str) -> dict[str, Any]:
    """A text block of a message's ``content``, as the export writes it."""
    return {"start_timestamp": at, "stop_timestamp": at, "type": "text", "text": text, "citations": []}


def message(
    uuid: str,
    sender: str,
    at: str,
    text: str,
    content: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One of a conversation's ``chat_messages``, every field the export writes."""
    return {
        "uuid": uuid,
        "text": text,
        "content": [block(text, at)] if content is None else content,
        "sender": sender,
        "created_at": at,
        "updated_at": at,
        "attachments": [],
        "files": [],
        **extra,
    }


def claude_export() -> list[dict[str, Any]]:
    """Two conversations as Claude.ai's ``conversations.json`` writes them: a text block per turn, an
    assistant turn with a web search between its text blocks (its ``text`` carries the placeholder the
    export writes for blocks it cannot render), a turn whose ``text`` is empty but whose content is not
    and one the other way round, an attachment, a thinking block, an untitled conversation."""
    search = [
        block("Walnut and soapstone age well together.", "2025-03-02T18:04:20.100000Z"),
        {
            "start_timestamp": "2025-03-02T18:04:21.000000Z",
            "stop_timestamp": "2025-03-02T18:04:22.000000Z",
            "type": "tool_use",
            "name": "web_search",
            "input": {"query": "soapstone counter care"},
            "message": "Searching the web",
            "integration_name": None,
            "integration_icon_url": None,
            "context": None,
            "display_content": None,
        },
        {
            "start_timestamp": None,
            "stop_timestamp": None,
            "type": "tool_result",
            "name": "web_search",
            "content": [{"type": "knowledge", "title": "Soapstone care", "url": "https://example.com"}],
            "is_error": False,
            "message": None,
            "display_content": None,
        },
        block("Oil soapstone with mineral oil once a month.", "2025-03-02T18:04:23.000000Z"),
    ]
    kitchen = [
        message(
            "7a1f0c3e-0001-4b2a-9c1d-000000000001",
            "human",
            "2025-03-02T18:04:11.512436Z",
            "Our kitchen cabinets are walnut and the counters are soapstone.",
        ),
        message(
            "7a1f0c3e-0002-4b2a-9c1d-000000000002",
            "assistant",
            "2025-03-02T18:04:20.000000Z",
            "Walnut and soapstone age well together.\n\n```\nThis block is not supported on your current "
            "device yet.\n```\n\nOil soapstone with mineral oil once a month.",
            search,
            stop_reason="stop_sequence",
        ),
        message("7a1f0c3e-0003-4b2a-9c1d-000000000003", "human", "2025-03-02T18:05:00.000000Z", "thanks!"),
        message(
            "7a1f0c3e-0004-4b2a-9c1d-000000000004",
            "human",
            "2025-03-02T18:06:00.000000Z",
            "",
            [block("Which oil finish is food safe for a walnut cutting board?", "2025-03-02T18:06:00Z")],
        ),
        message(
            "7a1f0c3e-0005-4b2a-9c1d-000000000005",
            "human",
            "2025-03-02T18:07:00.000000Z",
            "I am allergic to tung oil.",
            [],
        ),
        message(
            "7a1f0c3e-0006-4b2a-9c1d-000000000006",
            "human",
            "2025-03-02T18:08:00.000000Z",
            "Here is the floor plan of the kitchen.",
            attachments=[
                {
                    "file_name": "floorplan.txt",
                    "file_size": 21,
                    "file_type": "text/plain",
                    "extracted_content": "Kitchen 4.2 m x 3.1 m",
                }
            ],
            files=[{"file_name": "photo.jpg"}],
        ),
    ]
    thinking = [
        {
            "start_timestamp": "2025-04-10T07:30:05Z",
            "stop_timestamp": "2025-04-10T07:30:06Z",
            "type": "thinking",
            "thinking": "The user asks about a bike; answer briefly.",
            "summaries": [{"summary": "Thinking about bikes."}],
            "cut_off": False,
        },
        block("A 56 cm frame suits that height.", "2025-04-10T07:30:07Z"),
    ]
    untitled = [
        message(
            "9c4d2b1a-0001-4e3f-8a7b-000000000001",
            "human",
            "2025-04-10T07:30:00.250000Z",
            "I am 1.78 m tall and want a road bike.",
        ),
        message(
            "9c4d2b1a-0002-4e3f-8a7b-000000000002",
            "assistant",
            "2025-04-10T07:30:05.000000Z",
            "A 56 cm frame suits that height.",
            thinking,
        ),
    ]
    return [
        {
            "uuid": KITCHEN,
            "name": "Kitchen remodel",
            "created_at": "2025-03-02T18:04:10.918724Z",
            "updated_at": "2025-03-02T18:08:00.000000Z",
            "account": ACCOUNT,
            "chat_messages": kitchen,
        },
        {
            "uuid": UNTITLED,
            "name": "",
            "created_at": "2025-04-10T07:29:59.000000Z",
            "updated_at": "2025-04-10T07:30:05.000000Z",
            "account": ACCOUNT,
            "chat_messages": untitled,
        },
    ]


def write_export(tmp_path: Path, export: Any = None, name: str = "conversations.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(claude_export() if export is None else export), encoding="utf-8")
    return path


def zip_export(tmp_path: Path, text: str | None = None, name: str = "claude-export.zip") -> Path:
    """The zip Claude.ai mails: conversations.json beside users.json, projects.json and memories.json."""
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", json.dumps([{"uuid": ACCOUNT["uuid"], "full_name": "Ada"}]))
        archive.writestr("projects.json", "[]")
        archive.writestr("memories.json", "[]")
        archive.writestr("conversations.json", json.dumps(claude_export()) if text is None else text)
    return path


# -- what becomes a memory -------------------------------------------------------------------------------
def test_one_memory_per_human_message_in_its_conversations_thread() -> None:
    memories = parse_claude_conversations(claude_export())
    assert [m.content for m in memories] == [
        "Our kitchen cabinets are walnut and the counters are soapstone.",
        "Which oil finish is food safe for a walnut cutting board?",  # text empty: its content block
        "I am allergic to tung oil.",  # content empty: its text
        "Here is the floor plan of the kitchen.",
        "I am 1.78 m tall and want a road bike.",
    ]
    cabinets, *_, plan, bike = memories
    assert cabinets.thread == plan.thread == f"claude:{KITCHEN}" and bike.thread == f"claude:{UNTITLED}"
    assert cabinets.occurred_at == cabinets.created_at == datetime(2025, 3, 2, 18, 4, 11, 512436, tzinfo=UTC)
    assert bike.occurred_at == datetime(2025, 4, 10, 7, 30, 0, 250000, tzinfo=UTC)
    assert {m.namespace for m in memories} == {"user"} and {m.type for m in memories} == {MemoryType.SEMANTIC}
    assert cabinets.tags == ("claude",)
    assert cabinets.metadata == {
        "source": "claude",
        "conversation": "Kitchen remodel",
        "conversation_id": KITCHEN,
        "message_id": "7a1f0c3e-0001-4b2a-9c1d-000000000001",
        "role": "user",
    }
    assert plan.metadata["attachments"] == ["floorplan.txt", "photo.jpg"]  # their names; not their text
    assert bike.metadata["conversation"] == "Untitled"
    assert (
        memories.where(bike.id) == "conversation 2 ('Untitled'), message 9c4d2b1a-0001-4e3f-8a7b-000000000001"
    )


def test_the_assistants_replies_on_request_are_their_text_blocks_only() -> None:
    memories = parse_claude_conversations(claude_export(), include_assistant=True)
    replies = [m for m in memories if m.metadata["role"] == "assistant"]
    assert [m.content for m in replies] == [
        # no tool call, no search result, no "not supported on your device" placeholder, no thinking
        "Walnut and soapstone age well together.\nOil soapstone with mineral oil once a month.",
        "A 56 cm frame suits that height.",
    ]
    assert len(memories) == 7


def test_ids_are_derived_so_a_parse_gives_the_same_ids_per_namespace() -> None:
    first = [m.id for m in parse_claude_conversations(claude_export())]
    assert first == [m.id for m in parse_claude_conversations(claude_export())]
    elsewhere = [m.id for m in parse_claude_conversations(claude_export(), namespace="chats")]
    assert not set(first) & set(elsewhere)
    twice = claude_export()
    twice.append(twice[0])  # a conversation listed twice imports once
    assert [m.id for m in parse_claude_conversations(twice)] == first


def test_chit_chat_is_left_out_and_counted() -> None:
    export = claude_export()
    for number, text in enumerate(("hi", "ok, got it", "👍"), start=7):
        export[0]["chat_messages"].append(
            message(
                f"7a1f0c3e-{number:04d}-4b2a-9c1d-0000000000{number:02d}",
                "human",
                "2025-03-02T19:00:00Z",
                text,
            )
        )
    parsed = parse_claude_conversations(export)
    assert parsed.chit_chat == 4  # "thanks!" and these three
    assert "thanks!" not in [m.content for m in parsed]


def test_a_message_longer_than_the_limit_is_cut_and_says_so() -> None:
    export = claude_export()
    export[0]["chat_messages"][0]["text"] = export[0]["chat_messages"][0]["content"][0]["text"] = "w" * 5000
    cut = parse_claude_conversations(export, limits=Limits(content_bytes=1000))[0]
    assert len(cut.content.encode()) <= 1000 and cut.content.endswith("…[truncated]")
    assert cut.metadata["truncated"] is True and cut.metadata["original_chars"] == 5000


# -- bad input: one sentence naming the conversation, nothing written ------------------------------------------
def broken(change: Any) -> list[dict[str, Any]]:
    export = claude_export()
    change(export)
    return export


@pytest.mark.parametrize(
    ("export", "sentence"),
    [
        (
            {"conversations": []},
            "A Claude.ai export's conversations.json holds a JSON list of conversations; this is not a list.",
        ),
        (["not a conversation"], "conversation 1: expected an object, got str."),
        (
            broken(lambda e: e[1].pop("uuid")),
            "conversation 2 ('Untitled'): no 'uuid'; is this a Claude.ai export's conversations.json?",
        ),
        (
            broken(lambda e: e[0].update(chat_messages={})),
            "conversation 1 ('Kitchen remodel'): 'chat_messages' is not a list of messages.",
        ),
        (
            broken(lambda e: e[0]["chat_messages"].insert(2, None)),
            "conversation 1 ('Kitchen remodel'), message 3: expected an object, got NoneType.",
        ),
        (
            broken(lambda e: e[0]["chat_messages"][0].pop("uuid")),
            "conversation 1 ('Kitchen remodel'), message 1: no 'uuid'; is this a Claude.ai export's conversations.json?",
        ),
        (
            broken(lambda e: e[0]["chat_messages"][3].update(created_at="yesterday")),
            "conversation 1 "
            "('Kitchen remodel'), message 7a1f0c3e-0004-4b2a-9c1d-000000000004: created_at 'yesterday' is not "
            "an ISO 8601 time.",
        ),
        (
            broken(lambda e: [e[1].pop("created_at"), e[1]["chat_messages"][0].pop("created_at")]),
            "conversation 2 ('Untitled'), message 9c4d2b1a-0001-4e3f-8a7b-000000000001: no created_at on the "
            "message or the conversation.",
        ),
    ],
)
def test_bad_input_is_one_sentence_naming_the_conversation(export: Any, sentence: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_claude_conversations(export)
    assert str(caught.value) == sentence


def test_a_bad_conversation_late_in_the_file_writes_nothing(tmp_path: Path) -> None:
    export = claude_export() * 1
    export.append({"uuid": "c3", "name": "Broken", "chat_messages": "nope"})
    engine = make_engine()
    with pytest.raises(
        InvalidInputError, match=r"^conversation 3 \('Broken'\): 'chat_messages' is not a list"
    ):
        import_file(engine, write_export(tmp_path, export), "claude")
    assert stored(engine) == []


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ('[{"uuid": "a", "chat_messages": []}', "not JSON (line 1: Expecting ',' delimiter)."),
        ("", "not JSON (line 1: Expecting value)."),
        ('{"uuid": "a"}', "A Claude.ai export's conversations.json holds a JSON list of conversations"),
    ],
)
def test_malformed_json_is_one_sentence(tmp_path: Path, text: str, sentence: str) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        read_memories(path, "claude")
    assert sentence in str(caught.value) and "\n" not in str(caught.value)


# -- files: the json, the zip, detection, bounds ----------------------------------------------------------------
def test_the_zip_and_its_conversations_json_read_the_same(tmp_path: Path) -> None:
    plain = read_memories(write_export(tmp_path), "claude")
    from_zip = read_memories(zip_export(tmp_path), "claude")
    assert [m.model_dump() for m in from_zip] == [m.model_dump() for m in plain]
    assert len(plain) == 5 and plain.chit_chat == 1


def test_the_format_is_detected_beside_chatgpts(tmp_path: Path) -> None:
    assert detect_format(write_export(tmp_path)) == "claude"
    assert detect_format(zip_export(tmp_path)) == "claude"
    chatgpt = tmp_path / "chatgpt.json"
    chatgpt.write_text(json.dumps(chatgpt_export()), encoding="utf-8")
    assert detect_format(chatgpt) == "chatgpt"
    bom = tmp_path / "bom.json"
    bom.write_text("\ufeff" + json.dumps(claude_export()), encoding="utf-8")
    assert detect_format(bom) == "claude"
    assert default_import_namespace("claude") == "user"


def test_a_list_of_something_else_says_so_in_one_sentence(tmp_path: Path) -> None:
    odd = write_export(tmp_path, [{"id": 1, "messages": []}], name="odd.json")
    with pytest.raises(InvalidInputError) as caught:
        detect_format(odd)
    assert str(caught.value) == (
        f"{odd} is a JSON list, but of neither ChatGPT conversations (with 'mapping') nor Claude.ai "
        "conversations (with 'chat_messages'); pass --format (mcp-memory, chatgpt, claude, mcp-knowledge-graph)."
    )
    inside = zip_export(tmp_path, json.dumps([{"id": 1}]), name="odd.zip")
    with pytest.raises(InvalidInputError, match="is a JSON list, but of neither"):
        detect_format(inside)


def test_a_huge_zip_member_is_refused_unread_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_archive, "MAX_CHAT_JSON_BYTES", 1 << 20)
    bomb = zip_export(tmp_path, json.dumps(claude_export()) + " " * (2 << 20))
    opened: list[Any] = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(
        zipfile.ZipFile, "open", lambda self, *a, **k: opened.append(a) or real_open(self, *a, **k)
    )
    sentence = (
        f"{bomb}: its conversations.json inflates to 2.0 MiB, more than the 1.0 MiB an import reads from "
        "a zip; unzip it and import the conversations.json file itself."
    )
    for read in (detect_format, lambda path: read_memories(path, "claude")):
        with pytest.raises(InvalidInputError) as caught:
            read(bomb)
        assert str(caught.value) == sentence
    assert opened == []


def test_a_conversation_larger_than_the_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_archive, "MAX_CONVERSATION_CHARS", 20_000)
    export = claude_export()
    export[1]["chat_messages"][1]["text"] = "x" * 50_000
    path = write_export(tmp_path, export)
    with pytest.raises(InvalidInputError) as caught:
        read_memories(path, "claude")
    assert str(caught.value) == (
        f"{path}: conversation 2 is larger than 20,000 characters; is this a Claude.ai export's "
        "conversations.json?"
    )


def test_lone_surrogates_are_repaired_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    text = json.dumps(claude_export()).replace("want a road bike.", "want a road bike \\ud83d.")
    path.write_text(text, encoding="utf-8")
    read = read_memories(path, "claude")
    assert read.repaired == 2  # in the message's text and in its text block
    assert "I am 1.78 m tall and want a road bike \ufffd." in [m.content for m in read]


# -- through the engine --------------------------------------------------------------------------------------------
def test_a_re_import_imports_nothing_new(tmp_path: Path) -> None:
    engine = make_engine(namespace="project")
    path = zip_export(tmp_path)
    first = import_file(engine, path, "claude")
    assert (first.inserted, first.skipped, first.chit_chat) == (5, 0, 1)
    again = import_file(engine, path, "claude")
    assert (again.inserted, again.skipped) == (0, 5)
    assert {m.namespace for m in stored(engine)} == {"user"}


def test_the_owner_is_the_importing_user_and_another_user_cannot_read_it(tmp_path: Path) -> None:
    engine = make_engine(namespace="project")
    path = write_export(tmp_path)
    alice, bob = Scope.for_user("alice", project="project"), Scope.for_user("bob", project="project")
    import_records(engine, read_memories(path, "claude", owner="alice"), scope=alice)
    assert {m.owner for m in stored(engine)} == {"alice"}
    thread = f"claude:{KITCHEN}"
    in_thread = Filters(thread=thread)
    found = engine.search_memories("walnut cabinets", 10, in_thread, "user", scope=alice)
    assert found and all(hit.memory.thread == thread for hit in found)
    assert engine.search_memories("walnut cabinets", 10, in_thread, "user", scope=bob) == []
    assert engine.search_memories("walnut cabinets", 10, in_thread, "*", scope=bob) == []
