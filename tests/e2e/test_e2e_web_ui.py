"""The web UI in a real browser: Debian's chromium driven by Playwright, against a real
``mcp-memory serve --transport http`` with tokens and a sqlite-vec database.

Screenshots of the main pages go to a temporary folder; with ``MCP_MEMORY_UI_SCREENSHOTS=1`` to
docs/img/ (what docs/ui.md shows). CI (CI=true) installs chromium and must run these: only a
machine without chromium, outside CI, skips them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_helpers import (
    CHROMIUM_ARGS,
    MISSING,
    SCREENSHOTS,
    UiServer,
    chatgpt_export,
    chromium_path,
    in_ci,
    ui_server,
)

pytestmark = [pytest.mark.e2e, pytest.mark.browser, pytest.mark.usefixtures("default_plugins")]

TEA = [
    "I drink green tea every morning, never coffee",
    "Our staging database runs on pg-03 in Frankfurt",
    "The team standup is at 9:30 on weekdays",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    path = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if in_ci():
            raise
        pytest.skip("playwright is not installed (uv sync --group dev)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    from e2e_helpers import require_default_plugins

    require_default_plugins()
    with ui_server(tmp_path_factory.mktemp("ui-browser")) as running:
        yield running


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("MCP_MEMORY_UI_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_default_timeout(20_000)
    opened = context.new_page()
    yield opened
    context.close()


def log_in(page: Any, server: UiServer, user: str) -> None:
    page.goto(f"{server.ui}/")
    assert "/ui/login" in page.url
    page.get_by_label("Token").fill(server.tokens[user])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{server.ui}/")
    assert page.get_by_test_id("user").inner_text() == user


def import_file(page: Any, server: UiServer, tmp_path: Path, name: str, data: bytes) -> str:
    """Upload ``data`` on the Import page; return the job's final line once it is done."""
    upload = tmp_path / name
    upload.write_bytes(data)
    page.goto(f"{server.ui}/import")
    page.get_by_label("File", exact=True).set_input_files(str(upload))
    page.get_by_role("button", name="Import").click()
    page.wait_for_url(re.compile(r".*/ui/import/[\w-]+$"))
    text = page.get_by_test_id("job-text")
    text.filter(has_text="Done").wait_for()
    return str(text.inner_text())


def test_log_in_with_a_token_and_a_wrong_token_is_refused(page, server, shots):
    page.goto(f"{server.ui}/stats")
    assert "/ui/login" in page.url
    page.screenshot(path=str(shots / "login.png"))
    page.get_by_label("Token").fill("mcpm_this-is-not-a-token")
    page.get_by_role("button", name="Log in").click()
    assert page.get_by_role("alert").inner_text().startswith("That token is not valid")
    assert page.get_by_test_id("user").count() == 0
    page.get_by_label("Token").fill(server.tokens["alice"])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{server.ui}/stats")  # back where it was going
    assert page.get_by_test_id("user").inner_text() == "alice"
    assert page.get_by_test_id("embedder").inner_text() == "hash-64"
    assert page.evaluate("() => document.cookie") == ""  # the session cookie is HttpOnly
    assert page.evaluate("() => sessionStorage.length + localStorage.length") == 0
    page.get_by_role("button", name="Log out").click()
    assert page.get_by_role("status").inner_text() == "You are logged out."
    page.goto(f"{server.ui}/")
    assert "/ui/login" in page.url


