"""Import is one operation for the CLI and the web UI: the UI refuses what the CLI refuses (history
that would expire at once, options the file's format does not take), in one sentence, nothing written."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from starlette.applications import Starlette
from starlette.testclient import TestClient

BASE = "http://127.0.0.1:8000"


def chatgpt_file(tmp_path: Path, days_ago: float) -> Path:
    when = time.time() - days_ago * 86_400
    message = {
        "author": {"role": "user"},
        "create_time": when + 1,
        "content": {"content_type": "text", "parts": ["Our kitchen cabinets are walnut."]},
    }
    conversation = {
        "title": "Kitchen remodel",
        "create_time": when,
        "id": "conv-kitchen",
        "mapping": {"u1": {"id": "u1", "message": message, "parent": None, "children": []}},
    }
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conversation]), encoding="utf-8")
    return path


def export_file(tmp_path: Path) -> Path:
    stamp = "2026-01-01T00:00:00+00:00"
    record = {
        "id": "6f1c1f8e-2f55-4a55-8a55-000000000001",
        "content": "kept",
        "namespace": "default",
        "created_at": stamp,
        "updated_at": stamp,
    }
    path = tmp_path / "export.jsonl"
    header = {"format": "mcp-memory", "version": 1, "count": 1}
    path.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    return path


def upload(ui: tuple[Starlette, Any], path: Path, **fields: str) -> Any:
    app, ui_app = ui
    with TestClient(app, base_url=BASE) as client:
        return client.post(
            "/ui/import",
            data={"csrf": ui_app.auth._process_csrf, "format": "auto", **fields},
            files={"file": (path.name, path.read_bytes(), "application/octet-stream")},
            follow_redirects=False,
        )


def cli_import(path: Path, *options: str) -> Any:
    from mcp_memory_server.cli.main import cli

    return CliRunner().invoke(cli, ["import", str(path), *options])


def nothing_stored(ui_app: Any) -> bool:
    return list(ui_app.service.engine().store.iter_all()) == [] and ui_app.jobs._jobs == {}


def test_the_ui_refuses_history_that_would_expire_at_once_as_the_cli_does(ui, tmp_path):
    path = chatgpt_file(tmp_path, days_ago=400)
    refused = cli_import(path, "--type", "episodic")
    assert refused.exit_code == 1
    assert "1 of 1 memories are older than the episodic lifetime (90d)" in refused.stderr

    response = upload(ui, path, type="episodic")
    assert response.status_code == 400
    assert "1 of 1 memories are older than the episodic lifetime (90d) and would expire at once" in (
        html.unescape(response.text)
    )
    assert nothing_stored(ui[1])


def test_the_ui_imports_old_history_as_semantic_by_default(ui, tmp_path):
    response = upload(ui, chatgpt_file(tmp_path, days_ago=400))
    assert response.status_code == 303


def test_the_ui_refuses_a_namespace_for_an_export_as_the_cli_does(ui, tmp_path):
    path = export_file(tmp_path)
    refused = cli_import(path, "--namespace", "elsewhere")
    assert refused.exit_code == 2 and "--namespace and --type apply to chatgpt" in refused.stderr

    response = upload(ui, path, namespace="elsewhere")
    assert response.status_code == 400
    assert "an mcp-memory export keeps each memory&#39;s namespace" in response.text
    assert nothing_stored(ui[1])


def test_the_ui_refuses_a_type_for_an_export_as_the_cli_does(ui, tmp_path):
    path = export_file(tmp_path)
    assert cli_import(path, "--type", "working").exit_code == 2

    response = upload(ui, path, type="working")
    assert response.status_code == 400
    assert nothing_stored(ui[1])


def test_the_ui_refuses_an_unknown_type_in_one_sentence(ui, tmp_path):
    response = upload(ui, chatgpt_file(tmp_path, days_ago=1), type="forever")
    assert response.status_code == 400
    assert (
        "Unknown memory type &#39;forever&#39;; choose one of: working, episodic, semantic, procedural."
        in (response.text)
    )


def chit_chat_file(tmp_path: Path) -> Path:
    """A conversation of a greeting, one fact and a thanks, a day old."""
    when = time.time() - 86_400
    turns = ["hi", "Our kitchen cabinets are walnut.", "thanks!"]
    mapping = {
        f"u{n}": {
            "id": f"u{n}",
            "message": {
                "author": {"role": "user"},
                "create_time": when + n,
                "content": {"content_type": "text", "parts": [text]},
            },
            "parent": None,
            "children": [],
        }
        for n, text in enumerate(turns)
    }
    conversation = {"title": "Kitchen", "create_time": when, "id": "conv-chat", "mapping": mapping}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conversation]), encoding="utf-8")
    return path


def test_a_chat_export_goes_to_user_without_its_chit_chat_and_the_ui_says_so(settings, tmp_path):
    """One operation for the CLI and the web UI: the result names the namespace (``user``, not the
    project the import ran in) and how many turns were left out as chit-chat; the job page shows both."""
    from mcp_memory_server.operations.transfer import ImportRequest, prepare_import, write_import
    from mcp_memory_server.runtime.service import MemoryService
    from mcp_memory_server.web import routes
    from mcp_memory_server.web.imports import ImportJob

    service = MemoryService(settings)
    try:
        engine = service.engine()
        scope = engine.default_scope
        assert scope.default_namespace != "user"  # the tests run inside a project
        result = write_import(
            engine, prepare_import(engine, scope, ImportRequest(path=chit_chat_file(tmp_path)))
        )
        stored = list(engine.store.iter_all())
    finally:
        service.close()
    assert (result.imported, result.chit_chat, result.namespace) == (1, 2, "user")
    assert [(m.content, m.namespace) for m in stored] == [("Our kitchen cabinets are walnut.", "user")]
    job = ImportJob(id="j1", owner="local", filename="conversations.json", format="chatgpt", total=1)
    job.state, job.result = "done", result.model_dump(mode="json", exclude={"format", "file"})
    page = routes._templates().get_template("import_job.html").render(base="/ui", job=job, me=None)
    assert (
        "Done: imported 1 into namespace user, skipped 0 (already present); left out 2 chit-chat turns "
        "(greetings, thanks, one-word replies)." in " ".join(page.split())
    )
