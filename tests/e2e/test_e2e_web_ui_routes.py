"""The web UI's routes over real HTTP (httpx2, the HTTP client the MCP SDK ships), against a real
``mcp-memory serve --transport http`` with tokens: who may see and change what is the engine's
Scope, exactly as through MCP, and a memory outside it is the same 404 as a missing id, on every
route. Also: the login, its cookie and CSRF tokens, the Host/Origin checks.

alice and bob share the team "core"; carol is in no team.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import cli
from ui_helpers import MISSING, UiServer, chatgpt_export, csrf_of, memory_ids, status_of, ui_server

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("default_plugins")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    from e2e_helpers import require_default_plugins

    require_default_plugins()
    with ui_server(tmp_path_factory.mktemp("ui-routes")) as running:
        yield running


def client(server: UiServer, user: str | None = None, **kwargs: Any) -> Any:
    import httpx2

    headers = {"Authorization": f"Bearer {server.tokens[user]}"} if user else {}
    return httpx2.Client(base_url=server.base, headers=headers, timeout=60, **kwargs)


def wait_for_job(http: Any, location: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status: dict[str, Any] = http.get(f"{location}/status").json()
        if status["state"] != "running":
            return status
        time.sleep(0.1)
    raise AssertionError(f"the import did not finish: {status}")


def import_as(http: Any, conversation_id: str, messages: list[str]) -> tuple[str, dict[str, Any]]:
    files = {"file": ("conversations.json", chatgpt_export(conversation_id, messages), "application/json")}
    response = http.post("/ui/import", files=files, data={"format": "auto"})
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    return location, wait_for_job(http, location)


@pytest.fixture(scope="module")
def alices(server: UiServer) -> dict[str, Any]:
    """alice's memories: one private, one shared with her team, one public (an edit made each)."""
    with client(server, "alice") as alice:
        job, status = import_as(
            alice,
            "alice-chat",
            [
                "my bank PIN is 4711",
                "the core team deploys on fridays",
                "the office wifi is called atlas-guest",
            ],
        )
        assert status["state"] == "done" and status["result"]["imported"] == 3, status
        by_content = {}
        for memory_id in memory_ids(alice.get("/ui/", params={"namespace": "*"}).text):
            page = alice.get(f"/ui/memories/{memory_id}").text
            for text in ("bank PIN", "deploys on fridays", "office wifi"):
                if text in page:
                    by_content[text] = memory_id
        ids = {"private": by_content["bank PIN"], "job": job}
        for kind, text in (("team", "deploys on fridays"), ("public", "office wifi")):
            edited = alice.post(
                f"/ui/memories/{by_content[text]}/edit",
                data={"content": f"{text}, shared", "tags": "", "type": "semantic", "privacy_scope": kind},
            )
            assert edited.status_code == 303, edited.text
            ids[kind] = edited.headers["location"].split("/")[-1].split("?")[0]
        return ids


def missing_like(http: Any, method: str, path: str, memory_id: str, **kwargs: Any) -> None:
    """``path`` with ``memory_id`` answers exactly as with an id that does not exist."""
    real = http.request(method, path.format(id=memory_id), **kwargs)
    none = http.request(method, path.format(id=MISSING), **kwargs)
    assert real.status_code == none.status_code == 404, (real.status_code, real.text[:500])
    assert real.text.replace(memory_id, "ID") == none.text.replace(MISSING, "ID")


WRITES = [
    (
        "POST",
        "/ui/memories/{id}/edit",
        {"content": "hijacked", "type": "semantic", "privacy_scope": "public"},
    ),
    ("POST", "/ui/memories/{id}/pin", {"pinned": "true"}),
    ("POST", "/ui/memories/{id}/delete", {}),
    ("POST", "/ui/memories/{id}/restore", {}),
]


def test_another_users_private_memory_is_missing_on_every_route(server, alices):
    for user in ("bob", "carol"):
        with client(server, user) as other:
            missing_like(other, "GET", "/ui/memories/{id}", alices["private"])
            for method, path, form in WRITES:
                missing_like(other, method, path, alices["private"], data=form)
    with client(server, "carol") as carol:
        missing_like(carol, "GET", "/ui/memories/{id}", alices["team"])
        for method, path, form in WRITES:
            missing_like(carol, method, path, alices["team"], data=form)
    with client(server, "alice") as alice:  # nothing happened to them
        page = alice.get(f"/ui/memories/{alices['private']}").text
        assert status_of(page) == "current" and "hijacked" not in page and "pinned</span>" not in page


