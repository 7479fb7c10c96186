"""Streamable HTTP answers a request with one JSON body, or with server-sent events when asked.

The server runs the MCP SDK's JSON response mode: a POST's answer is its JSON-RPC response as the
body, with no event stream to open, frame and parse around a tool call whose only message is its
result (the event stream cost the server 0.6–0.9 ms of CPU a call, and the SDK's client about as
much again, measured on a ping). Nothing is lost by it: the tools send no progress, log or sampling
messages during a call, and the GET stream for messages the server starts is unchanged.

A client that asks for server-sent events (its Accept ranks ``text/event-stream`` above
``application/json``, or names no JSON at all) gets the same answer as one ``message`` event, as the
SDK's event-stream mode writes it: :class:`EventStreamOnRequest`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

_EVENT_STREAM = ("text/event-stream", "text/*", "*/*")
_JSON = ("application/json", "application/*", "*/*")


def wants_event_stream(accept: str) -> bool:
    """True when an Accept header prefers server-sent events to JSON (by q-value; a tie is JSON's)."""
    weights: dict[str, float] = {}
    for media_range in accept.split(","):
        media, *parameters = (part.strip() for part in media_range.split(";"))
        weight = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip().lower() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        weights[media.lower()] = max(weights.get(media.lower(), 0.0), weight)
    event_stream = max(weights.get(media, 0.0) for media in _EVENT_STREAM)
    json = max(weights.get(media, 0.0) for media in _JSON)
    return event_stream > json


def as_event(body: bytes) -> bytes:
    """``body`` as one server-sent ``message`` event (each line of it a ``data:`` line)."""
    return b"event: message\n" + b"".join(b"data: " + line + b"\n" for line in body.split(b"\n")) + b"\n"


class EventStreamOnRequest:
    """Around the SDK's endpoint: a POST whose client prefers server-sent events is passed on as one
    accepting JSON, and a JSON answer (200) is sent back as one event; anything else goes as it is."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = scope["headers"]
        accept = b",".join(value for name, value in headers if name == b"accept").decode("latin-1")
        if not wants_event_stream(accept):
            await self.app(scope, receive, send)
            return
        as_json = [(name, value) for name, value in headers if name != b"accept"]
        as_json.append((b"accept", b"application/json"))
        start: Message | None = None
        chunks: list[bytes] = []

        async def framed(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if message["status"] == 200 and _is_json(message):
                    start = message
                    return
            elif start is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                body = as_event(b"".join(chunks))
                kept = [(n, v) for n, v in start.get("headers", []) if n.lower() not in _REPLACED]
                kept += [
                    (b"content-type", b"text/event-stream"),
                    (b"content-length", str(len(body)).encode()),
                    (b"cache-control", b"no-cache, no-transform"),
                ]
                await send({**start, "headers": kept})
                message = {"type": "http.response.body", "body": body}
            await send(message)

        await self.app({**scope, "headers": as_json}, receive, framed)


_REPLACED = (b"content-type", b"content-length", b"cache-control")


def _is_json(start: Message) -> bool:
    return any(
        name.lower() == b"content-type" and value.split(b";")[0].strip() == b"application/json"
        for name, value in start.get("headers", [])
    )
