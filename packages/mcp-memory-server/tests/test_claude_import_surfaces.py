"""The Claude.ai export through every surface that imports: ``mcp-memory import`` and the web UI's
upload, one operation for both (detected, to ``user``, chit-chat left out, re-import a no-op), and the
importing user's own: another user sees none of it."""

from __future__ import annotations

import json
import threading
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from test_import_operation import upload
from test_server_cli import engine, run  # noqa: F401  # engine: the CLI's shared engine fixture

from mcp_memory_core.engine import MemoryEngine

CONVERSATION = "0b6f3c55-8f1e-4c53-9a0e-3f1d2b8c7a10"


def iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def claude_zip(tmp_path: Path, days_ago: float = 2) -> Path:
    """A Claude.ai export as mailed: a zip of conversations.json and users.json; one conversation of
    a fact, a thanks and Claude's reply, ``days_ago`` days old."""
    start = datetime.now(UTC) - timedelta(days=days_ago)

    def message(number: int, sender: str, text: str) -> dict[str, Any]:
        at = iso(start + timedelta(seconds=number))
        return {
            "uuid": f"7a1f0c3e-000{number}-4b2a-9c1d-00000000000{number}",
            "text": text,
            "content": [
                {"start_timestamp": at, "stop_timestamp": at, "type": "text", "text": text, "citations": []}
            ],
            "sender": sender,
            "created_at": at,
            "updated_at": at,
            "attachments": [],
            "files": [],
        }

    conversation = {
        "uuid": CONVERSATION,
        "name": "Kitchen remodel",
        "created_at": iso(start),
        "updated_at": iso(start + timedelta(seconds=3)),
        "account": {"uuid": "e3b7a9c2-4d1f-4e8a-9b6c-2f0d1a3e5c78"},
        "chat_messages": [
            message(1, "human", "Our kitchen cabinets are walnut."),
            message(2, "assistant", "Walnut pairs well with brass handles."),
            message(3, "human", "thanks!"),
        ],
    }
    path = tmp_path / "data-2026-01-01-00-00-00.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("users.json", json.dumps([{"uuid": "e3b7a9c2", "full_name": "Ada"}]))
        archive.writestr("conversations.json", json.dumps([conversation]))
    return path


# -- the CLI -----------------------------------------------------------------------------------------------
def test_cli_imports_a_claude_export_into_user_and_says_where(engine: MemoryEngine, tmp_path: Path) -> None:  # noqa: F811
    path = claude_zip(tmp_path)
    assert engine.default_scope.default_namespace != "user"  # the command runs inside a project
    result = run("import", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == (
        "imported 1 into namespace 'user', skipped 0 (already present); "
        "left out 1 chit-chat turn (greetings, thanks, one-word replies)"
    )
    (memory,) = engine.store.iter_all()
    assert (memory.content, memory.namespace, memory.thread) == (
        "Our kitchen cabinets are walnut.",
        "user",
        f"claude:{CONVERSATION}",
    )
    assert memory.metadata["source"] == "claude" and memory.metadata["conversation"] == "Kitchen remodel"
    again = json.loads(run("import", str(path), "--json").stdout)
    assert (again["format"], again["imported"], again["skipped"], again["chit_chat"]) == ("claude", 0, 1, 1)


def test_cli_takes_the_assistants_replies_and_a_namespace_for_claude(
    engine: MemoryEngine,  # noqa: F811
    tmp_path: Path,
) -> None:
    path = claude_zip(tmp_path)
    data = json.loads(run("import", str(path), "--include-assistant", "--namespace", "home", "--json").stdout)
    assert (data["format"], data["namespace"], data["imported"]) == ("claude", "home", 2)
    assert sorted(m.metadata["role"] for m in engine.store.iter_all()) == ["assistant", "user"]


def test_cli_refuses_a_bad_claude_export_in_one_sentence(engine: MemoryEngine, tmp_path: Path) -> None:  # noqa: F811
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{"uuid": "c1", "name": "Trip", "chat_messages": [{"sender": "human"}]}]))
    result = run("import", str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        "mcp-memory: error: conversation 1 ('Trip'), message 1: no 'uuid'; is this a Claude.ai export's "
        "conversations.json?\n"
    )
    assert list(engine.store.iter_all()) == []


# -- the web UI --------------------------------------------------------------------------------------------
def finished(ui_app: Any) -> dict[str, Any]:
    (job,) = ui_app.jobs._jobs.values()
    for thread in threading.enumerate():
        if thread.name == f"mcp-memory-import-{job.id}":
            thread.join()
    status: dict[str, Any] = job.status()
    return status


def test_the_ui_upload_imports_a_claude_zip_like_the_cli(ui: tuple[Starlette, Any], tmp_path: Path) -> None:
    _, ui_app = ui
    response = upload(ui, claude_zip(tmp_path))
    assert response.status_code == 303, response.text
    status = finished(ui_app)
    assert status["state"] == "done", status
    assert (status["result"]["imported"], status["result"]["chit_chat"]) == (1, 1)
    assert status["result"]["namespace"] == "user"
    stored = list(ui_app.service.engine().store.iter_all())
    assert [(m.content, m.thread) for m in stored] == [
        ("Our kitchen cabinets are walnut.", f"claude:{CONVERSATION}")
    ]


def test_the_ui_offers_the_claude_format(ui: tuple[Starlette, Any]) -> None:
    from starlette.testclient import TestClient

    app, _ = ui
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        page = client.get("/ui/import").text
    assert '<option value="claude">' in page and "Claude.ai" in page


# -- the Scope ---------------------------------------------------------------------------------------------
def test_another_user_sees_nothing_of_a_users_claude_import(settings: Any, tmp_path: Path) -> None:
    """The import operation every surface runs, as alice; bob, in the same project, finds nothing of
    it, by search, by listing or by its thread."""
    from mcp_memory_core.filters import Filters
    from mcp_memory_core.scope import Scope
    from mcp_memory_server.operations.transfer import ImportRequest, prepare_import, write_import
    from mcp_memory_server.runtime.service import MemoryService

    service = MemoryService(settings)
    try:
        engine = service.engine()
        alice = Scope.for_user("alice", project="kitchen")
        bob = Scope.for_user("bob", project="kitchen")
        request = ImportRequest(path=claude_zip(tmp_path))
        result = write_import(engine, prepare_import(engine, alice, request))
        assert (result.format, result.imported, result.namespace) == ("claude", 1, "user")
        thread = Filters(thread=f"claude:{CONVERSATION}")
        assert [h.memory.owner for h in engine.search_memories("walnut", 5, thread, scope=alice)] == ["alice"]
        assert engine.search_memories("walnut", 5, thread, "*", scope=bob) == []
        assert engine.search_memories("kitchen cabinets", 5, scope=bob) == []
        assert engine.list_memories(namespace="*", scope=bob).memories == []
    finally:
        service.close()


def test_a_claude_import_older_than_the_episodic_lifetime_is_refused_as_episodic(
    engine: MemoryEngine,  # noqa: F811
    tmp_path: Path,
) -> None:
    path = claude_zip(tmp_path, days_ago=400)
    refused = run("import", str(path), "--type", "episodic")
    assert refused.exit_code == 1 and "1 of 1 memories are older than the episodic lifetime" in refused.stderr
    assert list(engine.store.iter_all()) == []