def test_import_search_history_edit_pin_delete_restore(page, server, shots, tmp_path):
    log_in(page, server, "alice")
    done = import_file(page, server, tmp_path, "conversations.json", chatgpt_export("tea", TEA * 1))
    assert done.startswith("Done: imported 3 into namespace user, skipped 0")
    assert page.locator("#job-progress").evaluate("p => [p.value, p.max]") == [3, 3]
    page.screenshot(path=str(shots / "import.png"))
    assert import_file(page, server, tmp_path, "conversations.json", chatgpt_export("tea", TEA)).startswith(
        "Done: imported 0 into namespace user, skipped 3"
    )
    # dragged onto the import box instead of chosen: the same import (nothing new the third time)
    page.goto(f"{server.ui}/import")
    dropped = page.evaluate_handle(
        """(text) => { const files = new DataTransfer();
            files.items.add(new File([text], "dragged.json", {type: "application/json"}));
            return files; }""",
        chatgpt_export("tea", TEA).decode("utf-8"),
    )
    page.dispatch_event("#drop-zone", "drop", {"dataTransfer": dropped})
    assert page.locator("#drop-hint").inner_text() == "Ready to import dragged.json."
    page.get_by_role("button", name="Import").click()
    page.wait_for_url(re.compile(r".*/ui/import/[\w-]+$"))
    page.get_by_test_id("job-text").filter(has_text="Done").wait_for()
    assert (
        page.get_by_test_id("job-text")
        .inner_text()
        .startswith("Done: imported 0 into namespace user, skipped 3")
    )

    page.goto(f"{server.ui}/")
    assert page.locator(".memory-item").count() == 3
    page.screenshot(path=str(shots / "browse.png"))

    page.goto(f"{server.ui}/search")
    page.get_by_label("Search by meaning").fill("green tea morning")
    page.get_by_label("Explain scores").check()
    page.get_by_role("button", name="Search", exact=True).click()
    first = page.locator(".results .memory-item").first
    assert TEA[0] in first.inner_text()
    assert first.get_by_role("table").count() == 1  # the score parts
    assert "similarity" in first.get_by_role("table").inner_text()
    page.screenshot(path=str(shots / "search.png"), full_page=True)

    first.get_by_role("link").click()
    assert page.get_by_test_id("status").inner_text() == "current"
    assert page.get_by_test_id("history").locator("li").count() == 1
    page.get_by_label("Content").fill("I drink green tea every morning, with lemon")
    page.get_by_label("Tags").fill("drinks, mornings")
    page.get_by_role("button", name="Save as a new version").click()
    assert page.get_by_role("status").inner_text().startswith("Saved")
    assert page.get_by_test_id("content").inner_text() == "I drink green tea every morning, with lemon"
    history = page.get_by_test_id("history").locator("li")
    assert history.count() == 2
    assert TEA[0] in history.nth(0).inner_text() and "current" in history.nth(1).inner_text()

    page.get_by_role("button", name="Pin", exact=True).click()
    assert page.get_by_role("status").inner_text().startswith("Pinned")
    assert page.get_by_role("button", name="Unpin").count() == 1
    page.screenshot(path=str(shots / "memory.png"), full_page=True)

    page.once("dialog", lambda dialog: dialog.accept())  # "Delete this memory?"
    page.get_by_role("button", name="Delete").click()
    assert page.get_by_test_id("status").inner_text() == "deleted"
    page.goto(f"{server.ui}/search?q=green+tea+lemon")
    assert "with lemon" not in page.locator("main").inner_text()
    page.go_back()
    page.get_by_role("button", name="Restore").click()
    assert page.get_by_test_id("status").inner_text() == "current"
    page.goto(f"{server.ui}/search?q=green+tea+lemon")
    assert "with lemon" in page.locator(".results").inner_text()

    page.goto(f"{server.ui}/stats")
    page.screenshot(path=str(shots / "stats.png"))
    page.goto(f"{server.ui}/export")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download").click()
    saved = tmp_path / "export.jsonl"
    download.value.save_as(saved)
    assert '"format":"mcp-memory"' in saved.read_text().splitlines()[0]


def test_another_user_cannot_see_or_change_the_first_users_memory(page, server, browser, tmp_path):
    log_in(page, server, "alice")
    import_file(page, server, tmp_path, "secret.json", chatgpt_export("secret", ["my locker code is 1234"]))
    page.goto(f"{server.ui}/search?q=locker+code")
    page.locator(".results .memory-item a").first.click()
    secret_url = page.url
    secret_id = secret_url.rsplit("/", 1)[1]

    context = browser.new_context()
    carol = context.new_page()
    try:
        log_in(carol, server, "carol")
        carol.goto(secret_url)
        assert carol.get_by_role("heading", level=1).inner_text() == "Not found"
        shown = carol.get_by_role("alert").inner_text()
        carol.goto(f"{server.ui}/memories/{MISSING}")
        assert carol.get_by_role("alert").inner_text() == shown.replace(secret_id, MISSING)
        carol.goto(f"{server.ui}/search?q=locker+code&namespace=*")
        assert "1234" not in carol.locator("main").inner_text()
        carol.goto(f"{server.ui}/?namespace=*")
        assert "1234" not in carol.locator("main").inner_text()
        # a forged form from carol's own session: the engine refuses it as missing
        csrf = carol.locator("input[name=csrf]").first.get_attribute("value")
        response = carol.request.post(f"{secret_url}/delete", form={"csrf": csrf})
        assert response.status == 404
    finally:
        context.close()
    page.reload()
    assert page.get_by_test_id("status").inner_text() == "current"


def test_keyboard_focus_is_visible_and_in_order(page, server):
    log_in(page, server, "alice")
    page.goto(f"{server.ui}/stats")  # a page without autofocus: Tab starts at the top
    order = []
    for _ in range(10):
        page.keyboard.press("Tab")
        order.append(
            page.evaluate("() => document.activeElement.textContent.trim() || document.activeElement.id")
        )
    menu = ["Browse", "New", "Search", "Tags", "Import", "Export", "Tidy", "Stats"]
    assert order[:10] == ["Skip to content", "mcp-memory", *menu]
    outline = page.evaluate("() => getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none")
    page.reload()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # the skip link
    assert page.evaluate("() => document.activeElement.id") == "main"
    landmarks = page.evaluate(
        "() => ['header', 'nav', 'main', 'footer'].map(t => document.querySelectorAll(t).length)"
    )
    assert landmarks == [1, 1, 1, 1]
    page.goto(f"{server.ui}/search")
    unlabelled = page.evaluate(
        """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
             .filter(e => !e.labels || e.labels.length === 0).map(e => e.name)"""
    )
    assert unlabelled == []


