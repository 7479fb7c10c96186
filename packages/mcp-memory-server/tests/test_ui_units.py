"""The web UI's pieces that need no server: sessions, where a login may send the browser, the
filters a form becomes, and that the package ships its templates and static files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_memory_core.errors import InvalidInputError
from mcp_memory_server.web import auth, routes
from mcp_memory_server.web.auth import SessionStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_holds_its_token_until_logout_idle_time_or_its_maximum_age():
    clock = Clock()
    sessions = SessionStore(clock=clock)
    session_id, session = sessions.create("mcpm_token")
    assert len(session_id) >= 40 and session.csrf and session.csrf != session_id
    assert sessions.get(session_id) is session
    assert sessions.get("unknown") is None and sessions.get(None) is None
    clock.now += auth.SESSION_IDLE_SECONDS + 1
    assert sessions.get(session_id) is None  # idle too long
    busy, _ = sessions.create("mcpm_token")
    for _ in range(int(auth.SESSION_MAX_SECONDS // 3600) + 1):
        clock.now += 3600
        sessions.get(busy)
    assert sessions.get(busy) is None  # used all along, but older than the maximum
    kept, _ = sessions.create("mcpm_token")
    sessions.drop(kept)
    assert sessions.get(kept) is None


def test_a_revoked_token_drops_every_session_of_it():
    sessions = SessionStore()
    first, _ = sessions.create("mcpm_a")
    second, _ = sessions.create("mcpm_a")
    other, _ = sessions.create("mcpm_b")
    sessions.drop_token("mcpm_a")
    assert sessions.get(first) is None and sessions.get(second) is None and sessions.get(other) is not None


def test_session_ids_and_csrf_tokens_are_never_reused():
    sessions = SessionStore()
    made = [sessions.create("mcpm_a") for _ in range(50)]
    assert len({sid for sid, _ in made}) == 50 and len({s.csrf for _, s in made}) == 50


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/ui/stats", "/ui/stats"),
        ("/ui/search?q=tea", "/ui/search?q=tea"),
        ("https://evil.example/ui/", "/ui/"),
        ("//evil.example/ui/", "/ui/"),
        ("/ui\\@evil.example", "/ui/"),
        ("/mcp", "/ui/"),
        ("", "/ui/"),
        (None, "/ui/"),
    ],
)
def test_a_login_only_returns_to_a_page_of_the_ui(target, expected):
    assert routes._safe_next(target) == expected


def test_form_filters_become_engine_filters_with_whole_days():
    values = {
        "namespace": "",
        "type": "episodic",
        "tags": "tea, drinks",
        "created_after": "2026-01-01",
        "created_before": "2026-01-31",
        "pinned": "yes",
    }
    filters = routes._filters(values).parse()
    assert {str(t) for t in filters.types} == {"episodic"}
    assert filters.tags == ("tea", "drinks") and filters.pinned is True
    assert filters.created_after.isoformat().startswith("2026-01-01")
    assert filters.created_before.isoformat().startswith("2026-02-01")  # the 31st included
    assert routes._filters({**values, "pinned": "", "type": "", "tags": ""}).parse().pinned is None
    with pytest.raises(InvalidInputError):
        routes._filters({**values, "type": "nonsense"}).parse()


def test_the_package_ships_its_templates_and_static_files():
    ui = Path(routes.__file__).parent
    for name in ("base.html", "browse.html", "search.html", "memory.html", "login.html", "import.html"):
        assert (ui / "templates" / name).is_file(), name
    assert (ui / "static" / "ui.css").is_file() and (ui / "static" / "ui.js").is_file()
    text = (ui / "templates" / "base.html").read_text()
    assert "http://" not in text and "https://" not in text  # nothing from a CDN: works offline


def test_an_import_job_lists_the_memories_refused_for_a_nul_character(settings, tmp_path):
    """The web UI's import says which memory it left out and why (a NUL character: no store keeps
    one), on its page and in the status its script polls."""
    import json

    from mcp_memory_server.operations.transfer import ImportRequest, prepare_import
    from mcp_memory_server.runtime.service import MemoryService
    from mcp_memory_server.web.imports import ImportJob, ImportJobs

    base = {"created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00"}
    records = [
        {**base, "id": "6f1c1f8e-2f55-4a55-8a55-000000000001", "content": "kept", "namespace": "default"},
        {**base, "id": "6f1c1f8e-2f55-4a55-8a55-000000000002", "content": "x\x00y", "namespace": "default"},
    ]
    path = tmp_path / "export.jsonl"
    header = {"format": "mcp-memory", "version": 1, "count": 2}
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]), encoding="utf-8")
    service = MemoryService(settings)
    try:
        engine = service.engine()
        prepared = prepare_import(engine, engine.default_scope, ImportRequest(path=path))
        job = ImportJob(id="j1", owner="local", filename="export.jsonl", format="mcp-memory", total=2)
        ImportJobs(service)._run(job, prepared)  # the job's thread, run here
    finally:
        service.close()
    reason = "content contains a NUL character (U+0000), which mcp-memory does not store; remove it."
    assert job.status()["result"]["refused"] == [
        {"id": records[1]["id"], "where": "line 3", "reason": reason}
    ]
    html = routes._templates().get_template("import_job.html").render(base="/ui", job=job, me=None)
    assert f"Done: imported 1, skipped 0 (already present); refused 1: line 3: {reason}" in " ".join(
        html.split()
    )


def test_the_pages_that_list_namespaces_show_the_readable_ones(ui):
    from starlette.testclient import TestClient

    from mcp_memory_server.operations.write import StoreRequest, store

    app, ui_app = ui
    engine = ui_app.service.engine()
    store(engine, engine.default_scope, StoreRequest(content="Prefers tabs.", namespace="user"))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        for url in ("/ui/export", "/ui/", "/ui/search"):
            page = client.get(url)
            assert page.status_code == 200, url
            assert '<option value="user"' in page.text, url


def test_a_memory_created_from_the_ui_shows_its_receipt_with_the_near_duplicates(ui):
    from starlette.testclient import TestClient

    app, _ = ui
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        form = client.get("/ui/new")
        assert form.status_code == 200 and 'name="content"' in form.text and 'name="namespace"' in form.text
        csrf = form_csrf(form.text)
        fields = {
            "content": "Deploys go out on Fridays.",
            "type": "semantic",
            "tags": "ops, deploy",
            "csrf": csrf,
        }
        first = client.post("/ui/new", data={**fields, "importance": "0.8", "namespace": "user"})
        assert first.status_code == 200, first.text
        assert "Stored" in first.text and "in namespace user" in first.text
        new_id = routes_ids(first.text)[0]
        page = client.get(f"/ui/memories/{new_id}").text
        assert "Deploys go out on Fridays." in page and "#ops" in page and "0.8" in page
        again = client.post("/ui/new", data={**fields, "namespace": "user"})
        assert again.status_code == 200
        assert "duplicate" in again.text and new_id in again.text  # the near-duplicate it found
        bad = client.post("/ui/new", data={**fields, "importance": "lots"})
        assert bad.status_code == 400 and "importance must be a number" in bad.text
        empty = client.post("/ui/new", data={"content": "  ", "csrf": csrf})
        assert empty.status_code == 400 and "Traceback" not in empty.text


def routes_ids(html: str) -> list[str]:
    return re.findall(r'href="/ui/memories/([0-9a-f-]{36})"', html)


def form_csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def test_bulk_delete_deletes_the_selected_memories_and_says_which_could_not_be(ui):
    from starlette.testclient import TestClient

    from mcp_memory_server.operations.write import StoreRequest, store

    app, ui_app = ui
    engine = ui_app.service.engine()
    ids = [
        store(engine, engine.default_scope, StoreRequest(content=text, namespace="user")).id
        for text in ("Prefers tabs.", "Drinks oolong.", "Lives in Lyon.")
    ]
    missing = "00000000-0000-4000-8000-000000000000"
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        listing = client.get("/ui/", params={"namespace": "user"})
        assert 'name="id"' in listing.text and 'action="/ui/delete"' in listing.text
        picked = {"id": [ids[0], ids[1], missing], "csrf": form_csrf(listing.text)}
        done = client.post("/ui/delete", data=picked)
        assert done.status_code == 200, done.text
        text = " ".join(done.text.split())
        assert "Deleted 2 memories." in text and "Could not delete 1:" in text and missing in text
        left = client.get("/ui/", params={"namespace": "user"}).text
        assert "Lives in Lyon." in left and "Prefers tabs." not in left and "Drinks oolong." not in left
        nothing = client.post("/ui/delete", data={"csrf": form_csrf(listing.text)})
        assert nothing.status_code == 400 and "Select" in nothing.text


def test_the_list_pages_are_numbered_and_previous_returns_to_the_same_memories(ui, monkeypatch):
    from starlette.testclient import TestClient

    from mcp_memory_server.operations.write import StoreRequest, store

    monkeypatch.setattr(routes, "PAGE_SIZE", 2)
    app, ui_app = ui
    engine = ui_app.service.engine()
    for n in range(5):
        store(engine, engine.default_scope, StoreRequest(content=f"Fact number {n}.", namespace="user"))

    def visit(client: TestClient, url: str) -> tuple[str, list[str], dict[str, str]]:
        html = client.get(url.replace("&amp;", "&")).text
        links = dict(re.findall(r'href="([^"]+)" rel="(next|prev)"', html))
        number = re.search(r"Page (\d+ of \d+)", html)
        assert number, html
        return number.group(1), routes_ids(html), {rel: href for href, rel in links.items()}

    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        first, ids1, links = visit(client, "/ui/?namespace=user")
        assert first == "1 of 3" and len(ids1) == 2 and "prev" not in links
        second, ids2, links2 = visit(client, links["next"])
        assert second == "2 of 3" and len(ids2) == 2 and not set(ids1) & set(ids2)
        third, ids3, links3 = visit(client, links2["next"])
        assert third == "3 of 3" and len(ids3) == 1 and "next" not in links3
        assert visit(client, links3["prev"])[:2] == ("2 of 3", ids2)
        assert visit(client, links2["prev"])[:2] == ("1 of 3", ids1)


def test_each_search_result_says_in_one_line_why_it_was_found(ui):
    from starlette.testclient import TestClient

    from mcp_memory_server.operations.read import SearchRequest, search
    from mcp_memory_server.operations.write import StoreRequest, store

    app, ui_app = ui
    engine = ui_app.service.engine()
    store(engine, engine.default_scope, StoreRequest(content="Deploys go out on Fridays.", namespace="user"))
    (hit,) = search(engine, engine.default_scope, SearchRequest(query="deploys fridays", limit=5)).hits
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        page = client.get("/ui/search", params={"q": "deploys fridays"}).text  # not "Explain scores"
    why = re.findall(r'<p class="why"[^>]*>(.*?)</p>', page, re.S)
    assert len(why) == 1, page
    line = " ".join(why[0].split())
    assert line.startswith("Why: ") and f"similarity {hit.similarity:.3f}" in line
    for name, value in hit.parts.items():
        assert f"{name} {value:.3f}" in line


def test_the_tag_page_counts_each_tag_and_links_to_the_filtered_list(ui):
    from starlette.testclient import TestClient

    from mcp_memory_server.operations.write import StoreRequest, store

    app, ui_app = ui
    engine = ui_app.service.engine()
    for text, tags in (("Deploys on Fridays.", ["ops"]), ("Pager is on.", ["ops", "on-call"]), ("Tea.", [])):
        store(engine, engine.default_scope, StoreRequest(content=text, tags=tags, namespace="user"))
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        page = client.get("/ui/tags")
        assert page.status_code == 200
        found = re.findall(
            r'<a href="([^"]+)"[^>]*>#([^<]+)</a>\s*<span class="count">(\d+)</span>', page.text
        )
        assert [(tag, count) for _, tag, count in found] == [("ops", "2"), ("on-call", "1")]
        listed = client.get(found[0][0].replace("&amp;", "&")).text
        assert "Deploys on Fridays." in listed and "Pager is on." in listed and "Tea." not in listed


def test_the_list_sorts_by_newest_oldest_or_importance_and_pages_in_that_order(ui, monkeypatch):
    from starlette.testclient import TestClient

    from mcp_memory_server.operations.write import StoreRequest, store

    monkeypatch.setattr(routes, "PAGE_SIZE", 2)
    app, ui_app = ui
    engine = ui_app.service.engine()
    ids = [
        store(
            engine, engine.default_scope, StoreRequest(content=f"Fact {n}.", importance=imp, namespace="user")
        ).id
        for n, imp in enumerate([0.2, 0.9, 0.5])
    ]

    def listed(client: TestClient, sort: str) -> list[str]:
        page = client.get("/ui/", params={"namespace": "user", "sort": sort}).text
        assert f'<option value="{sort}" selected>' in page
        found = routes_ids(page)
        following = re.search(r'href="([^"]+)" rel="next"', page)
        assert following, page
        return found + routes_ids(client.get(following.group(1).replace("&amp;", "&")).text)

    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        assert listed(client, "newest") == ids[::-1]
        assert listed(client, "oldest") == ids
        assert listed(client, "importance") == [ids[1], ids[2], ids[0]]
        bad = client.get("/ui/", params={"sort": "random"})
        assert bad.status_code == 400 and "order must be one of newest, oldest, importance" in bad.text
