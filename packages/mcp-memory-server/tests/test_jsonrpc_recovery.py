"""Requests the SDK's JSON parser refuses although they are JSON: answered by their id (the stdio and
HTTP transports are tested end to end in tests/e2e/test_e2e_jsonrpc_errors.py and test_http_app.py)."""

from __future__ import annotations

import pytest
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, jsonrpc_message_adapter
from pydantic import ValidationError

from mcp_memory_server.mcp.jsonrpc_recovery import (
    MAX_DEPTH,
    AnswerUnreadableRequests,
    unreadable_request_reply,
)


def nested(depth: int) -> str:
    """A request ``depth`` levels deep in all (its object, params and arrays)."""
    inner = "[" * (depth - 2) + "]" * (depth - 2)
    return '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"q": ' + inner + "}}"


def test_max_depth_is_the_deepest_request_the_sdk_reads() -> None:
    jsonrpc_message_adapter.validate_json(nested(MAX_DEPTH), by_name=False)
    with pytest.raises(ValidationError, match="recursion limit exceeded"):
        jsonrpc_message_adapter.validate_json(nested(MAX_DEPTH + 1), by_name=False)
    assert unreadable_request_reply(nested(MAX_DEPTH)) is None
    reply = unreadable_request_reply(nested(MAX_DEPTH + 1))
    assert reply is not None and reply.id == 1 and reply.error.code == INVALID_PARAMS
    assert reply.error.message == (
        f"The request nests JSON {MAX_DEPTH + 1} levels deep and this server reads at most {MAX_DEPTH}: "
        "send flatter arguments."
    )


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"q":"x\\udc00y"}}', INVALID_PARAMS),
        ('{"method":"\\ud83d","id":"a","jsonrpc":"2.0"}', INVALID_REQUEST),  # high half, no low half
        (' {"id" : "a" , "method":"m", "params": ["\\uD83D\\u0041"]} \n', INVALID_PARAMS),
    ],
)
def test_a_lone_surrogate_is_refused_with_the_request_id(text: str, code: int) -> None:
    with pytest.raises(ValidationError):
        jsonrpc_message_adapter.validate_json(text, by_name=False)
    reply = unreadable_request_reply(text)
    assert reply is not None and reply.id == "a" and reply.error.code == code
    assert "half of a UTF-16 surrogate pair without its other half" in reply.error.message
    assert reply.error.message.endswith("send whole characters.")


@pytest.mark.parametrize(
    "text",
    [
        '{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"\\\\ud800"}}',  # a backslash, then "ud800"
        '{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"\\ud83d\\ude00"}}',  # a whole pair
        '{"jsonrpc":"2.0","id":1,"result":{"q":"\\ud800"}}',  # a response: never answered
        '{"jsonrpc":"2.0","id":true,"method":"m","params":{"q":"\\ud800"}}',
        '{"jsonrpc":"2.0","id":{"x":1},"method":"m","params":{"q":"\\ud800"}}',
        '{"jsonrpc":"2.0","id":"\\ud800","method":"m"}',  # an id that cannot be sent back
        '{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"\\ud800"}} trailing',
        '{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"\\ud800"}',
        '{"jsonrpc":"2.0","id":1,"method":"m","params":[[[}',
        '[{"jsonrpc":"2.0","id":1,"method":"m","params":{"q":"\\ud800"}}]',
        "{not json",
        "",
    ],
)
def test_anything_else_is_left_to_the_parse_error(text: str) -> None:
    assert unreadable_request_reply(text) is None
    assert unreadable_request_reply(b"\xff" + text.encode()) is None  # not UTF-8


def test_an_ordinary_http_request_is_not_parsed_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK parses each body; the check in front of it only parses one that could be refused (a
    surrogate escape, or more brackets than the SDK reads levels), and passes every body on intact."""
    import anyio
    import pydantic_core

    parsed: list[bytes] = []
    real_from_json = pydantic_core.from_json

    def counted(data: bytes, *args: object, **kwargs: object) -> object:
        parsed.append(data)
        return real_from_json(data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pydantic_core, "from_json", counted)
    seen: list[bytes] = []
    sent: list[dict[str, object]] = []

    async def sdk(scope: object, receive: object, send: object) -> None:
        seen.append((await receive())["body"])  # type: ignore[operator]

    async def post(body: bytes) -> None:
        messages = [
            {"type": "http.request", "body": body[:10], "more_body": True},
            {"type": "http.request", "body": body[10:], "more_body": False},
        ]

        async def receive() -> dict[str, object]:
            return messages.pop(0)

        async def send(message: dict[str, object]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "POST", "headers": []}
        await AnswerUnreadableRequests(sdk, auth_required=False)(scope, receive, send)  # type: ignore[arg-type]

    ordinary = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"store_memory","arguments":{"content":"caf\\u00e9 [1] {2}"}}}'
    anyio.run(post, ordinary)
    assert parsed == [] and seen == [ordinary[:10]]  # the SDK reads the body as it was sent
    suspect = ordinary.replace(b"\\u00e9", b"\\ud800")
    anyio.run(post, suspect)
    assert parsed == [suspect] and sent[0]["status"] == 400  # answered here, by its id
