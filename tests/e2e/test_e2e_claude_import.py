"""The Claude.ai export end to end: ``mcp-memory import`` of the zip Claude.ai mails (sqlite-vec +
MiniLM), then a real MCP stdio client finds a message by meaning in its conversation's thread; the same
import again adds nothing. Uploaded through the web UI of a server with users, it is the uploader's
own: a teammate finds none of it."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import module_command, payload, server_env, stdio_session
from test_e2e_web_ui_routes import client, wait_for_job
from ui_helpers import memory_ids, ui_server

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("default_plugins")]

CONVERSATIONS = {
    "0b6f3c55-8f1e-4c53-9a0e-3f1d2b8c7a10": (
        "Kitchen remodel",
        ["Our kitchen cabinets are walnut and the counters are soapstone.", "thanks!"],
    ),
    "5d2e9a41-7c3b-4f0e-8a6d-1b9c0e4f2a37": ("Commute", ["I cycle to the office on a steel road bike."]),
    "9c4d2b1a-6a0f-4e3f-8a7b-2c1d0e9f8a76": ("Dinner ideas", ["I have been vegetarian for ten years."]),
}
KITCHEN = "0b6f3c55-8f1e-4c53-9a0e-3f1d2b8c7a10"


def claude_export(path: Path) -> Path:
    """The zip Claude.ai mails: conversations.json (the person's turns and a reply from Claude for
    each) beside users.json."""
    conversations = []
    for number, (uuid, (name, turns)) in enumerate(CONVERSATIONS.items(), start=1):
        messages = []
        for turn, text in enumerate(turns):
            for sender, said in (("human", text), ("assistant", "Noted.")):
                at = f"2025-0{number}-1{turn}T09:00:0{len(messages)}.000000Z"
                messages.append(
                    {
                        "uuid": f"{uuid[:8]}-{len(messages):04d}-4000-8000-000000000000",
                        "text": said,
                        "content": [
                            {"type": "text", "text": said, "start_timestamp": at, "stop_timestamp": at}
                        ],
                        "sender": sender,
                        "created_at": at,
                        "updated_at": at,
                        "attachments": [],
                        "files": [],
                    }
                )
        created = messages[0]["created_at"]
        conversations.append(
            {
                "uuid": uuid,
                "name": name,
                "created_at": created,
                "updated_at": created,
                "chat_messages": messages,
            }
        )
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", json.dumps([{"uuid": "u-1", "full_name": "Ada"}]))
        archive.writestr("conversations.json", json.dumps(conversations))
    return path


def cli(db_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = server_env(db_path, MCP_MEMORY_NAMESPACE="e2e")
    proc = subprocess.run(
        [*module_command(), *args], env=env, capture_output=True, text=True, timeout=180, encoding="utf-8"
    )
    assert proc.returncode == 0, proc.stderr
    return proc


async def search(session: Any, query: str, **args: Any) -> list[dict[str, Any]]:
    result = payload(await session.call_tool("search_memories", {"query": query, "limit": 5, **args}))
    hits: list[dict[str, Any]] = result["results"]
    return hits


async def test_a_claude_export_is_found_by_meaning_in_its_thread(tmp_path: Path) -> None:
    db = tmp_path / "memories.db"
    export = claude_export(tmp_path / "data-2025-06-01.zip")
    first = cli(db, "import", str(export))
    assert first.stdout.strip() == (
        "imported 3 into namespace 'user', skipped 0 (already present); "
        "left out 1 chit-chat turn (greetings, thanks, one-word replies)"
    )
    assert cli(db, "import", str(export)).stdout.startswith("imported 0 into namespace 'user', skipped 3")

    async with stdio_session(
        module_command(), server_env(db, MCP_MEMORY_NAMESPACE="e2e"), tmp_path / "err"
    ) as s:
        thread = f"claude:{KITCHEN}"
        hits = await search(s, "what wood are the cupboards made of?", thread=thread)
        assert (
            hits and hits[0]["content"] == "Our kitchen cabinets are walnut and the counters are soapstone."
        )
        memory = payload(await s.call_tool("get_memory", {"id": hits[0]["id"]}))
        assert (memory["thread"], memory["occurred_at"]) == (thread, "2025-01-10T09:00:00+00:00")
        elsewhere = await search(s, "does this person eat meat?", thread=thread)
        assert "I have been vegetarian for ten years." not in [hit["content"] for hit in elsewhere]
        anywhere = await search(s, "does this person eat meat?")
        assert anywhere[0]["content"] == "I have been vegetarian for ten years."


def test_a_claude_export_uploaded_by_one_user_is_not_anothers(tmp_path: Path) -> None:
    export = claude_export(tmp_path / "data-2025-06-01.zip")
    with ui_server(tmp_path / "server") as server:
        with client(server, "alice") as alice:
            files = {"file": (export.name, export.read_bytes(), "application/zip")}
            response = alice.post("/ui/import", files=files, data={"format": "auto"})
            assert response.status_code == 303, response.text
            status = wait_for_job(alice, response.headers["location"])
            assert status["state"] == "done" and status["result"]["imported"] == 3, status
            mine = alice.get("/ui/search", params={"q": "walnut cabinets soapstone", "namespace": "*"})
            assert len(memory_ids(mine.text)) >= 1 and "the counters are soapstone" in mine.text
        with client(server, "bob") as bob:  # alice's teammate: her private memories stay hers
            for path, params in (
                ("/ui/search", {"q": "walnut cabinets soapstone", "namespace": "*"}),
                ("/ui/", {"namespace": "*"}),
            ):
                page = bob.get(path, params=params)
                assert page.status_code == 200 and memory_ids(page.text) == []
                assert "the counters are soapstone" not in page.text and "vegetarian" not in page.text
