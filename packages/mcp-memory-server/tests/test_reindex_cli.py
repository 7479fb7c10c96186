"""``mcp-memory reindex`` / ``build-index`` through click, on real stores with the hash embedder:
what it does for each kind of store, and what it says. The model change itself (fake -> MiniLM,
with Ctrl-C and a resume) is tests/e2e/test_e2e_reindex.py; the store semantics are the conformance
suite's re-embedding tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from server_helpers import cli_ok as ok
from server_helpers import run_cli as run

from mcp_memory_server.cli.common import EXIT_ERROR


@pytest.fixture
def sqlite(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mcp_memory_sqlite_vec")
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")


@pytest.fixture
def vault(fake_env: dict[str, str], tmp_path: Path) -> Path:
    pytest.importorskip("mcp_memory_markdown")
    where = tmp_path / "vault"
    ok("init", "--path", str(where))
    (where / "Concepts" / "Maria.md").write_text("Maria leads the payments team.\n", encoding="utf-8")
    (where / "Concepts" / "broken.md").write_text("---\nid: [\n---\nx\n", encoding="utf-8")
    return where


def test_a_store_holding_the_configured_model_has_nothing_to_reembed(sqlite: None) -> None:
    ok("add", "The staging database listens on port 5432")
    result = ok("reindex")
    assert "holds vectors of hash-64: nothing to re-embed." in result.stdout
    summary: dict[str, Any] = json.loads(ok("reindex", "--json").stdout)
    assert summary["kind"] == "reembed" and summary["previous"] is None and summary["embedded"] == 0


def test_rebuild_is_for_a_derived_index_only(sqlite: None) -> None:
    ok("add", "A fact")
    result = run("reindex", "--rebuild")
    assert result.exit_code == EXIT_ERROR
    assert "--rebuild is for a store whose index is derived from its own data (a vault)" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_store_that_cannot_reembed_says_how_to_move_instead(fake_env: dict[str, str]) -> None:
    result = run("reindex")  # the testing in-memory store
    assert result.exit_code == EXIT_ERROR
    assert "cannot re-embed its memories in place: export them with the old embedder" in result.stderr


def test_a_missing_database_is_one_sentence_and_not_created(sqlite: None, fake_env: dict[str, str]) -> None:
    result = run("reindex")
    assert result.exit_code == EXIT_ERROR and "There is no memory database at" in result.stderr
    assert not Path(fake_env["MCP_MEMORY_DB_PATH"]).exists()


def test_a_vault_builds_its_index_lists_other_models_and_rebuilds(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary: dict[str, Any] = json.loads(ok("reindex", "--path", str(vault), "--json").stdout)
    assert (summary["kind"], summary["indexed"], summary["skipped"]) == ("index", 1, 1)
    assert len(summary["problems"]) == 1
    assert summary["problems"][0].startswith("Concepts/broken.md: its frontmatter is not valid YAML")
    assert summary["other_indexes"] == []
    # another model's index beside it (a server on that model): kept and named, never opened
    other = vault / ".mcp-memory" / "index-0123456789ab.db"
    other.write_bytes(b"another model's index")
    again = ok("reindex", "--path", str(vault))
    assert "Indexed 0 notes" in again.stdout  # nothing changed since the first run
    assert "index-0123456789ab.db (0.0 MB)" in again.stdout and other.read_bytes() == b"another model's index"
    assert "Skipped 1 that are not memories" in again.stderr  # every run lists what it cannot read
    rebuilt: dict[str, Any] = json.loads(
        ok("build-index", "--path", str(vault), "--rebuild", "--json").stdout
    )
    assert rebuilt["indexed"] == 1 and rebuilt["skipped"] == 1
    # whoever runs it, it prints counts and file names, never a memory's text
    monkeypatch.setenv("MCP_MEMORY_USER", "mallory")
    shown = ok("reindex", "--path", str(vault), "--rebuild")
    assert "Maria" not in shown.stdout + shown.stderr
    assert (vault / "Concepts" / "Maria.md").read_text(encoding="utf-8") == "Maria leads the payments team.\n"


def test_a_secret_typed_into_a_note_is_indexed_redacted_and_named_never_shown(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "AKIAQ3EGUJ7NYWPRT4FD"
    note = vault / "Concepts" / "deploy.md"
    note.write_text(f"The deploy user's access key is {key}.\n", encoding="utf-8")
    summary: dict[str, Any] = json.loads(ok("reindex", "--path", str(vault), "--json").stdout)
    assert summary["redacted"] == [
        "Concepts/deploy.md: redacted 1 secret: an AWS access key in content (the note itself is unchanged)"
    ]
    assert note.read_text(encoding="utf-8") == f"The deploy user's access key is {key}.\n"
    monkeypatch.setenv("MCP_MEMORY_STORE", "markdown")
    monkeypatch.setenv("MCP_MEMORY_VAULT", str(vault))
    listed = ok("list", "--json").stdout
    assert "[REDACTED:aws-key]" in listed and key not in listed
    said = ok("reindex", "--path", str(vault), "--rebuild")
    assert "Indexed 1 with placeholders in place of secrets" in said.stderr
    assert key not in said.stdout + said.stderr
