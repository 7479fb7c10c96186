"""Tool arguments are checked strictly: an unknown argument is an error naming it (a typo is never
silently dropped), and nothing is coerced (``true`` is not an importance, ``"5"`` not a limit). Both
failed before arguments.strict_tool: the SDK's lax model dropped ``improtance`` and stored with 0.5,
and took ``"5"`` as 5."""

from __future__ import annotations

from typing import Any

import pytest
from server_helpers import error_text, payload, stored_memory

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("tool", "args", "named"),
    [
        ("store_memory", {"content": "Deploys are on Fridays.", "improtance": 0.9}, "improtance"),
        ("search_memories", {"query": "deploys", "limmit": 3}, "limmit"),
        ("list_memories", {"namspace": "user"}, "namspace"),
    ],
)
async def test_an_unknown_argument_is_an_error_naming_it(
    client: Any, tool: str, args: dict[str, Any], named: str
) -> None:
    text = error_text(await client.call_tool(tool, args))
    assert f"unknown argument '{named}' for {tool}; expected one of:" in text
    assert payload(await client.call_tool("list_memories", {}))["memories"] == []  # nothing was stored


@pytest.mark.parametrize(
    ("tool", "args", "named"),
    [
        ("store_memory", {"content": "Deploys are on Fridays.", "importance": True}, "importance"),
        ("store_memory", {"content": "Deploys are on Fridays.", "pinned": "yes"}, "pinned"),
        ("search_memories", {"query": "deploys", "limit": "5"}, "limit"),
    ],
)
async def test_nothing_is_coerced(client: Any, tool: str, args: dict[str, Any], named: str) -> None:
    assert named in error_text(await client.call_tool(tool, args))


async def test_json_values_still_pass(client: Any) -> None:
    stored = await stored_memory(
        client,
        {"content": "Deploys are on Fridays.", "importance": 1, "tags": ["ops"], "metadata": {"team": 2}},
    )
    assert stored["importance"] == 1.0 and stored["tags"] == ["ops"]
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert all(t.input_schema.get("additionalProperties") is False for t in tools.values())


def test_the_filter_arguments_are_the_filter_requests_fields_declared_once() -> None:
    """search_memories and list_memories offer the same filters, one argument per field of the
    operations' FilterRequest (its names, order and defaults), each declared once in params."""
    import asyncio

    from mcp_memory_server.mcp.app import build_app
    from mcp_memory_server.mcp.params import FILTER_ARGUMENTS, FILTERS_NOT_OFFERED
    from mcp_memory_server.operations.filters import FilterRequest

    fields = [name for name in FilterRequest.model_fields if name not in FILTERS_NOT_OFFERED]
    assert list(FILTER_ARGUMENTS) == fields
    tools = {tool.name: tool for tool in asyncio.run(build_app().list_tools())}
    for name in ("search_memories", "list_memories"):
        properties = tools[name].input_schema["properties"]
        offered = [arg for arg in properties if arg in FilterRequest.model_fields]
        assert offered == fields, name
        for arg in fields:
            assert properties[arg].get("default") == FilterRequest.model_fields[arg].default, (name, arg)
    search, listing = tools["search_memories"].input_schema, tools["list_memories"].input_schema
    assert {a: search["properties"][a] for a in fields} == {a: listing["properties"][a] for a in fields}
