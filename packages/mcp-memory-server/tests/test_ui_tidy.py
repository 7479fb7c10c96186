"""The web UI's tidy page: the proposals with their reasons, the apply button (a CSRF-checked form)
and its receipt; another user's memories are neither shown nor changed."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from mcp_memory_core.settings import Settings
from mcp_memory_core.tokens import TokenRegistry
from mcp_memory_server.operations.write import StoreRequest, store
from mcp_memory_server.runtime.assembly import build_engine
from mcp_memory_server.runtime.http_security import http_security
from mcp_memory_server.runtime.service import MemoryService
from mcp_memory_server.runtime.tokens import SqliteTokenTable
from mcp_memory_server.web.server import http_app

BASE = "http://127.0.0.1:8000"
SEEDED = (
    "Maya lives in Berlin with her cat",
    "With her cat Maya lives in Berlin",
    "thanks!",
    "Maya is vegetarian",
)


def form_field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"the page has no {name} field"
    return html.unescape(found.group(1))


def test_the_tidy_page_lists_proposals_with_reasons_and_applies_them(ui: Any) -> None:
    app, ui_app = ui
    engine = ui_app.service.engine()
    ids = [store(engine, engine.default_scope, StoreRequest(content=text)).id for text in SEEDED]
    with TestClient(app, base_url=BASE) as client:
        assert 'href="/ui/tidy"' in client.get("/ui/").text  # in the navigation
        page = client.get("/ui/tidy")
        assert page.status_code == 200, page.text
        assert page.text.count('data-kind="duplicates"') == 1 and page.text.count('data-kind="junk"') == 1
        assert "near-duplicates" in page.text and "no content worth keeping" in page.text
        assert "Maya is vegetarian" not in page.text
        shown = json.loads(form_field(page.text, "proposals"))
        assert {i for p in shown for i in p["ids"]} == {ids[0], ids[1], ids[2]}
        forged = client.post("/ui/tidy", data={"proposals": form_field(page.text, "proposals")})
        assert forged.status_code == 403  # no CSRF token: nothing applied
        assert engine.get_memory(ids[2]).status == "current"
        done = client.post(
            "/ui/tidy",
            data={
                "csrf": form_field(page.text, "csrf"),
                "namespace": "",
                "proposals": form_field(page.text, "proposals"),
            },
        )
        assert done.status_code == 200, done.text
        text = " ".join(done.text.split())
        assert "Folded 1 near-duplicates" in text and "tombstoned 1 junk" in text
        assert engine.get_memory(ids[0]).head_id == ids[1] and engine.get_memory(ids[2]).status == "deleted"
        assert engine.get_memory(ids[3]).status == "current"
        again = client.post(
            "/ui/tidy",
            data={"csrf": form_field(page.text, "csrf"), "proposals": form_field(page.text, "proposals")},
        )
        assert (
            "skipped 2 proposals" in " ".join(again.text.split())
            and "changed since the proposal" in again.text
        )
        bad = client.post("/ui/tidy", data={"csrf": form_field(page.text, "csrf"), "proposals": "[{]"})
        assert (
            bad.status_code == 400 and "reload it and apply again" in bad.text and "Traceback" not in bad.text
        )
        assert "Nothing to tidy." in client.get("/ui/tidy").text


@pytest.fixture
def two_users(settings: Settings, tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    tokens = TokenRegistry(SqliteTokenTable(tmp_path / "tokens.db"))
    bearer = {user: {"Authorization": f"Bearer {tokens.create(user)[0]}"} for user in ("alice", "bob")}
    security = http_security("127.0.0.1", 8000, tokens=tokens)
    service = MemoryService(settings, lambda s: build_engine(s, require_scope=True), tokens=tokens)
    app = http_app(settings, service, security, host="127.0.0.1")
    with TestClient(app, base_url=BASE, follow_redirects=False) as client:
        yield client, bearer  # type: ignore[misc]
    service.close()
    tokens.close()


def test_another_users_memories_are_neither_shown_nor_tidied(two_users: Any) -> None:
    client, bearer = two_users
    for text in SEEDED:
        made = client.post(
            "/ui/new", data={"content": text, "privacy_scope": "public"}, headers=bearer["alice"]
        )
        assert made.status_code == 200, made.text
    alices = client.get("/ui/tidy", params={"namespace": "*"}, headers=bearer["alice"])
    proposals = form_field(alices.text, "proposals")
    assert len(json.loads(proposals)) == 2
    bobs = client.get("/ui/tidy", params={"namespace": "*"}, headers=bearer["bob"])
    assert bobs.status_code == 200 and "Nothing to tidy." in bobs.text
    assert "Maya" not in bobs.text  # public memories he may read, but not his to tidy
    tried = client.post("/ui/tidy", data={"namespace": "*", "proposals": proposals}, headers=bearer["bob"])
    assert tried.status_code == 200 and "skipped 2 proposals" in " ".join(tried.text.split())
    assert "is missing" in tried.text
    again = client.get("/ui/tidy", params={"namespace": "*"}, headers=bearer["alice"])
    assert form_field(again.text, "proposals") == proposals  # nothing of alice's changed
