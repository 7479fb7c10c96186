"""Secrets never reach the database, whatever surface the write comes through: MCP (the database
file's bytes are read back), the CLI (add, update, import), the web UI (the form, an import) and the
Claude Code hooks' captured decisions; each says what was redacted where, never the value, and the
logs never show one. The engine screens every write before it is embedded or written, so another
user has nothing of anyone's secret to learn: it is never stored (nothing new for the Scope to guard)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from server_helpers import error_text, payload
from test_hooks import hook_env, project, run_hook, stop_payload, stored_contents  # noqa: F401
from test_ui_units import form_csrf, routes_ids

from mcp_memory_server.cli import cli

AWS_ID = "AKIAQ3EGUJ7NYWPRT4FD"
DB_PASSWORD = "Zx9-kQ2mW7"
DB_URL = f"postgres://app:{DB_PASSWORD}@db.internal:5432/app"
GHP = "ghp_" + "R8sT2vW4xY6zA1bC3dE5fG7hJ9kL0mN2pQ4r"
SECRETS = (AWS_ID, DB_PASSWORD, GHP)
ORDINARY = (
    "Fixed in 3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291 (v2.14.3); request 3b241101-e2bb-4255-8caa-4b6b6b7b1c2f; "
    "image python@sha256:4b7c5e4a1d4e7a9f0b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8; "
    "docs https://docs.example.com/guide?v=2 and /etc/mcp-memory/config.yaml on 10.0.3.17:5432"
)


@pytest.fixture
def sqlite_env(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The real sqlite-vec store (a file whose bytes a test reads) with the hash embedder."""
    pytest.importorskip("mcp_memory_sqlite_vec")
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")
    monkeypatch.delenv("MCP_MEMORY_USER", raising=False)
    return fake_env


def database_bytes(env: dict[str, str]) -> bytes:
    """Every byte of the database's files: the main file, its -wal and -shm, and tokens.db beside it."""
    database = Path(env["MCP_MEMORY_DB_PATH"])
    files = [*database.parent.glob(f"{database.name}*"), *database.parent.glob("tokens.db*")]
    assert database in files
    return b"".join(path.read_bytes() for path in sorted(files))


def assert_no_secret_in(data: bytes | str) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    assert not [secret for secret in SECRETS if secret in text]


# -- MCP ------------------------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_a_key_stored_through_mcp_is_absent_from_the_database_file_and_the_receipt_names_it(
    sqlite_env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    from mcp import Client

    from mcp_memory_server.mcp.app import build_app
    from mcp_memory_server.runtime.settings import ServerSettings

    caplog.set_level(logging.DEBUG)  # everything any logger says while the secret passes through
    app = build_app(ServerSettings(log_level="DEBUG"))
    try:
        async with Client(app, mode="legacy") as client:
            content = f"The deploy user's key is {AWS_ID}; staging is {DB_URL}."
            receipt = payload(
                await client.call_tool(
                    "store_memory", {"content": content, "metadata": {"token": GHP}, "tags": ["deploy"]}
                )
            )
            assert receipt["status"] == "stored"
            assert receipt["redacted"] == [
                {"kind": "aws-key", "what": "an AWS access key", "field": "content"},
                {"kind": "url-password", "what": "a password in a URL", "field": "content"},
                {"kind": "github-token", "what": "a GitHub token", "field": "metadata.token"},
            ]
            assert receipt["redaction"] == (
                "redacted 3 secrets: an AWS access key in content, a password in a URL in content, "
                "a GitHub token in metadata.token"
            )
            shown = payload(await client.call_tool("get_memory", {"id": receipt["id"]}))
            assert shown["content"] == (
                "The deploy user's key is [REDACTED:aws-key]; staging is "
                "postgres://app:[REDACTED:url-password]@db.internal:5432/app."
            )
            ordinary = payload(await client.call_tool("store_memory", {"content": ORDINARY}))
            assert "redacted" not in ordinary
            assert (
                payload(await client.call_tool("get_memory", {"id": ordinary["id"]}))["content"] == ORDINARY
            )
            updated = payload(
                await client.call_tool(
                    "update_memory", {"id": ordinary["id"], "content": f"{ORDINARY} {GHP}"}
                )
            )
            assert updated["redaction"] == "redacted 1 secret: a GitHub token in content"
    finally:
        app.memory_service.close()
    assert_no_secret_in(database_bytes(sqlite_env))
    assert ORDINARY.encode() in database_bytes(sqlite_env)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert {"mcp.server.lowlevel.server", "mcp_memory_server.runtime.service"} <= {
        r.name for r in caplog.records
    }
    assert_no_secret_in(logged)


