"""The web UI's end-to-end helpers: a real ``mcp-memory serve --transport http`` with users and
tokens, files to import, and Debian's chromium through Playwright (never a downloaded browser).

A uniquely named module (not conftest) so tests can import it whatever else pytest collects.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import create_token, http_server, module_command, server_env

# The hash embedder (mcp-memory-testing's fake) keeps these tests fast: no model loads. The store is
# the real sqlite-vec one in a real file; test_e2e_web_ui.py has one test with the real MiniLM.
FAST = {"MCP_MEMORY_EMBEDDER": "hash"}
MISSING = "00000000-0000-4000-8000-000000000000"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "img"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def chromium_path() -> str:
    """Debian's chromium: CI installs it (.ci/run) and must run these tests; elsewhere a machine
    without it skips them, saying how to install it."""
    path = shutil.which("chromium")
    if path is None:
        message = "chromium is not installed (apt-get install --no-install-recommends chromium)"
        if in_ci():
            pytest.fail(f"{message}: .ci/run installs it, and CI must run the browser tests")
        pytest.skip(message)
    return path


@dataclass
class UiServer:
    """A running server: its base URL (``http://127.0.0.1:PORT``) and a token per user."""

    base: str
    tokens: dict[str, str]
    env: dict[str, str]
    errlog: Path

    @property
    def ui(self) -> str:
        return f"{self.base}/ui"


@contextlib.contextmanager
def ui_server(root: Path, *, fast: bool = True) -> Iterator[UiServer]:
    """alice and bob share the team ``core``; carol is in no team."""
    env = server_env(root / "data" / "memories.db", **(FAST if fast else {}))
    tokens = {
        "alice": create_token(env, "alice", "core"),
        "bob": create_token(env, "bob", "core"),
        "carol": create_token(env, "carol"),
    }
    errlog = root / "server.log"
    with http_server(module_command(), env, errlog) as url:
        yield UiServer(base=url.removesuffix("/mcp"), tokens=tokens, env=env, errlog=errlog)


def chatgpt_export(conversation_id: str, messages: list[str], start: int = 1_700_000_000) -> bytes:
    """A ChatGPT ``conversations.json`` with one conversation of user messages, a minute apart."""
    mapping: dict[str, Any] = {}
    previous = None
    for number, text in enumerate(messages):
        node = f"{conversation_id}-m{number}"
        mapping[node] = {
            "id": node,
            "parent": previous,
            "children": [],
            "message": {
                "id": node,
                "author": {"role": "user"},
                "create_time": start + 60 * number,
                "content": {"content_type": "text", "parts": [text]},
            },
        }
        if previous is not None:
            mapping[previous]["children"].append(node)
        previous = node
    return json.dumps(
        [
            {
                "id": conversation_id,
                "title": f"chat {conversation_id}",
                "create_time": start,
                "mapping": mapping,
            }
        ]
    ).encode()


def memory_ids(html: str) -> list[str]:
    """The memory ids a list or search page links to, in order."""
    return list(dict.fromkeys(re.findall(r'href="/ui/memories/([0-9a-f-]{36})"', html)))


def status_of(html: str) -> str:
    found = re.search(r'data-testid="status">(\w+)<', html)
    assert found, html[:2000]
    return found.group(1)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, html[:2000]
    return found.group(1)
