"""Requests that are JSON but that the MCP SDK's parser refuses, answered by their id.

The SDK reads every message with pydantic's JSON parser (jiter), which refuses two things Python's
``json`` module reads: a lone UTF-16 surrogate escape (``"\\ud800"`` without its other half: not a
character) and nesting deeper than :data:`MAX_DEPTH`. It reports both as a parse error, and a parse
error is answered with ``id: null``, so the client never hears back about its request. Here such a
request gets an error carrying its id and saying what to change: -32602 Invalid params when the
fault is in ``params`` (where it always is in practice), else -32600 Invalid Request.

A lone surrogate is refused, not replaced with U+FFFD: replacing would change the user's text
without telling them (and a memory stored from it would not be what was sent); the error says what
to send instead. Text that is not JSON at all stays a parse error with ``id: null``, as JSON-RPC
prescribes.

The id is read by a small scanner of the top-level object (:func:`_members`) that skips nested
values by counting brackets, without recursion: Python's ``json`` module itself gives up at about
1,000 levels.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.types import INVALID_PARAMS, INVALID_REQUEST, ErrorData, JSONRPCError

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_DEPTH = 201  # the deepest nesting the SDK's parser reads (jiter's limit; a unit test pins it)

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# a string (skipped whole) or a bracket: enough to find where a nested value ends
_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
# a surrogate pair, a lone surrogate (group 1), or any other escape (skipped whole, so "\\\\ud800" is
# an escaped backslash followed by the letters ud800)
_ESCAPES = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\(u[dD][89a-fA-F][0-9a-fA-F]{2})|\\.",
    re.DOTALL,
)


@dataclass(frozen=True)
class _Member:
    value: Any  # a scalar's value; None for an object or array
    depth: int  # 0 for a scalar, 1 for [] or {}, 2 for [[]] …
    text: str  # the member's value as sent


def unreadable_request_reply(raw: str | bytes) -> JSONRPCError | None:
    """The error answering ``raw`` (a line or a body the SDK's parser refused) when it is a request,
    an object with a ``method`` and a string or integer ``id``, that is JSON but has a lone surrogate
    or nests deeper than :data:`MAX_DEPTH`; None for anything else."""
    try:
        text = raw.decode() if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        return None
    members = _members(text)
    if members is None or "method" not in members:
        return None
    request_id = members["id"].value if "id" in members else None
    if not isinstance(request_id, int | str) or isinstance(request_id, bool) or not _is_text(request_id):
        return None
    error = _fault(members)
    return None if error is None else JSONRPCError(jsonrpc="2.0", id=request_id, error=error)


def _is_text(value: int | str) -> bool:
    """False for a str with a lone surrogate (it cannot be sent back)."""
    try:
        str(value).encode()
    except UnicodeEncodeError:
        return False
    return True


def _fault(members: dict[str, _Member]) -> ErrorData | None:
    for name, member in members.items():
        code = INVALID_PARAMS if name == "params" else INVALID_REQUEST
        if 1 + member.depth > MAX_DEPTH:
            return ErrorData(
                code=code,
                message=(
                    f"The request nests JSON {1 + member.depth:,} levels deep and this server reads at "
                    f"most {MAX_DEPTH}: send flatter arguments."
                ),
            )
        lone = next((m.group(1) for m in _ESCAPES.finditer(member.text) if m.group(1)), None)
        if lone is not None:
            return ErrorData(
                code=code,
                message=(
                    f"The request contains \\{lone}, half of a UTF-16 surrogate pair without its other "
                    "half, which is not a character: send whole characters."
                ),
            )
    return None


def _members(text: str) -> dict[str, _Member] | None:
    """The members of the JSON object ``text``, nested values skipped, or None if it is not one."""
    decoder = json.JSONDecoder()
    members: dict[str, _Member] = {}
    try:
        at = _skip(text, 0)
        if text[at] != "{":
            return None
        at = _skip(text, at + 1)
        while text[at] != "}":
            if text[at] != '"':
                return None
            name, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _skip(text, at)
            if text[at] != ":":
                return None
            start = _skip(text, at + 1)
            if text[start] in "[{":
                depth, at = _nested_end(text, start)
                members[name] = _Member(None, depth, text[start:at])
            else:
                value, at = decoder.raw_decode(text, start)
                members[name] = _Member(value, 0, text[start:at])
            at = _skip(text, at)
            if text[at] == ",":
                at = _skip(text, at + 1)
            elif text[at] != "}":
                return None
    except (ValueError, IndexError):
        return None
    return members if not text[at + 1 :].strip() else None


def _skip(text: str, at: int) -> int:
    match = _WHITESPACE.match(text, at)
    return match.end() if match else at


def _nested_end(text: str, start: int) -> tuple[int, int]:
    """The depth of the object or array starting at ``start``, and where it ends."""
    depth = deepest = 0
    for token in _NESTING.finditer(text, start):
        kind = token.group()
        if kind in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif kind in "]}":
            depth -= 1
            if depth == 0:
                return deepest, token.end()
    raise ValueError("unbalanced brackets")


class AnswerUnreadableRequests:
    """Streamable HTTP: a POST body the SDK's parser would refuse, but that is a request as
    :func:`unreadable_request_reply` reads it, is answered here (400, the JSON-RPC error with the
    request's id, as the SDK answers its own envelope errors); every other request goes on as sent.
    With ``auth_required``, only requests the bearer-token check let through are looked at."""

    def __init__(self, app: ASGIApp, *, auth_required: bool) -> None:
        self.app = app
        self.auth_required = auth_required

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        authenticated = user is not None and user.is_authenticated
        if scope["type"] != "http" or scope["method"] != "POST" or (self.auth_required and not authenticated):
            await self.app(scope, receive, send)
            return
        received, body = await _read_body(receive)
        reply = _refused(body)
        if reply is None:
            await self.app(scope, _replay(received, receive), send)
            return
        content = reply.model_dump_json(by_alias=True, exclude_unset=True).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(content)).encode())]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": content})


# A lone surrogate is written as such an escape; a body holding none, with no more brackets in all
# than the SDK reads levels, is one the SDK's parser reads or refuses for a reason of its own.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _refused(body: bytes | None) -> JSONRPCError | None:
    """The reply to a body the SDK's parser refuses and we can answer, or None. Only a body that
    could be such (a surrogate escape, or enough brackets) is parsed here: the SDK parses them all."""
    if body is None or (
        body.count(b"[") + body.count(b"{") <= MAX_DEPTH and not _SURROGATE_ESCAPE.search(body)
    ):
        return None
    import pydantic_core

    try:
        pydantic_core.from_json(body)
    except ValueError:
        return unreadable_request_reply(body)
    return None


async def _read_body(receive: Receive) -> tuple[list[Message], bytes | None]:
    """The request's messages as received, and its whole body (None when too large)."""
    received: list[Message] = []
    size = 0
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":
            return received, None
        size += len(message.get("body", b""))
        if size > DEFAULT_MAX_REQUEST_BODY_SIZE:  # the SDK refuses it (413): left to it
            return received, None
        if not message.get("more_body", False):
            return received, b"".join(m.get("body", b"") for m in received)


def _replay(received: list[Message], receive: Receive) -> Receive:
    pending = list(received)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed
