"""The web UI's import upload, through the ASGI app: the upload cap holds whatever the request's headers
say (a chunked body has no Content-Length), and a zip bomb is refused in one sentence, nothing imported."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from mcp_memory_server.runtime.settings import ServerSettings

BASE = "http://127.0.0.1:8000"
BOUNDARY = "mcp-memory-test-boundary"


def stored(ui_app: Any) -> list[Any]:
    return list(ui_app.service.engine().store.iter_all())


def multipart_head(csrf: str, filename: str) -> bytes:
    fields = "".join(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        for name, value in (("csrf", csrf), ("format", "auto"))
    )
    return (
        f"{fields}--{BOUNDARY}\r\n"
        f'Content-Disposition: form-data; name="file"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()


async def post_chunked(
    app: Starlette,
    path: str,
    chunks: Iterator[bytes],
    content_type: str = f"multipart/form-data; boundary={BOUNDARY}",
) -> tuple[int, bytes, int]:
    """POST ``chunks`` as a body without Content-Length (as HTTP/1.1 chunked encoding arrives): the
    status, the response body, and how many body bytes the app pulled."""
    pulled = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        chunk = next(chunks, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"content-type", content_type.encode()),
            (b"transfer-encoding", b"chunked"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, pulled


@pytest.mark.anyio
async def test_a_chunked_upload_is_stopped_once_past_the_cap(
    ui: tuple[Starlette, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_memory_server.web import routes

    monkeypatch.setattr(routes, "MAX_UPLOAD_BYTES", 1 << 20)
    monkeypatch.setattr(routes, "MAX_UPLOAD_MB", 1)
    app, ui_app = ui
    block = b" " * (64 << 10)
    head = multipart_head(ui_app.auth._process_csrf, "big.json")
    body_64_mb = itertools.chain([head, b"["], itertools.repeat(block, 1024))  # bounded, should this fail
    status, body, pulled = await post_chunked(app, "/ui/import", body_64_mb)
    assert status == 413
    assert b"The upload is larger than 1 MB." in body
    assert pulled <= (1 << 20) + len(block)  # stopped at the cap, not read to the end
    assert stored(ui_app) == [] and ui_app.jobs._jobs == {}


def test_a_small_chunked_upload_still_imports(ui: tuple[Starlette, Any]) -> None:
    import json

    import anyio

    app, ui_app = ui
    conversation = {
        "title": "Kitchen",
        "conversation_id": "c1",
        "create_time": 1_700_000_000.0,
        "mapping": {
            "u1": {
                "id": "u1",
                "message": {
                    "author": {"role": "user"},
                    "create_time": 1_700_000_001.0,
                    "content": {"content_type": "text", "parts": ["Our cabinets are walnut."]},
                },
            }
        },
    }
    chunks = iter(
        [
            multipart_head(ui_app.auth._process_csrf, "conversations.json"),
            json.dumps([conversation]).encode(),
            f"\r\n--{BOUNDARY}--\r\n".encode(),
        ]
    )
    status, _, _ = anyio.run(post_chunked, app, "/ui/import", chunks)
    assert status == 303
    (job,) = ui_app.jobs._jobs.values()
    for thread in threading.enumerate():
        if thread.name == f"mcp-memory-import-{job.id}":
            thread.join()
    assert job.status()["result"]["imported"] == 1


def test_a_zip_bomb_upload_is_refused_in_one_sentence_and_nothing_is_imported(
    ui: tuple[Starlette, Any], zip_bomb: Any
) -> None:
    app, ui_app = ui
    with TestClient(app, base_url=BASE) as client:
        response = client.post(
            "/ui/import",
            data={"csrf": ui_app.auth._process_csrf, "format": "auto"},
            files={"file": ("chatgpt-export.zip", zip_bomb.read_bytes(), "application/zip")},
        )
    assert response.status_code == 400
    assert (
        "chatgpt-export.zip: its conversations.json inflates to 513.0 MiB, more than the 512.0 MiB an "
        "import reads from a zip; unzip it and import the conversations.json file itself."
    ) in response.text
    assert stored(ui_app) == [] and ui_app.jobs._jobs == {}


@pytest.mark.anyio
async def test_a_chunked_login_form_is_stopped_at_64_kb(settings: ServerSettings) -> None:
    """The login form is open to anyone: its body is capped too, at what a token needs."""
    from mcp_memory_server.runtime.assembly import build_engine, token_registry
    from mcp_memory_server.runtime.http_security import http_security
    from mcp_memory_server.runtime.service import MemoryService
    from mcp_memory_server.web.mount import mount_ui

    tokens = token_registry(settings)
    service = MemoryService(settings, lambda s: build_engine(s, require_scope=True), tokens=tokens)
    app = Starlette()
    mount_ui(app, service, http_security("127.0.0.1", 8000, tokens=tokens))
    block = b"a" * (16 << 10)
    body = itertools.chain([b"token="], itertools.repeat(block, 4096))  # 64 MB, should this fail
    try:
        status, page, pulled = await post_chunked(
            app, "/ui/login", body, content_type="application/x-www-form-urlencoded"
        )
    finally:
        service.close()
        tokens.close()
    assert status == 413 and b"A login form is a token and a page address, not more." in page
    assert pulled <= (64 << 10) + len(block)