def test_a_shared_memory_is_readable_but_only_its_owner_changes_it(server, alices):
    with client(server, "bob") as bob:
        assert "deploys on fridays, shared" in bob.get(f"/ui/memories/{alices['team']}").text
        page = bob.get(f"/ui/memories/{alices['public']}").text
        assert "office wifi, shared" in page
        assert "Save as a new version" not in page and "/delete" not in page  # no forms offered
        for method, path, form in WRITES:
            refused = bob.request(method, path.format(id=alices["team"]), data=form)
            assert refused.status_code == 403, refused.text[:500]
            assert "belongs to another user" in refused.text
    with client(server, "carol") as carol:
        assert carol.get(f"/ui/memories/{alices['public']}").status_code == 200
        refused = carol.post(f"/ui/memories/{alices['public']}/delete")
        assert refused.status_code == 403
    with client(server, "alice") as alice:
        assert status_of(alice.get(f"/ui/memories/{alices['team']}").text) == "current"


def test_lists_searches_exports_stats_and_jobs_hold_only_what_the_scope_may_read(server, alices):
    with client(server, "carol") as carol:
        for path, params in (
            ("/ui/", {"namespace": "*"}),
            ("/ui/search", {"q": "bank PIN fridays wifi", "namespace": "*", "explain": "1"}),
        ):
            page = carol.get(path, params=params)
            assert page.status_code == 200
            found = memory_ids(page.text)
            assert alices["private"] not in found and alices["team"] not in found
            assert alices["public"] in found  # public: everybody reads it
            assert "4711" not in page.text and "deploys on fridays" not in page.text
        export = carol.get("/ui/export/download")
        assert export.status_code == 200 and "attachment" in export.headers["content-disposition"]
        assert '"count":0' in export.text.splitlines()[0]  # nothing of alice's: not carol's to export
        assert carol.get(f"{alices['job']}/status").status_code == 404
        assert carol.get(alices["job"]).status_code == 404
    with client(server, "bob") as bob:
        found = memory_ids(bob.get("/ui/search", params={"q": "bank PIN fridays", "namespace": "*"}).text)
        assert alices["team"] in found and alices["private"] not in found
    with client(server, "alice") as alice:
        export = alice.get("/ui/export/download").text.splitlines()
        assert '"count":5' in export[0]  # three imported, two edits: every version of her own


def test_without_a_valid_token_nothing_is_shown(server, alices):
    with client(server) as anonymous:
        page = anonymous.get(f"/ui/memories/{alices['public']}")
        assert page.status_code == 303 and page.headers["location"].startswith("/ui/login?next=")
        assert anonymous.get("/ui/", headers={"Accept": "application/json"}).status_code == 401
        assert anonymous.post(f"/ui/memories/{alices['public']}/delete").status_code == 401
        wrong = anonymous.get("/ui/", headers={"Authorization": "Bearer mcpm_not-a-token"})
        assert wrong.status_code == 401 and "office wifi" not in wrong.text
        refused = anonymous.post("/ui/login", data={"token": "mcpm_not-a-token", "next": "/ui/"})
        assert refused.status_code == 401 and "not valid" in refused.text
        assert "set-cookie" not in refused.headers


def test_login_keeps_the_token_server_side_behind_a_strict_cookie_and_forms_need_their_csrf_token(
    server, alices
):
    with client(server) as browser:
        login = browser.post("/ui/login", data={"token": server.tokens["alice"], "next": "/ui/stats"})
        assert login.status_code == 303 and login.headers["location"] == "/ui/stats"
        cookie = login.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert "Path=/ui" in cookie and server.tokens["alice"] not in cookie
        page = browser.get(f"/ui/memories/{alices['private']}")
        assert page.status_code == 200 and server.tokens["alice"] not in page.text
        forged = browser.post(f"/ui/memories/{alices['private']}/pin", data={"pinned": "true"})
        assert forged.status_code == 403 and "expired" in forged.text
        wrong = browser.post(
            f"/ui/memories/{alices['private']}/pin", data={"pinned": "true", "csrf": "x" * 43}
        )
        assert wrong.status_code == 403
        pinned = browser.post(
            f"/ui/memories/{alices['private']}/pin", data={"pinned": "true", "csrf": csrf_of(page.text)}
        )
        assert pinned.status_code == 303
        unpinned = browser.post(
            f"/ui/memories/{alices['private']}/pin",
            data={"pinned": "false"},
            headers={"X-CSRF-Token": csrf_of(page.text)},
        )
        assert unpinned.status_code == 303
        logout = browser.post("/ui/logout", data={"csrf": csrf_of(page.text)})
        assert logout.status_code == 303
        assert browser.get("/ui/").status_code == 303  # back to the login page
    with client(server) as stranger:  # an unknown session id is no session
        stranger.cookies.set("mcp_memory_ui", "made-up", path="/ui")
        assert stranger.get("/ui/").headers["location"].startswith("/ui/login")


