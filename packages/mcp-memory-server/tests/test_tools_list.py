"""What tools/list costs a client: every byte of it sits in the model's context for the whole
conversation, so it says what a client needs (names, descriptions, types, defaults, bounds) and
nothing else (no generated titles, no output schema that says only "an object")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from server_helpers import error_text, payload

from mcp_memory_core.errors import InvalidInputError
from mcp_memory_core.limits import MAX_LIST_LIMIT, MAX_SEARCH_LIMIT

pytestmark = pytest.mark.anyio

# The tokens of tools/list for each kind of client (see test_tools_list_costs_no_more_tokens_than_recorded):
# lower them when tools/list shrinks; raising them needs a reason worth that many tokens in every
# conversation. A 2026-era client's answer also carries the server's name and version in _meta.
TOOLS_LIST_TOKENS = {"auto": 3547, "legacy": 3498}

# Each number argument, a call of the tool around it, and the engine call that enforces its bounds.
Engine = Callable[[Any, Any, Any], Any]  # (engine, scope, value)
BOUNDED: dict[tuple[str, str], tuple[dict[str, Any], Engine]] = {
    ("search_memories", "limit"): (
        {"query": "x"},
        lambda engine, scope, value: engine.search("x", value, scope=scope),
    ),
    ("list_memories", "limit"): (
        {},
        lambda engine, scope, value: engine.list_memories(value, scope=scope),
    ),
    ("store_memory", "importance"): (
        {"content": "bounds"},
        lambda engine, scope, value: engine.store_memory("bounds", importance=value, scope=scope),
    ),
    ("update_memory", "importance"): (
        {"content": "bounds again"},  # and the id of a stored memory (added in the test)
        lambda engine, scope, value: engine.store_memory("bounds", importance=value, scope=scope),
    ),
}
NUMBER_STEP = {"integer": 1, "number": 0.25}  # how far past a bound the out-of-range call goes


def walk(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every JSON schema object inside ``schema`` (properties, items, anyOf members …), with its path."""
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            if key in ("properties", "$defs"):  # names of arguments, not schema keywords
                for name, sub in value.items():
                    yield from walk(sub, f"{path}/{name}")
            else:
                yield from walk(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from walk(item, f"{path}[{index}]")


async def tools_list(client: Any) -> dict[str, Any]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


async def test_no_schema_carries_a_generated_title(client: Any) -> None:
    """pydantic titles every property after its name ("Privacy Scope") and every argument model
    ("store_memoryArguments"): the name again, for every argument of every tool."""
    for name, tool in (await tools_list(client)).items():
        titled = [path or "/" for path, schema in walk(tool.input_schema) if "title" in schema]
        assert titled == [], (name, titled)
        assert tool.title is None, name


async def test_no_tool_advertises_an_output_schema_that_says_nothing(client: Any) -> None:
    """Every tool answers a JSON object whose fields its description names; a schema saying only
    "an object, any properties" costs tokens and tells a client nothing. The result still travels
    as structured content, with its JSON as text."""
    for name, tool in (await tools_list(client)).items():
        assert tool.output_schema is None or tool.output_schema.get("properties"), (name, tool.output_schema)
    result = await client.call_tool("list_namespaces", {})
    assert payload(result)["namespaces"] == []


async def test_every_number_argument_is_bounded(client: Any) -> None:
    """A new integer or number argument needs its bounds in the schema and a row in BOUNDED."""
    numbers = {
        (name, arg): spec
        for name, tool in (await tools_list(client)).items()
        for arg, spec in tool.input_schema["properties"].items()
        if spec.get("type") in ("integer", "number")
    }
    assert set(numbers) == set(BOUNDED)
    for key, spec in numbers.items():
        assert "minimum" in spec and "maximum" in spec, key
    assert numbers["search_memories", "limit"]["maximum"] == MAX_SEARCH_LIMIT
    assert numbers["list_memories", "limit"]["maximum"] == MAX_LIST_LIMIT


@pytest.mark.parametrize(("tool", "arg"), sorted(BOUNDED))
async def test_the_advertised_bounds_are_those_the_server_enforces(
    client: Any, app: Any, tool: str, arg: str
) -> None:
    """The engine accepts each bound and refuses one step past it with the sentence the tool call
    answers with: the schema neither hides a value the server takes nor offers one it refuses."""
    spec = (await tools_list(client))[tool].input_schema["properties"][arg]
    step = NUMBER_STEP[spec["type"]]
    args, enforce = BOUNDED[tool, arg]
    if tool == "update_memory":
        args = {**args, "id": payload(await client.call_tool("store_memory", {"content": "bounds"}))["id"]}
    service = app.memory_service
    for inside in (spec["minimum"], spec["maximum"]):
        await service.call_scoped(lambda engine, scope, v=inside: enforce(engine, scope, v), None)
    for outside in (spec["minimum"] - step, spec["maximum"] + step):
        with pytest.raises(InvalidInputError) as refused:
            await service.call_scoped(lambda engine, scope, v=outside: enforce(engine, scope, v), None)
        answer = error_text(await client.call_tool(tool, {**args, arg: outside}))
        assert answer.endswith(": " + str(refused.value)), (answer, str(refused.value))
    payload(await client.call_tool(tool, {**args, arg: spec["maximum"]}))


async def test_tools_list_costs_no_more_tokens_than_recorded(
    client: Any, request: pytest.FixtureRequest
) -> None:
    """The tokens of the tools/list result as a client receives it, estimated as the server
    estimates its own results (UTF-8 bytes of its JSON / 4: mcp.budget.estimate_tokens). Measure:

        uv run pytest packages/mcp-memory-server/tests/test_tools_list.py -k costs -q -s

    (the test prints the counts). They were 4,124 and 4,075 with generated titles, output schemas
    saying only "an object" and unbounded limits (3,932 and 3,886 as compact JSON)."""
    from mcp_memory_server.mcp.budget import estimate_tokens, to_json

    listed = (await client.list_tools()).model_dump(mode="json", by_alias=True, exclude_none=True)
    tokens = estimate_tokens(to_json(listed))
    mode = request.node.callspec.params["client"]
    print(f"tools/list ({mode} client): {tokens} tokens")
    assert tokens <= TOOLS_LIST_TOKENS[mode]
