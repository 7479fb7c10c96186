"""Tool arguments are checked strictly: unknown names and wrong JSON types are tool errors that say,
in one sentence per argument, what was expected (no pydantic dump, no silent coercion)."""

from __future__ import annotations

from typing import Any

import pytest
from server_helpers import error_text, payload, stored_memory

pytestmark = pytest.mark.anyio

STORE_ARGUMENTS = (
    "content, metadata, type, tags, importance, pinned, namespace, privacy_scope, occurred_at, thread"
)


async def test_an_unknown_argument_is_named_and_nothing_is_stored(client: Any) -> None:
    text = error_text(await client.call_tool("store_memory", {"content": "x", "improtance": 0.5}))
    assert f"unknown argument 'improtance' for store_memory; expected one of: {STORE_ARGUMENTS}." in text
    assert payload(await client.call_tool("list_memories", {}))["total"] == 0


async def test_a_missing_argument_is_named(client: Any) -> None:
    text = error_text(await client.call_tool("update_memory", {"content": "x"}))
    assert "missing required argument 'id' for update_memory." in text


@pytest.mark.parametrize(
    ("tool", "args", "sentence"),
    [
        ("store_memory", {"content": "x", "importance": True}, "importance must be a number from 0 to 1; got true."),
        ("store_memory", {"content": "x", "importance": "0.5"}, 'importance must be a number from 0 to 1; got "0.5".'),
        ("store_memory", {"content": "x", "importance": 2}, "importance must be a number from 0 to 1; got 2."),
        ("store_memory", {"content": 5}, "content must be a string; got 5."),
        ("store_memory", {"content": "x", "pinned": "true"}, 'pinned must be true or false; got "true".'),
        ("store_memory", {"content": "x", "tags": "python"}, 'tags must be an array of strings; got "python".'),
        ("store_memory", {"content": "x", "type": "dream"}, 'type must be one of "working", "episodic", "semantic", "procedural"; got "dream".'),
        ("list_memories", {"limit": "5"}, 'limit must be an integer from 1 to 1000; got "5".'),
        ("search_memories", {"query": "x", "limit": 5.5}, "limit must be an integer from 1 to 100; got 5.5."),
        ("delete_memory", {"id": "00000000-0000-4000-8000-000000000000", "hard": 1}, "hard must be true or false; got 1."),
        ("get_memory", {"id": 42}, "id must be a string; got 42."),
        ("search_memories", {"query": "x", "metadata": {"a": [1]}}, 'metadata must be an object whose values are each a string, a number, a boolean or null; got {"a": [1]}.'),
    ],
)  # fmt: skip
async def test_a_wrong_type_is_one_clear_sentence_not_a_coercion(
    client: Any, tool: str, args: dict[str, Any], sentence: str
) -> None:
    text = error_text(await client.call_tool(tool, args))
    assert text == f"Error executing tool {tool}: {sentence}"


async def test_each_problem_gets_its_own_sentence(client: Any) -> None:
    text = error_text(await client.call_tool("store_memory", {"conten": "x", "pinned": "yes"}))
    assert text == (
        "Error executing tool store_memory: unknown argument 'conten' for store_memory; expected one of: "
        f"{STORE_ARGUMENTS}. missing required argument 'content' for store_memory. "
        'pinned must be true or false; got "yes".'
    )


async def test_json_types_clients_send_are_accepted(client: Any) -> None:
    """Integers where a number is expected, enum strings, arrays and objects: as JSON clients send them."""
    data = await stored_memory(
        client,
        {
            "content": "x",
            "importance": 1,
            "type": "procedural",
            "tags": ["a"],
            "metadata": {"k": [1, {"n": None}]},
        },
    )
    assert data["importance"] == 1.0 and data["type"] == "procedural"
    assert data["metadata"] == {"k": [1, {"n": None}]}


async def test_a_string_argument_is_never_json_decoded(client: Any) -> None:
    """The SDK json-decodes string arguments; "null" is a valid namespace and must stay one."""
    data = payload(await client.call_tool("store_memory", {"content": "x", "namespace": "null"}))
    assert data["namespace"] == "null"


async def test_an_array_sent_as_a_json_string_is_still_read(client: Any) -> None:
    """Claude Desktop sends arrays as JSON text; a field that never takes a string decodes them (the
    SDK's own compatibility rule, kept): nothing else is decoded."""
    data = await stored_memory(client, {"content": "x", "tags": '["a", "b"]'})
    assert data["tags"] == ["a", "b"]


async def test_every_tool_schema_forbids_unknown_arguments(client: Any) -> None:
    for tool in (await client.list_tools()).tools:
        assert tool.input_schema.get("additionalProperties") is False, tool.name


async def test_an_optional_argument_is_advertised_as_its_own_type(client: Any) -> None:
    """Not "number or null": clients that turn text into the advertised type (the MCP Inspector CLI's
    --tool-arg importance=0.5 becomes a number only for "type": "number") would send strict mode a
    string. Leaving the argument out means none; an explicit null is still accepted."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    importance = tools["store_memory"].input_schema["properties"]["importance"]
    assert (importance["type"], importance["minimum"], importance["maximum"]) == ("number", 0, 1)
    assert "anyOf" not in importance and "default" not in importance
    tags = tools["update_memory"].input_schema["properties"]["tags"]
    assert tags["type"] == "array" and tags["items"] == {"type": "string"}
    data = await stored_memory(client, {"content": "x", "importance": None, "tags": None})
    assert data["importance"] == 0.5
