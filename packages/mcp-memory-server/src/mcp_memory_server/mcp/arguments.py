"""Strict tool arguments: the MCP SDK's argument handling, made strict and plain-spoken.

The SDK (``mcp.server.mcpserver``) checks a tool's arguments with a pydantic model built from the
tool's signature. Left as it is, that model is lax (``"5"`` passes as 5, ``true`` as 1.0), ignores
unknown names (a typo such as ``improtance`` is dropped without a word), json-decodes string
arguments (a namespace called ``"null"`` becomes None) and answers a mistake with pydantic's
multi-line dump. :func:`strict_tool` builds the SDK's ``Tool`` and changes exactly that:

- the model forbids unknown names and is strict (``extra="forbid", strict=True``): a wrong JSON type
  is an error, while an integer still counts as a number; the advertised ``inputSchema`` says
  ``additionalProperties: false`` and gives an optional argument its own type, not "X or null";
- JSON text is decoded only for an array or object argument that never takes a string (Claude
  Desktop sends arrays as JSON text, the SDK's reason for decoding at all); nothing else is;
- a mistake is one sentence per argument: ``unknown argument 'improtance' for store_memory; expected
  one of: …``, ``missing required argument 'id' for get_memory.``, ``limit must be an integer; got "5".``

The sentences travel the SDK's own path for bad arguments: a ``ValidationError`` raised while
validating becomes a tool error (``isError: true``, "Error executing tool NAME: …") and is logged
with the argument names only; :class:`ArgumentsError` is a ``ValidationError`` whose text is them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, cast

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import ToolAnnotations
from pydantic import ConfigDict, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

SHOWN_CHARS = 60  # how much of a rejected value an error quotes
_PLURALS = {"string": "strings", "integer": "integers", "number": "numbers", "boolean": "booleans"}
_NOUNS = {"string": "a string", "integer": "an integer", "number": "a number", "null": "null"}
# Sentences in this order: an unknown name often explains a missing one (a typo).
_RANK = {"extra_forbidden": 0, "missing": 1}


class ArgumentsError(ValidationError):
    """A ValidationError whose text is one plain sentence per argument (its errors' messages)."""

    def __str__(self) -> str:
        return " ".join(str(error["msg"]) for error in self.errors())


class StrictArguments(FuncMetadata):
    """The SDK's FuncMetadata with a strict argument model, narrow JSON decoding and plain errors."""

    tool_name: str
    properties: dict[str, Any]  # the inputSchema's properties: what each argument accepts
    decodable: frozenset[str]  # arguments whose JSON text is decoded (arrays and objects only)

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        decoded = dict(data)
        for key in self.decodable.intersection(data):
            value = data[key]
            if not isinstance(value, str):
                continue
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                continue
            if isinstance(parsed, list | dict):
                decoded[key] = parsed
        return decoded

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        try:
            return super().validate_arguments(arguments_to_validate)
        except ValidationError as exc:
            raise self.explain(exc, arguments_to_validate) from exc

    def explain(self, error: ValidationError, arguments: Mapping[str, Any]) -> ArgumentsError:
        """One sentence per argument in error (pydantic reports a union's every member)."""
        first: dict[str, tuple[int, str]] = {}
        for item in error.errors():
            name = str(item["loc"][0]) if item["loc"] else ""
            if name not in first:
                first[name] = (_RANK.get(item["type"], 2), self.sentence(item["type"], name, arguments))
        details = [
            InitErrorDetails(
                type=PydanticCustomError("invalid_argument", sentence),
                loc=(name,),
                input=arguments.get(name),
            )
            for name, (_, sentence) in sorted(first.items(), key=lambda entry: entry[1][0])
        ]
        return ArgumentsError.from_exception_data(error.title, details)

    def sentence(self, kind: str, name: str, arguments: Mapping[str, Any]) -> str:
        if kind == "extra_forbidden":
            expected = ", ".join(self.properties) or "no arguments"
            return f"unknown argument {name!r} for {self.tool_name}; expected one of: {expected}."
        if kind == "missing":
            return f"missing required argument {name!r} for {self.tool_name}."
        if name not in self.properties:
            return f"the arguments of {self.tool_name} must be an object."
        return f"{name} must be {describe(self.properties[name], optional=True)}; got {shown(arguments.get(name))}."


def shown(value: Any) -> str:
    """A rejected value as the client sent it (JSON), cut short."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def describe(schema: Mapping[str, Any], *, optional: bool = False) -> str:
    """What a JSON schema accepts, in words: "an integer", "a number from 0 to 1", "an array of strings"."""
    members: list[Mapping[str, Any]] = list(schema.get("anyOf", [schema]))
    if optional:  # null for an optional argument is the same as leaving it out: not worth a word
        members = [m for m in members if m.get("type") != "null"] or members
    if any(m.get("type") == "number" for m in members):  # an integer is a number
        members = [m for m in members if m.get("type") != "integer"]
    if len(members) == 1:
        return _one(members[0], alone=True)
    words = [_one(m, alone=False) for m in members]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _one(schema: Mapping[str, Any], *, alone: bool) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(value) for value in schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return "true or false" if alone else "a boolean"
    if kind in ("integer", "number"):
        return _NOUNS[kind] + _range(schema)
    if kind == "array":
        items = schema.get("items", {})
        if "enum" in items:
            return "an array of values from " + ", ".join(json.dumps(value) for value in items["enum"])
        return "an array of " + _PLURALS.get(items.get("type"), "values")
    if kind == "object":
        values = schema.get("additionalProperties")
        return (
            f"an object whose values are each {describe(values)}" if isinstance(values, dict) else "an object"
        )
    return _NOUNS.get(str(kind), "a valid value")


def _range(schema: Mapping[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f" from {low} to {high}"
    if low is not None:
        return f" of at least {low}"
    return f" of at most {high}" if high is not None else ""


def _json_types(schema: Mapping[str, Any]) -> set[str]:
    return {"string" if "enum" in m else str(m.get("type")) for m in schema.get("anyOf", [schema])}


def plain_optionals(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each optional argument advertised as its own type rather than "X or null":
    leaving it out is how a client says none (an explicit null is still accepted). Clients that turn
    text into the advertised type (the MCP Inspector CLI makes ``importance=0.5`` a number only for
    ``"type": "number"``) would otherwise send a string, which strict arguments refuse."""
    properties = dict(schema.get("properties", {}))
    for name, spec in properties.items():
        members = spec.get("anyOf", [])
        if name in schema.get("required", ()) or spec.get("default", ...) is not None or len(members) != 2:
            continue
        rest = [m for m in members if m != {"type": "null"}]
        if len(rest) == 1:
            kept = {key: value for key, value in spec.items() if key not in ("anyOf", "default")}
            properties[name] = {**rest[0], **kept}
    return {**schema, "properties": properties}


class UntitledSchema(GenerateJsonSchema):
    """pydantic's JSON schema without the titles it makes up: "Privacy Scope" for ``privacy_scope``,
    "store_memoryArguments" for the model. They repeat the names, in every conversation's tools/list."""

    def field_title_should_be_set(self, schema: Any) -> bool:  # a core schema or field: all of them
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        json_schema.pop("title", None)
        return json_schema


def strict_tool(fn: Callable[..., Any], *, description: str, annotations: ToolAnnotations) -> Tool:
    """The SDK's Tool for ``fn``, with strict arguments (see the module docstring), no made-up titles
    (:class:`UntitledSchema`) and no output schema: every tool answers a free-form JSON object its
    description names the fields of, and the SDK's schema for that (``{"type": "object",
    "additionalProperties": true}``) tells a client nothing. The result still travels as structured
    content and as its JSON text."""
    tool = Tool.from_function(fn, description=description, annotations=annotations, structured_output=False)
    loose = tool.fn_metadata
    model = cast(
        type[ArgModelBase],
        type(
            loose.arg_model.__name__,
            (loose.arg_model,),
            {"model_config": ConfigDict(extra="forbid", strict=True), "__module__": __name__},
        ),
    )
    schema = plain_optionals(model.model_json_schema(by_alias=True, schema_generator=UntitledSchema))
    properties = dict(schema.get("properties", {}))
    tool.parameters = schema
    tool.fn_metadata = StrictArguments(
        arg_model=model,
        output_schema=loose.output_schema,
        output_model=loose.output_model,
        wrap_output=loose.wrap_output,
        tool_name=tool.name,
        properties=properties,
        decodable=frozenset(
            name
            for name, spec in properties.items()
            if (types := _json_types(spec)) & {"array", "object"} and "string" not in types
        ),
    )
    return tool
