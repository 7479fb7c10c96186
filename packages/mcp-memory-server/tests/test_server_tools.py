"""Every tool, through a real MCP client connected in-process, on the fast fakes."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import pytest
from server_helpers import error_text, payload, stored_memory

pytestmark = pytest.mark.anyio

# A cursor that decodes to JSON nested 100,000 deep (Python's json module gives up on it)
DEEP_CURSOR = base64.urlsafe_b64encode(b"[" * 100_000 + b"]" * 100_000).decode()
TOOLS = {
    "store_memory",
    "search_memories",
    "get_memory",
    "update_memory",
    "delete_memory",
    "list_memories",
    "pin_memory",
    "list_namespaces",
    "clear_memories",
}


async def store(client: Any, content: str, metadata: dict[str, Any] | None = None) -> str:
    args: dict[str, Any] = {"content": content}
    if metadata is not None:
        args["metadata"] = metadata
    return str(payload(await client.call_tool("store_memory", args))["id"])


async def test_lists_the_tools_with_descriptions_and_schemas(client: Any) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40
        assert tool.input_schema["type"] == "object"
    assert tools["store_memory"].input_schema["required"] == ["content"]
    assert tools["search_memories"].input_schema["properties"]["limit"]["default"] == 10
    assert tools["list_memories"].input_schema["properties"]["limit"]["default"] == 50
    assert tools["search_memories"].annotations.read_only_hint is True
    assert tools["delete_memory"].annotations.destructive_hint is True


async def test_instructions_say_when_to_store_update_search_and_delete(client: Any) -> None:
    text = client.instructions
    for word in (
        "store_memory",
        "update_memory",
        "search_memories",
        "delete_memory",
        "preference",
        "decision",
    ):
        assert word in text


async def test_store_returns_a_receipt_and_get_memory_the_memory(client: Any) -> None:
    data = payload(await client.call_tool("store_memory", {"content": "I prefer tabs", "metadata": {"k": 1}}))
    assert data == {"id": data["id"], "status": "stored", "namespace": "default", "similar": []}
    assert uuid.UUID(data["id"])
    memory = payload(await client.call_tool("get_memory", {"id": data["id"]}))
    assert memory["id"] == data["id"]
    assert memory["content"] == "I prefer tabs"
    assert memory["metadata"] == {"k": 1}
    assert memory["superseded_by"] is None
    assert memory["deleted"] is False and memory["deleted_at"] is None


async def test_get_memory_takes_a_unique_prefix_and_shows_every_field(client: Any) -> None:
    stored = {"content": "Deploys go out on Fridays", "type": "procedural", "tags": ["ops"], "pinned": True}
    data = payload(await client.call_tool("store_memory", stored))
    memory = payload(await client.call_tool("get_memory", {"id": data["id"][:8]}))
    assert memory["id"] == data["id"] and memory["type"] == "procedural" and memory["tags"] == ["ops"]
    assert memory["pinned"] is True and memory["namespace"] == "default"
    assert {"importance", "occurred_at"} <= set(memory)


async def test_search_finds_the_stored_memory(client: Any) -> None:
    tea = await store(client, "The user drinks green tea every morning")
    await store(client, "The deploy script lives in ops/deploy.sh")
    data = payload(await client.call_tool("search_memories", {"query": "green tea morning", "limit": 5}))
    assert data["count"] == len(data["results"]) == 2
    top = data["results"][0]
    assert top["id"] == tea
    assert set(top) == {"id", "content", "namespace", "occurred_at", "score"}  # compact: no matched_id
    assert top["content"] == "The user drinks green tea every morning" and top["namespace"] == "default"
    assert data["results"][0]["score"] >= data["results"][1]["score"]


async def test_search_limit_is_honoured(client: Any) -> None:
    for i in range(5):
        await store(client, f"fact number {i} about cats")
    data = payload(await client.call_tool("search_memories", {"query": "cats", "limit": 2}))
    assert data["count"] == 2


async def test_search_on_empty_store_returns_nothing(client: Any) -> None:
    data = payload(await client.call_tool("search_memories", {"query": "anything"}))
    assert data == {"results": [], "count": 0}


async def test_update_chain_search_on_old_wording_returns_head(client: Any) -> None:
    a = await store(client, "The office is in Berlin Kreuzberg")
    b = payload(await client.call_tool("update_memory", {"id": a, "content": "The office moved to Munich"}))
    assert b["status"] == "updated" and b["superseded"] == a and b["id"] != a
    c = payload(
        await client.call_tool("update_memory", {"id": b["id"], "content": "The office is now in Hamburg"})
    )
    assert c["superseded"] == b["id"]
    data = payload(await client.call_tool("search_memories", {"query": "office Berlin Kreuzberg"}))
    assert [r["id"] for r in data["results"]] == [c["id"]]
    assert data["results"][0]["content"] == "The office is now in Hamburg"
    assert data["results"][0]["matched_id"] == a


async def test_update_keeps_metadata_unless_given(client: Any) -> None:
    a = await store(client, "color is blue", {"topic": "color"})
    kept = payload(await client.call_tool("update_memory", {"id": a, "content": "color is red"}))
    assert kept == {"id": kept["id"], "superseded": a, "status": "updated"}
    assert payload(await client.call_tool("get_memory", {"id": kept["id"]}))["metadata"] == {"topic": "color"}
    replaced = payload(
        await client.call_tool(
            "update_memory", {"id": kept["id"], "content": "color is green", "metadata": {"x": 2}}
        )
    )
    assert payload(await client.call_tool("get_memory", {"id": replaced["id"]}))["metadata"] == {"x": 2}


async def test_get_current_superseded_and_deleted(client: Any) -> None:
    a = await store(client, "version one")
    current = payload(await client.call_tool("get_memory", {"id": a}))
    assert current["status"] == "current" and current["head_id"] == a and current["content"] == "version one"
    b = payload(await client.call_tool("update_memory", {"id": a, "content": "version two"}))["id"]
    old = payload(await client.call_tool("get_memory", {"id": a}))
    assert old["status"] == "superseded"
    assert old["content"] == "version one"  # as it is, never silently swapped
    assert old["superseded_by"] == b and old["head_id"] == b
    payload(await client.call_tool("delete_memory", {"id": b}))
    gone = payload(await client.call_tool("get_memory", {"id": b}))
    assert gone["status"] == "deleted" and gone["deleted"] is True and gone["deleted_at"]


async def test_delete_hides_from_search_and_list_and_is_idempotent(client: Any) -> None:
    a = await store(client, "secret plan about pancakes")
    keep = await store(client, "public plan about waffles")
    first = payload(await client.call_tool("delete_memory", {"id": a}))
    assert first == {"id": a, "status": "deleted", "success": True}
    again = payload(await client.call_tool("delete_memory", {"id": a}))
    assert again["status"] == "already_deleted" and again["success"] is True
    found = payload(await client.call_tool("search_memories", {"query": "secret plan about pancakes"}))
    assert a not in [r["id"] for r in found["results"]]
    listed = payload(await client.call_tool("list_memories", {}))
    assert [m["id"] for m in listed["memories"]] == [keep]
    assert listed["total"] == 1


async def test_list_pages_with_cursor(client: Any) -> None:
    ids = [await store(client, f"memory {i}") for i in range(5)]
    first = payload(await client.call_tool("list_memories", {"limit": 2}))
    assert first["total"] == 5 and len(first["memories"]) == 2 and first["next_cursor"]
    seen = [m["id"] for m in first["memories"]]
    cursor = first["next_cursor"]
    while cursor:
        page = payload(await client.call_tool("list_memories", {"limit": 2, "cursor": cursor}))
        seen += [m["id"] for m in page["memories"]]
        cursor = page["next_cursor"]
    assert sorted(seen) == sorted(ids) and len(seen) == 5
    assert seen[0] == ids[-1]  # newest first


async def test_list_pages_fit_the_result_budget_and_say_how_to_go_on(app: Any, client: Any) -> None:
    """300 memories of 2 KB, asked for all at once: each page's text stays within the result budget
    (MCP_MEMORY_MAX_RESULT_TOKENS, 8,000 tokens of 4 bytes) and says more remain; the pages cover
    every memory once, newest first, and none is cut far below the budget."""
    from mcp_memory_core.models import Memory

    budget = 8000 * 4
    filler = "x" * 2000  # one passage, one word: cheap to embed with the hash embedder
    memories = [Memory(content=f"memory {i} {filler}", namespace="default") for i in range(300)]
    app.memory_service.call_sync(lambda engine: engine.import_memories(memories))
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        args: dict[str, Any] = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        result = await client.call_tool("list_memories", args)
        page = payload(result)
        pages += 1
        assert len(result.content[0].text.encode()) <= budget and page["total"] == 300
        seen += [m["id"] for m in page["memories"]]
        cursor = page["next_cursor"]
        if cursor is None:
            assert "hint" not in page
            break
        assert "cursor" in page["hint"] and "8,000-token result budget" in page["hint"]
        assert len(result.content[0].text.encode()) > budget - 2500  # full: another would not fit
    assert len(seen) == 300 and set(seen) == {m.id for m in memories}
    assert pages <= 300 * 2200 // (budget - 2500) + 1


async def test_list_defaults(client: Any) -> None:
    assert payload(await client.call_tool("list_memories", {})) == {
        "memories": [],
        "next_cursor": None,
        "total": 0,
    }


# -- errors --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("store_memory", {"content": ""}, "content must be a non-empty string"),
        ("store_memory", {"content": "   "}, "content must be a non-empty string"),
        (
            "store_memory",
            {"content": "é" * 16_385},
            "content is 32,770 bytes; the limit is 32,768 (MCP_MEMORY_MAX_CONTENT_BYTES)",
        ),
        (
            "store_memory",
            {"content": "ok", "metadata": {"notes": "x" * 16_400}},
            "metadata is 16,412 bytes as JSON; the limit is 16,384 (MCP_MEMORY_MAX_METADATA_BYTES)",
        ),
        ("store_memory", {"content": "ok", "metadata": ["not", "an", "object"]}, "metadata"),
        ("search_memories", {"query": ""}, "query must be a non-empty string"),
        ("search_memories", {"query": "x", "limit": 0}, "limit must be an integer from 1 to 100"),
        ("search_memories", {"query": "x", "limit": 101}, "limit must be an integer from 1 to 100"),
        ("get_memory", {"id": "not-a-uuid"}, "is not a memory id"),
        ("get_memory", {"id": "00000000-0000-4000-8000-000000000000"}, "No memory with id"),
        ("update_memory", {"id": "nope", "content": "x"}, "is not a memory id"),
        (
            "update_memory",
            {"id": "00000000-0000-4000-8000-000000000000", "content": "x"},
            "No memory with id",
        ),
        ("delete_memory", {"id": "42"}, "is not a memory id"),
        ("delete_memory", {"id": "00000000-0000-4000-8000-000000000000"}, "No memory with id"),
        ("list_memories", {"limit": 0}, "limit must be an integer from 1 to 1000"),
        ("list_memories", {"limit": 1001}, "limit must be an integer from 1 to 1000"),
        ("list_memories", {"cursor": "garbage!!"}, "cursor is not valid"),
        ("list_memories", {"cursor": DEEP_CURSOR}, "cursor is not valid"),
        ("store_memory", {}, "content"),
        ("get_memory", {}, "id"),
        ("search_memories", {"query": "x", "limit": "many"}, "limit"),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
async def test_bad_input_is_a_tool_error(client: Any, tool: str, args: dict[str, Any], message: str) -> None:
    result = await client.call_tool(tool, args)
    assert message in error_text(result)


async def test_updating_a_superseded_memory_names_the_head(client: Any) -> None:
    a = await store(client, "first")
    b = payload(await client.call_tool("update_memory", {"id": a, "content": "second"}))["id"]
    text = error_text(await client.call_tool("update_memory", {"id": a, "content": "third"}))
    assert "superseded" in text and b in text


async def test_updating_a_deleted_memory_is_an_error(client: Any) -> None:
    a = await store(client, "to be deleted")
    payload(await client.call_tool("delete_memory", {"id": a}))
    assert "deleted" in error_text(await client.call_tool("update_memory", {"id": a, "content": "x"}))


# -- resource ------------------------------------------------------------------------------------------
async def test_memory_resource(client: Any) -> None:
    templates = (await client.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["memory://{id}"]
    a = await store(client, "resource content", {"r": True})
    result = await client.read_resource(f"memory://{a}")
    content = result.contents[0]
    assert content.mime_type == "application/json"
    data = json.loads(content.text)
    assert data["id"] == a and data["content"] == "resource content" and data["status"] == "current"


async def test_memory_resource_unknown_id_is_an_error(client: Any) -> None:
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError, match="No memory with id"):
        await client.read_resource("memory://00000000-0000-4000-8000-000000000000")
    with pytest.raises(MCPError, match="not a memory id"):
        await client.read_resource("memory://nonsense")


async def test_type_tags_importance_round_trip(client: Any) -> None:
    data = await stored_memory(
        client,
        {"content": "run ruff before commits", "type": "procedural", "tags": ["lint"], "importance": 0.9},
    )
    assert (data["type"], data["tags"], data["importance"]) == ("procedural", ["lint"], 0.9)
    updated = payload(
        await client.call_tool("update_memory", {"id": data["id"], "content": "run ruff and mypy"})
    )
    new = payload(await client.call_tool("get_memory", {"id": updated["id"]}))
    assert new["type"] == "procedural" and new["tags"] == ["lint"]


async def test_search_and_list_filters(client: Any) -> None:
    for i in range(12):
        await client.call_tool("store_memory", {"content": f"garden tomato note {i}", "tags": ["garden"]})
    rose = payload(
        await client.call_tool(
            "store_memory",
            {
                "content": "roses need acidic soil",
                "tags": ["roses"],
                "type": "procedural",
                "metadata": {"bed": 2},
            },
        )
    )["id"]
    for args in (
        {"tags": ["roses"]},
        {"types": ["procedural"]},
        {"metadata": {"bed": 2}},
        {"tags": ["garden", "roses"], "tags_match": "any", "types": ["procedural"]},
    ):
        found = payload(await client.call_tool("search_memories", {"query": "garden tomato note", **args}))
        assert [r["id"] for r in found["results"]] == [rose], args
        listed = payload(await client.call_tool("list_memories", args))
        assert [m["id"] for m in listed["memories"]] == [rose] and listed["total"] == 1, args
    none = payload(
        await client.call_tool("search_memories", {"query": "garden", "created_after": "2999-01-01"})
    )
    assert none["results"] == []


async def test_search_explain_shows_score_parts(client: Any) -> None:
    await store(client, "the kettle is blue")
    plain = payload(await client.call_tool("search_memories", {"query": "blue kettle"}))["results"][0]
    assert "score_parts" not in plain
    explained = payload(await client.call_tool("search_memories", {"query": "blue kettle", "explain": True}))
    parts = explained["results"][0]["score_parts"]
    assert parts and all(isinstance(v, float) for v in parts.values())


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("store_memory", {"content": "x", "type": "dream"}, "type"),
        ("store_memory", {"content": "x", "importance": 2}, "importance"),
        ("search_memories", {"query": "x", "created_after": "yesterday"}, "ISO 8601"),
        ("list_memories", {"tags_match": "some"}, "tags_match"),
        (
            "search_memories",
            {"query": "x", "occurred_after": "last may"},
            "occurred_after must be an ISO 8601",
        ),
        (
            "list_memories",
            {"occurred_after": "2024-01-01", "occurred_before": "2023-01-01"},
            "occurred_after must be earlier than occurred_before.",
        ),
        ("list_memories", {"thread": "a\nb"}, "thread must be at most 200 characters without control"),
    ],
)
async def test_bad_filters_and_fields_are_tool_errors(
    client: Any, tool: str, args: dict[str, Any], message: str
) -> None:
    assert message in error_text(await client.call_tool(tool, args))