def test_host_and_origin_are_checked_like_the_mcp_endpoint(server):
    with client(server, "alice") as alice:
        assert alice.get("/ui/", headers={"Host": "evil.example"}).status_code == 421
        assert alice.post("/ui/login", headers={"Origin": "http://evil.example"}).status_code == 403
        assert alice.get("/ui/stats", headers={"Origin": "http://evil.example"}).status_code == 403


def test_a_revoked_token_ends_its_browser_sessions_at_once(tmp_path: Path):
    with ui_server(tmp_path) as server, client(server) as browser:
        assert browser.post("/ui/login", data={"token": server.tokens["bob"]}).status_code == 303
        assert browser.get("/ui/").status_code == 200
        done = cli(server.env, "token", "revoke", "--user", "bob")
        assert done.returncode == 0, done.stderr
        assert browser.get("/ui/").headers["location"].startswith("/ui/login")


def test_a_memory_made_on_the_new_page_is_the_callers_own_and_the_form_needs_its_csrf_token(server):
    with client(server) as browser:
        assert browser.post("/ui/login", data={"token": server.tokens["bob"]}).status_code == 303
        form = browser.get("/ui/new")
        assert form.status_code == 200
        fields = {"content": "bob's locker code is 2213", "tags": "locker", "namespace": "user"}
        forged = browser.post("/ui/new", data=fields)
        assert forged.status_code == 403 and "expired" in forged.text
        stored = browser.post("/ui/new", data={**fields, "csrf": csrf_of(form.text)})
        assert stored.status_code == 200 and "Stored" in stored.text, stored.text[:2000]
        (new_id,) = memory_ids(stored.text)
        assert "<dt>Owner</dt><dd>bob</dd>" in browser.get(f"/ui/memories/{new_id}").text
        assert "#locker</a>" in browser.get("/ui/tags").text
    with client(server, "alice") as alice:  # private by default: bob's alone
        missing_like(alice, "GET", "/ui/memories/{id}", new_id)
        assert new_id not in memory_ids(alice.get("/ui/", params={"namespace": "*"}).text)
        assert "locker" not in alice.get("/ui/tags").text


def test_bulk_delete_only_deletes_the_callers_own_and_names_the_others_like_missing_ids(server, alices):
    with client(server, "bob") as bob:
        mine = bob.post("/ui/new", data={"content": "bob parks on level 3"})  # a bearer: no CSRF token
        (own,) = memory_ids(mine.text)
        picked = [own, alices["team"], alices["private"], MISSING]
        done = bob.post("/ui/delete", data={"id": picked})
        assert done.status_code == 200, done.text[:2000]
        text = " ".join(done.text.split())
        assert "Deleted 1 memory." in text and "Could not delete 3:" in text
        assert "belongs to another user" in text  # the team memory: readable, not bob's
        private, missing = (text.split(f"<code>{i}</code>: ")[1].split("</li>")[0] for i in picked[2:])
        assert private.replace(alices["private"], "ID") == missing.replace(MISSING, "ID")
        assert status_of(bob.get(f"/ui/memories/{own}").text) == "deleted"
    with client(server, "alice") as alice:  # nothing of hers changed
        for kind in ("team", "private"):
            assert status_of(alice.get(f"/ui/memories/{alices[kind]}").text) == "current"
    with client(server) as browser:  # a logged-in browser needs the form's CSRF token
        assert browser.post("/ui/login", data={"token": server.tokens["bob"]}).status_code == 303
        forged = browser.post("/ui/delete", data={"id": [alices["team"]]})
        assert forged.status_code == 403 and "expired" in forged.text
