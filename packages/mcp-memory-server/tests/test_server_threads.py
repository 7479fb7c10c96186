"""occurred_at and thread through a real MCP client (issue 13, item 1): a client's memories group
by its session unless it names a thread, each memory says when it happened, and search and list
filter on both."""

from __future__ import annotations

from typing import Any

import pytest
from server_helpers import error_text, payload, stored_memory

pytestmark = pytest.mark.anyio


async def stored(client: Any, content: str, **args: Any) -> dict[str, Any]:
    return await stored_memory(client, {"content": content, **args})


async def test_a_clients_memories_share_a_thread(client: Any) -> None:
    a = await stored(client, "Caroline went to the pottery class on Saturday.")
    b = await stored(client, "Melanie painted a sunset over the lake.")
    assert a["thread"] == b["thread"] and a["thread"].startswith("mcp-session:")


async def test_each_connection_gets_its_own_thread(app: Any) -> None:
    """Two clients that made the handshake (two connections to one server) store in two threads."""
    from mcp import Client

    async with Client(app, mode="legacy") as first:
        a = await stored(first, "Caroline went to the pottery class on Saturday.")
        b = await stored(first, "Melanie painted a sunset over the lake.")
    async with Client(app, mode="legacy") as second:
        c = await stored(second, "Caroline is moving to Sweden next year.")
    assert a["thread"] == b["thread"] and a["thread"].startswith("mcp-session:")
    assert c["thread"].startswith("mcp-session:") and c["thread"] != a["thread"]
    async with Client(app) as reader:
        mine = payload(await reader.call_tool("list_memories", {"thread": a["thread"]}))
        assert {m["id"] for m in mine["memories"]} == {a["id"], b["id"]}
        found = payload(
            await reader.call_tool("search_memories", {"query": "Caroline", "thread": c["thread"]})
        )
        assert [r["id"] for r in found["results"]] == [c["id"]]


async def test_occurred_at_and_an_explicit_thread_round_trip_and_filter(client: Any) -> None:
    old = await stored(client, "We adopted a dog named Biscuit.", occurred_at="2023-05-08", thread="chat-7")
    now = await stored(client, "Biscuit learned to fetch.")
    assert old["occurred_at"] == "2023-05-08T00:00:00+00:00" and old["thread"] == "chat-7"
    assert now["occurred_at"] == now["created_at"]  # default: it happened when it was stored
    got = payload(await client.call_tool("get_memory", {"id": old["id"]}))
    assert got["occurred_at"] == old["occurred_at"] and got["thread"] == "chat-7"
    for tool, args in (
        ("search_memories", {"query": "Biscuit the dog"}),
        ("list_memories", {}),
    ):
        before = payload(await client.call_tool(tool, {**args, "occurred_before": "2024-01-01"}))
        after = payload(await client.call_tool(tool, {**args, "occurred_after": "2024-01-01"}))
        rows = "results" if tool == "search_memories" else "memories"
        assert [m["id"] for m in before[rows]] == [old["id"]], tool
        assert [m["id"] for m in after[rows]] == [now["id"]], tool


async def test_the_same_words_on_another_day_are_another_memory(client: Any) -> None:
    first = payload(
        await client.call_tool("store_memory", {"content": "Went hiking.", "occurred_at": "2023-05-08"})
    )
    again = payload(
        await client.call_tool("store_memory", {"content": "Went hiking.", "occurred_at": "2023-05-08"})
    )
    other = payload(
        await client.call_tool("store_memory", {"content": "Went hiking.", "occurred_at": "2023-06-01"})
    )
    assert (first["status"], again["status"], other["status"]) == ("stored", "duplicate", "stored")
    assert again["id"] == first["id"] and other["id"] != first["id"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"occurred_at": "last tuesday"}, "occurred_at must be an ISO 8601 date or time"),
        (
            {"occurred_at": "2999-01-01"},
            "occurred_at 2999-01-01T00:00:00+00:00 is outside the accepted range",
        ),
        ({"thread": "   "}, "thread must be a non-empty string"),
        ({"thread": "x" * 201}, "thread must be at most 200 characters"),
    ],
)
async def test_bad_occurred_at_or_thread_is_one_sentence(
    client: Any, args: dict[str, Any], message: str
) -> None:
    text = error_text(await client.call_tool("store_memory", {"content": "Went hiking.", **args}))
    assert message in text and "Traceback" not in text
    assert payload(await client.call_tool("list_memories", {}))["memories"] == []
