"""What results look like (issue 13, item 5): compact by default, every field with verbose=true or
get_memory, score_parts with explain, one line of JSON text; through a real MCP client on the fakes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from server_helpers import payload

pytestmark = pytest.mark.anyio

COMPACT = {"id", "content", "namespace", "occurred_at", "score"}
FULL_MEMORY = {
    "id",
    "content",
    "metadata",
    "created_at",
    "updated_at",
    "type",
    "tags",
    "importance",
    "access_count",
    "last_accessed",
    "superseded_by",
    "deleted",
    "deleted_at",
    "namespace",
    "pinned",
    "owner",
    "privacy_scope",
    "occurred_at",
    "thread",
    "age",
    "expires_at",
}


async def store(client: Any, content: str, **args: Any) -> str:
    return str(payload(await client.call_tool("store_memory", {"content": content, **args}))["id"])


async def test_a_search_hit_is_compact_by_default(client: Any) -> None:
    tea = await store(
        client, "The user drinks green tea every morning", occurred_at="2023-05-08T07:30:00.123456+02:00"
    )
    await store(client, "The kettle is green", tags=["kitchen", "tea"], metadata={"room": "kitchen"})
    data = payload(await client.call_tool("search_memories", {"query": "green tea every morning"}))
    top, other = data["results"]
    assert top["id"] == tea and set(top) == COMPACT
    assert top["content"] == "The user drinks green tea every morning" and top["namespace"] == "default"
    assert top["occurred_at"] == "2023-05-08T05:30:00Z"  # UTC, to the second
    assert top["score"] == round(top["score"], 3)
    assert set(other) == COMPACT | {"tags"} and other["tags"] == ["kitchen", "tea"]  # tags: only when any
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", other["occurred_at"])


async def test_matched_id_is_there_only_when_an_older_wording_matched(client: Any) -> None:
    old = await store(client, "The office is in Berlin Kreuzberg")
    new = payload(
        await client.call_tool("update_memory", {"id": old, "content": "The office moved to Munich"})
    )
    via_old = payload(await client.call_tool("search_memories", {"query": "office Berlin Kreuzberg"}))
    assert via_old["results"][0]["id"] == new["id"] and via_old["results"][0]["matched_id"] == old
    direct = payload(await client.call_tool("search_memories", {"query": "office moved to Munich"}))
    assert direct["results"][0]["id"] == new["id"] and "matched_id" not in direct["results"][0]


async def test_verbose_gives_every_field_as_before(client: Any) -> None:
    tea = await store(client, "The user drinks green tea every morning", metadata={"source": "chat"})
    data = payload(await client.call_tool("search_memories", {"query": "green tea", "verbose": True}))
    hit = data["results"][0]
    assert set(hit) == FULL_MEMORY | {"score", "similarity", "matched_id"}
    assert hit["id"] == tea and hit["metadata"] == {"source": "chat"} and hit["matched_id"] is None
    assert hit["occurred_at"] == hit["created_at"]  # full precision, as get_memory says it
    got = payload(await client.call_tool("get_memory", {"id": tea}))
    assert {key: got[key] for key in ("content", "metadata", "owner", "thread", "created_at")} == {
        key: hit[key] for key in ("content", "metadata", "owner", "thread", "created_at")
    }


async def test_explain_adds_score_parts_in_both_forms(client: Any) -> None:
    await store(client, "the kettle is blue")
    for verbose in (False, True):
        args = {"query": "blue kettle", "explain": True, "verbose": verbose}
        hit = payload(await client.call_tool("search_memories", args))["results"][0]
        parts = hit["score_parts"]
        assert parts and all(isinstance(value, float) for value in parts.values())
        if not verbose:
            assert set(hit) == COMPACT | {"score_parts"}
            assert all(value == round(value, 3) for value in parts.values())


async def test_a_list_page_is_compact_by_default_and_full_with_verbose(client: Any) -> None:
    await store(client, "first", tags=["a"])
    await store(client, "second")
    compact = payload(await client.call_tool("list_memories", {}))
    assert [set(m) for m in compact["memories"]] == [
        {"id", "content", "namespace", "occurred_at"},
        {"id", "content", "namespace", "occurred_at", "tags"},
    ]
    full = payload(await client.call_tool("list_memories", {"verbose": True}))
    assert [set(m) for m in full["memories"]] == [FULL_MEMORY, FULL_MEMORY]
    assert [m["id"] for m in full["memories"]] == [m["id"] for m in compact["memories"]]


async def test_write_tools_return_receipts(client: Any) -> None:
    scratch = payload(
        await client.call_tool("store_memory", {"content": "Scratch: rebasing feature-x", "type": "working"})
    )
    assert scratch == {"id": scratch["id"], "status": "stored", "namespace": "default", "similar": []}
    pinned = payload(await client.call_tool("pin_memory", {"id": scratch["id"]}))
    assert pinned == {"id": scratch["id"], "pinned": True, "expires_at": None}
    unpinned = payload(await client.call_tool("pin_memory", {"id": scratch["id"], "pinned": False}))
    assert unpinned["pinned"] is False and unpinned["expires_at"] is not None  # working: 48 hours
    close = payload(await client.call_tool("store_memory", {"content": "Scratch: rebasing feature-x now"}))
    assert [(s["id"], s["relation"], set(s)) for s in close["similar"]] == [
        (scratch["id"], "duplicate", {"id", "similarity", "relation", "content"})
    ]
    assert close["similar"][0]["similarity"] == round(close["similar"][0]["similarity"], 3)


async def test_the_text_content_is_one_line_of_the_same_json(client: Any) -> None:
    """The text a model reads is not indented (indentation costs tokens and says nothing)."""
    await store(client, "one line please", metadata={"nested": {"a": [1, 2]}})
    for tool, args in (
        ("search_memories", {"query": "one line"}),
        ("list_memories", {"verbose": True}),
        ("list_namespaces", {}),
    ):
        result = await client.call_tool(tool, args)
        text = result.content[0].text
        assert "\n" not in text and json.loads(text) == result.structured_content, tool


async def test_the_verbose_flags_are_advertised(client: Any) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tools["search_memories"].input_schema["properties"]["verbose"]["default"] is False
    assert tools["list_memories"].input_schema["properties"]["verbose"]["type"] == "boolean"


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ("abc", "token_budget must be an integer from 1 to 100000; got 'abc'."),
        ("1.5", "token_budget must be an integer from 1 to 100000; got '1.5'."),
        ("0", "token_budget must be an integer from 1 to 100000; got 0."),
        ("100001", "token_budget must be an integer from 1 to 100000; got 100001."),
    ],
)
async def test_a_bad_memory_injection_budget_is_one_sentence(client: Any, budget: str, message: str) -> None:
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError) as raised:
        await client.get_prompt("memory_injection", {"query": "standup", "token_budget": budget})
    assert str(raised.value) == message