@pytest.mark.anyio
async def test_refused_through_mcp_the_tool_error_names_kind_and_field_and_nothing_is_written(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp import Client

    from mcp_memory_server.mcp.app import build_app
    from mcp_memory_server.runtime.settings import ServerSettings

    monkeypatch.setenv("MCP_MEMORY_SECRETS", "refuse")
    caplog.set_level(logging.DEBUG)
    app = build_app(ServerSettings(log_level="DEBUG"))
    try:
        async with Client(app, mode="legacy") as client:
            result = await client.call_tool("store_memory", {"content": f"key {AWS_ID}"})
            message = error_text(result)
            assert "an AWS access key in content" in message and "MCP_MEMORY_SECRETS" in message
            listed = payload(await client.call_tool("list_memories", {}))
            assert listed["memories"] == []
    finally:
        app.memory_service.close()
    assert_no_secret_in(message)
    assert_no_secret_in(database_bytes(sqlite_env))
    assert_no_secret_in("\n".join(r.getMessage() for r in caplog.records))


# -- CLI ------------------------------------------------------------------------------------------------
def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_cli_add_says_what_was_redacted_and_stores_no_secret(sqlite_env: dict[str, str]) -> None:
    said = run("add", f"staging is {DB_URL}")
    assert said.exit_code == 0, said.output
    assert said.stdout.splitlines()[0].endswith(
        "Redacted 1 secret: a password in a URL in content (MCP_MEMORY_SECRETS=redact)."
    )
    receipt = json.loads(run("add", f"key {AWS_ID}", "--json").stdout)
    assert receipt["redacted"] == [{"kind": "aws-key", "what": "an AWS access key", "field": "content"}]
    memory_id = receipt["id"]
    updated = run("update", memory_id, f"key {GHP}")
    assert updated.exit_code == 0 and "Redacted 1 secret: a GitHub token in content" in updated.stdout
    assert_no_secret_in(said.output + updated.output)
    assert_no_secret_in(database_bytes(sqlite_env))


def test_cli_add_refused_is_one_line_and_writes_nothing(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_SECRETS", "refuse")
    assert run("add", ORDINARY).exit_code == 0
    refused = run("add", f"key {AWS_ID}")
    assert refused.exit_code == 1 and refused.stdout == ""
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "an AWS access key in content" in lines[0]
    assert_no_secret_in(refused.output)
    assert [m["content"] for m in json.loads(run("list", "--json").stdout)["memories"]] == [ORDINARY]
    assert_no_secret_in(database_bytes(sqlite_env))


def export_with_secrets(tmp_path: Path) -> Path:
    base = {"created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00"}
    records = [
        {**base, "id": "6f1c1f8e-2f55-4a55-8a55-000000000001", "content": ORDINARY, "namespace": "default"},
        {
            **base,
            "id": "6f1c1f8e-2f55-4a55-8a55-000000000002",
            "content": f"key {AWS_ID}",
            "namespace": "default",
        },
        {
            **base,
            "id": "6f1c1f8e-2f55-4a55-8a55-000000000003",
            "content": "db",
            "metadata": {"url": DB_URL},
            "namespace": "default",
        },
    ]
    path = tmp_path / "export.jsonl"
    header = {"format": "mcp-memory", "version": 1, "count": len(records)}
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]), encoding="utf-8")
    return path


def test_cli_import_counts_the_redacted_memories(sqlite_env: dict[str, str], tmp_path: Path) -> None:
    path = export_with_secrets(tmp_path)
    said = run("import", str(path))
    assert said.exit_code == 0, said.output
    assert "redacted secrets in 2 (MCP_MEMORY_SECRETS=redact):" in said.stdout
    assert (
        "line 3 (memory 6f1c1f8e-2f55-4a55-8a55-000000000002): redacted 1 secret: an AWS access key in content"
        in said.stdout
    )
    summary = json.loads(run("import", str(path), "--json").stdout)  # again: every id already present
    assert summary["skipped"] == 3
    assert_no_secret_in(database_bytes(sqlite_env))