def test_usable_at_phone_width(browser, server, shots, tmp_path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        log_in(page, server, "alice")
        for path in ("/", "/search?q=tea&explain=1", "/new", "/tags", "/import", "/stats"):
            page.goto(f"{server.ui}{path}")
            width = page.evaluate("() => document.documentElement.scrollWidth")
            assert width <= 390, f"{path} scrolls sideways at 390 px ({width} px wide)"
        page.goto(f"{server.ui}/")
        page.screenshot(path=str(shots / "phone.png"), full_page=True)
        page.locator(".memory-item a").first.click()
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


@pytest.mark.model
def test_the_real_model_finds_by_meaning_in_the_browser(browser, tmp_path):
    """The default embedder (all-MiniLM-L6-v2), not the hash: a search with none of the words."""
    with ui_server(tmp_path, fast=False) as server:
        context = browser.new_context()
        page = context.new_page()
        try:
            log_in(page, server, "alice")
            done = import_file(page, server, tmp_path, "conversations.json", chatgpt_export("minilm", TEA))
            assert done.startswith("Done: imported 3")
            page.goto(f"{server.ui}/search?q=what+do+I+like+to+drink")
            assert TEA[0] in page.locator(".results .memory-item").first.inner_text()
            page.goto(f"{server.ui}/stats")
            assert "all-MiniLM-L6-v2" in page.get_by_test_id("embedder").inner_text()
        finally:
            context.close()


def test_mcp_memory_ui_serves_the_local_user_on_loopback_and_opens_the_browser(browser, tmp_path):
    from e2e_helpers import free_port, module_command, server_env

    opened = tmp_path / "opened.txt"
    fake_browser = tmp_path / "browser.py"
    fake_browser.write_text(f"import sys, pathlib\npathlib.Path({str(opened)!r}).write_text(sys.argv[1])\n")
    env = server_env(
        tmp_path / "memories.db", MCP_MEMORY_EMBEDDER="hash", BROWSER=f"{sys.executable} {fake_browser} %s"
    )
    refused = subprocess.run(
        [*module_command(), "ui", "--host", "0.0.0.0", "--no-browser"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "loopback" in refused.stderr
    port = free_port()
    proc = subprocess.Popen(
        [*module_command(), "ui", "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not opened.exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
        url = opened.read_text()
        assert url == f"http://127.0.0.1:{port}/ui/"
        context = browser.new_context()
        page = context.new_page()
        try:
            page.goto(url)
            assert page.url == url  # no login: the local user's own server
            assert page.get_by_test_id("user").inner_text() == "local"
            assert page.get_by_role("button", name="Log out").count() == 0
        finally:
            context.close()
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert proc.stdout is not None and proc.stdout.read() == b""


def test_new_memory_local_times_and_bulk_delete_in_the_browser(browser, server):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    context = browser.new_context(viewport={"width": 1100, "height": 800}, timezone_id="Asia/Kolkata")
    context.set_default_timeout(20_000)
    page = context.new_page()
    blocked: list[str] = []
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    log_in(page, server, "carol")
    page.get_by_role("link", name="New", exact=True).click()
    page.get_by_label("Content").fill("carol waters the plants on mondays")
    page.get_by_label("Tags").fill("plants, home")
    page.get_by_role("button", name="Store").click()
    assert page.get_by_test_id("receipt").inner_text().startswith("Stored")
    page.get_by_role("link", name="Open the new memory").click()
    page.wait_for_url(re.compile(r".*/ui/memories/[\w-]+$"))
    memory_id = page.url.rsplit("/", 1)[-1]

    response = page.reload()  # the time elements, converted by our own script under the strict CSP
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert page.locator("script:not([src])").count() == 0
    created = page.locator("time").first
    exact = created.get_attribute("datetime")
    local = datetime.fromisoformat(exact).astimezone(ZoneInfo("Asia/Kolkata"))
    assert created.inner_text() == local.strftime("%Y-%m-%d %H:%M")
    assert created.get_attribute("title").endswith("UTC")  # the server's UTC text, on hover

    page.goto(f"{server.ui}/")
    page.locator(f"#pick-{memory_id}").check()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete selected").click()
    page.wait_for_url(f"{server.ui}/delete")
    assert "Deleted 1 memory." in page.get_by_test_id("bulk-result").inner_text()
    assert blocked == []
    context.close()