def test_cli_import_under_refuse_leaves_them_out_and_says_so(
    sqlite_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_SECRETS", "refuse")
    summary = json.loads(run("import", str(export_with_secrets(tmp_path)), "--json").stdout)
    assert summary["imported"] == 1 and len(summary["refused"]) == 2
    assert summary["refused"][0]["reason"].startswith("holds an AWS access key in content")
    assert_no_secret_in(json.dumps(summary))
    assert_no_secret_in(database_bytes(sqlite_env))


# -- web UI ---------------------------------------------------------------------------------------------
def test_the_ui_form_flashes_what_was_redacted(ui: tuple[Any, Any]) -> None:
    from starlette.testclient import TestClient

    app, _ = ui
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        csrf = form_csrf(client.get("/ui/new").text)
        page = client.post("/ui/new", data={"content": f"key {AWS_ID}", "type": "semantic", "csrf": csrf})
        assert page.status_code == 200, page.text
        assert "Redacted 1 secret: an AWS access key in content" in " ".join(page.text.split())
        assert_no_secret_in(page.text)
        memory = client.get(f"/ui/memories/{routes_ids(page.text)[0]}").text
        assert "[REDACTED:aws-key]" in memory
        assert_no_secret_in(memory)
        memory_id = routes_ids(page.text)[0]
        edit_csrf = form_csrf(memory)
        edited = client.post(
            f"/ui/memories/{memory_id}/edit",
            data={"content": f"key {GHP}", "csrf": edit_csrf},
            follow_redirects=True,
        )
        assert edited.status_code == 200, edited.text
        assert "each secret it held replaced by a placeholder" in edited.text
        assert "[REDACTED:github-token]" in edited.text
        assert_no_secret_in(edited.text)


def test_a_ui_import_job_says_which_memories_were_redacted(settings: Any, tmp_path: Path) -> None:
    from mcp_memory_server.operations.transfer import ImportRequest, prepare_import
    from mcp_memory_server.runtime.service import MemoryService
    from mcp_memory_server.web import routes
    from mcp_memory_server.web.imports import ImportJob, ImportJobs

    service = MemoryService(settings)
    try:
        engine = service.engine()
        prepared = prepare_import(
            engine, engine.default_scope, ImportRequest(path=export_with_secrets(tmp_path))
        )
        job = ImportJob(id="j1", owner="local", filename="export.jsonl", format="mcp-memory", total=3)
        ImportJobs(service)._run(job, prepared)
    finally:
        service.close()
    result = job.status()["result"]
    assert [r["where"] for r in result["redacted"]] == ["line 3", "line 4"]
    html = routes._templates().get_template("import_job.html").render(base="/ui", job=job, me=None)
    said = " ".join(html.split())
    assert "Redacted secrets in 2: line 3: redacted 1 secret: an AWS access key in content; line 4:" in said


# -- Claude Code hooks ----------------------------------------------------------------------------------
def test_a_captured_decision_holding_a_key_is_stored_redacted(
    hook_env: dict[str, str],  # noqa: F811
    project: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply = f"Done.\nDecision: the deploy job signs in with {AWS_ID} from now on.\n"
    result = run_hook("stop", stop_payload(project, reply), hook_env, "--store-decisions")
    assert result.returncode == 0, result.stderr.decode()
    assert json.loads(result.stdout) == {
        "systemMessage": "mcp-memory remembered 1 decision from this session "
        "(redacted 1 secret: an AWS access key in content)."
    }
    assert stored_contents(project, monkeypatch) == [
        "Decision: the deploy job signs in with [REDACTED:aws-key] from now on."
    ]
    assert_no_secret_in(database_bytes(hook_env))


def test_under_refuse_a_captured_decision_holding_a_key_is_left_out_and_the_others_kept(
    hook_env: dict[str, str],  # noqa: F811
    project: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply = f"Decision: sign in with {AWS_ID}.\nRemember: deploys go out on Fridays.\n"
    env = {**hook_env, "MCP_MEMORY_SECRETS": "refuse"}
    result = run_hook("stop", stop_payload(project, reply), env, "--store-decisions")
    assert json.loads(result.stdout) == {
        "systemMessage": "mcp-memory remembered 1 decision from this session "
        "(left out 1 holding an AWS access key in content)."
    }
    assert stored_contents(project, monkeypatch) == ["Remember: deploys go out on Fridays."]
    assert_no_secret_in(database_bytes(hook_env))


def test_the_ui_form_under_refuse_answers_400_in_one_sentence(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from mcp_memory_server.runtime.assembly import build_engine
    from mcp_memory_server.runtime.http_security import http_security
    from mcp_memory_server.runtime.service import MemoryService
    from mcp_memory_server.runtime.settings import ServerSettings
    from mcp_memory_server.web.mount import mount_ui

    monkeypatch.setenv("MCP_MEMORY_SECRETS", "refuse")
    service = MemoryService(ServerSettings(), lambda s: build_engine(s, require_scope=False))
    app = Starlette()
    ui_app = mount_ui(app, service, http_security("127.0.0.1", 8000, tokens=None))
    try:
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            csrf = form_csrf(client.get("/ui/new").text)
            page = client.post("/ui/new", data={"content": f"key {AWS_ID}", "csrf": csrf})
            assert page.status_code == 400 and "Traceback" not in page.text
            assert "Refused: an AWS access key in content; nothing was written." in " ".join(
                page.text.split()
            )
            assert_no_secret_in(page.text)
        assert list(ui_app.service.engine().store.iter_all()) == []
    finally:
        service.close()
