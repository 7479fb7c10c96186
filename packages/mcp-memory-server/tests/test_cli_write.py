"""The CLI's writes (add, update, forget, pin, unpin), --namespace on list and search, --json on every
command, exit statuses, tables and progress — on the real sqlite-vec store (every invocation opens
the file again, as a shell does) with the fast hash embedder."""

from __future__ import annotations

import json
from typing import Any

import click
import pytest
from click.testing import Result
from server_helpers import cli_ok as ok
from server_helpers import run_cli as run

import mcp_memory_server.cli.display as cli_display
import mcp_memory_server.cli.write as cli_write
from mcp_memory_server.cli import cli
from mcp_memory_server.cli.common import EXIT_ERROR, EXIT_USAGE

UNKNOWN = "00000000-0000-4000-8000-000000000000"


@pytest.fixture
def store(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mcp_memory_sqlite_vec")
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")
    monkeypatch.delenv("MCP_MEMORY_USER", raising=False)


def as_json(*args: str, input: str | None = None) -> Any:
    return json.loads(ok(*args, "--json", input=input).stdout)


def refused(result: Result, code: int = EXIT_ERROR) -> str:
    """Refused with ``code``: one line on stderr, nothing on stdout, no traceback."""
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcp-memory: error: "), result.stderr
    assert "Traceback" not in result.output and result.stdout == ""
    return lines[0]


def add(content: str, *options: str) -> str:
    receipt = as_json("add", content, *options)
    assert receipt["status"] == "stored"
    return str(receipt["id"])


def get(memory_id: str) -> Any:
    return as_json("get", memory_id)


# -- add ---------------------------------------------------------------------------------------------
def test_add_stores_and_says_so(store: None) -> None:
    human = ok("add", "The staging database runs PostgreSQL 16")
    line = human.stdout.strip()
    assert line.startswith("Stored ") and line.endswith(" in namespace 'default'.")
    memory_id = line.split()[1]
    memory = get(memory_id)
    assert memory["content"] == "The staging database runs PostgreSQL 16"
    assert memory["owner"] == "local" and memory["namespace"] == "default" and memory["status"] == "current"


def test_add_json_is_store_memorys_receipt(store: None) -> None:
    receipt = as_json("add", "Deploys happen on Fridays")
    assert set(receipt) == {"id", "status", "namespace", "similar"}
    assert receipt["status"] == "stored" and receipt["namespace"] == "default" and receipt["similar"] == []


def test_add_a_duplicate_writes_nothing_and_names_the_original(store: None) -> None:
    first = add("Deploys happen on Fridays")
    again = as_json("add", "  deploys happen ON fridays ")
    assert again == {"id": first, "status": "duplicate", "namespace": "default", "similar": []}
    human = ok("add", "Deploys happen on Fridays").stdout.strip()
    assert human == (
        f"Duplicate of {first}: the same content is already stored in namespace 'default'; nothing written."
    )
    assert as_json("list")["total"] == 1


def test_add_takes_every_option_and_stdin(store: None) -> None:
    receipt = as_json(
        "add",
        "-",
        "--type",
        "procedural",
        "--tags",
        "deploy,ops",
        "--tags",
        "friday",
        "--importance",
        "0.9",
        "--pinned",
        "--occurred-at",
        "2023-05-08",
        "--namespace",
        "user",
        input="Always deploy before noon\n",
    )
    assert receipt["namespace"] == "user"
    memory = get(receipt["id"])
    assert memory["content"] == "Always deploy before noon"  # the final newline of stdin dropped
    assert memory["type"] == "procedural" and memory["tags"] == ["deploy", "ops", "friday"]
    assert memory["importance"] == 0.9 and memory["pinned"] is True
    assert memory["occurred_at"].startswith("2023-05-08")


def test_add_lists_similar_memories_and_supersedes_by_policy(
    store: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_DEDUP_THRESHOLD", "0.3")
    monkeypatch.setenv("MCP_MEMORY_DUPLICATE_THRESHOLD", "0.5")
    old = add("The staging database runs PostgreSQL 13")
    human = ok("add", "The staging database runs PostgreSQL 15").stdout
    assert "Similar memories" in human and old in human and "duplicate" in human
    monkeypatch.setenv("MCP_MEMORY_CONFLICT_POLICY", "supersede")
    receipt = as_json("add", "The staging database runs PostgreSQL 16")
    assert receipt["status"] == "superseded" and receipt["superseded"] in {
        r["id"] for r in receipt["similar"]
    }
    assert get(receipt["superseded"])["head_id"] == receipt["id"]
    again = ok("add", "The staging database runs PostgreSQL 17 now").stdout.splitlines()[0]
    assert again.startswith("Stored ") and ", superseding " in again


# -- update ------------------------------------------------------------------------------------------
def test_update_makes_a_new_version(store: None) -> None:
    old = add("The build uses make", "--tags", "build", "--importance", "0.7")
    receipt = as_json("update", old, "The build now uses just", "--tags", "build,just")
    assert set(receipt) == {"id", "superseded", "status"}
    assert receipt["superseded"] == old and receipt["status"] == "updated" and receipt["id"] != old
    new = get(receipt["id"])
    assert new["content"] == "The build now uses just" and new["tags"] == ["build", "just"]
    assert new["importance"] == 0.7  # left out: kept
    assert get(old)["status"] == "superseded" and get(old)["head_id"] == receipt["id"]
    human = ok("update", receipt["id"], "-", input="The build uses bazel\n").stdout.strip()
    assert human.startswith(f"Updated {receipt['id']}: the new version is ")
    line = refused(run("update", old, "Again"))  # an old version: the error names the current one
    assert "superseded" in line and "Update that one instead" in line


# -- forget ------------------------------------------------------------------------------------------
def test_forget_is_a_tombstone(store: None) -> None:
    memory_id = add("The VPN password rotates weekly")
    assert as_json("forget", memory_id) == {"id": memory_id, "status": "deleted", "success": True}
    assert get(memory_id)["status"] == "deleted"
    assert as_json("search", "VPN password")["results"] == []
    human = ok("forget", memory_id).stdout.strip()
    assert human == f"{memory_id} was already forgotten: nothing changed."


def test_forget_hard_purges_the_whole_chain(store: None) -> None:
    first = add("Sprint planning is on Mondays")
    second = as_json("update", first, "Sprint planning is on Tuesdays")["id"]
    receipt = as_json("forget", second, "--hard", "--yes")
    assert receipt["status"] == "purged" and receipt["success"] is True
    assert sorted(receipt["purged"]) == sorted([first, second])
    for gone in (first, second):
        assert "No memory with id" in refused(run("get", gone))


def test_forget_hard_without_yes_is_refused_without_a_terminal(store: None) -> None:
    memory_id = add("Keep me")
    line = refused(run("forget", memory_id, "--hard"), EXIT_USAGE)
    assert "--yes" in line and "terminal" in line
    assert get(memory_id)["status"] == "current"


def test_forget_hard_asks_on_a_terminal(store: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_write, "_stdin_is_terminal", lambda: True)
    memory_id = add("Ask before purging me")
    declined = run("forget", memory_id, "--hard", input="n\n")
    assert (
        declined.exit_code == 1 and "Purge " in declined.stderr and "Ask before purging me" in declined.stderr
    )
    assert get(memory_id)["status"] == "current"
    accepted = run("forget", memory_id, "--hard", input="y\n")
    assert accepted.exit_code == 0 and accepted.stdout.startswith(f"Purged {memory_id}: 1 version removed")
    assert "No memory with id" in refused(run("get", memory_id))
    unknown = run("forget", UNKNOWN, "--hard")  # an unknown id is said before any question
    assert unknown.exit_code == 1 and "Purge" not in unknown.stderr and "No memory with id" in unknown.stderr


# -- pin / unpin -------------------------------------------------------------------------------------
def test_pin_and_unpin(store: None) -> None:
    memory_id = add("Rebase the feature branch today", "--type", "working")
    assert get(memory_id)["expires_at"] is not None
    assert as_json("pin", memory_id) == {"id": memory_id, "pinned": True, "expires_at": None}
    assert get(memory_id)["pinned"] is True and get(memory_id)["expires_at"] is None
    unpinned = as_json("unpin", memory_id)
    assert unpinned["pinned"] is False and unpinned["expires_at"] == get(memory_id)["expires_at"]
    assert ok("pin", memory_id).stdout.strip() == f"Pinned {memory_id}: it never expires."
    assert ok("unpin", memory_id).stdout.startswith(f"Unpinned {memory_id}: it expires at ")
    semantic = add("Water boils at 100 C at sea level")
    assert ok("unpin", semantic).stdout.strip() == f"Unpinned {semantic}: its type never expires anyway."


# -- another user --------------------------------------------------------------------------------------
def test_another_user_cannot_change_what_is_not_theirs(store: None, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = add("Alice's bank is Nordbank", "--type", "working")
    before = get(mine)
    monkeypatch.setenv("MCP_MEMORY_USER", "mallory")
    for command in (
        ("update", mine, "Alice's bank is Evilbank"),
        ("forget", mine),
        ("forget", mine, "--hard", "--yes"),
        ("pin", mine),
        ("unpin", mine),
        ("get", mine),
    ):
        line = refused(run(*command))
        assert line == (
            f"mcp-memory: error: No memory with id {mine!r}: `mcp-memory list` and `mcp-memory search` show ids."
        ), command
    assert as_json("list", "--namespace", "*")["memories"] == []
    assert as_json("search", "Alice bank", "--namespace", "*")["results"] == []
    mallorys = add("Alice's bank is Nordbank", "--type", "working")  # her own memory, not a duplicate
    assert mallorys != mine
    monkeypatch.delenv("MCP_MEMORY_USER")
    after = get(mine)
    assert after == {**before, "access_count": after["access_count"], "last_accessed": after["last_accessed"]}
    assert after["status"] == "current" and after["pinned"] is False and after["deleted"] is False
    assert [m["id"] for m in as_json("list", "--namespace", "*")["memories"]] == [mine]


# -- bad input -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("add", "   "), None, "content must be a non-empty string"),
        (("add", "-"), "\n", "content must be a non-empty string"),
        (("add", "x", "--importance", "abc"), None, "importance must be a number from 0 to 1; got 'abc'"),
        (("add", "x", "--importance", "1.5"), None, "importance must be a number from 0 to 1"),
        (("add", "x", "--occurred-at", "yesterday-ish"), None, "occurred_at"),
        (("add", "x", "--namespace", "Not Valid"), None, "namespace 'Not Valid' is not valid"),
        (("add", "x", "--namespace", "*"), None, "only allowed for search and list"),
        (("add", "x", "--tags", "a,,b"), None, "tags must be non-empty strings"),
        (("update", UNKNOWN, "x"), None, "No memory with id"),
        (("update", "not-a-uuid", "x"), None, "is not a memory id"),
        (("forget", UNKNOWN), None, "No memory with id"),
        (("forget", UNKNOWN, "--hard", "--yes"), None, "No memory with id"),
        (("pin", UNKNOWN), None, "No memory with id"),
        (("unpin", UNKNOWN), None, "No memory with id"),
        (("list", "--namespace", "Bad NS"), None, "is not valid"),
        (("search", "x", "--namespace", "Bad NS"), None, "is not valid"),
    ],
)
def test_bad_input_is_one_sentence_and_exit_1(
    store: None, args: tuple[str, ...], stdin: str | None, message: str
) -> None:
    add("Something to have a database")
    assert message in refused(run(*args, input=stdin))
    assert as_json("list", "--namespace", "*")["total"] == 1  # nothing written


@pytest.mark.parametrize(
    "args",
    [
        ("add",),
        ("update", UNKNOWN),
        ("forget",),
        ("pin",),
        ("add", "x", "--type", "eternal"),
        ("add", "x", "--colour", "red"),
        ("export", "--json"),  # the export itself is on stdout
    ],
)
def test_usage_errors_are_exit_2(store: None, args: tuple[str, ...]) -> None:
    result = run(*args)
    assert result.exit_code == EXIT_USAGE == 2 and result.stdout == "" and "Traceback" not in result.output


# -- namespaces on list and search ------------------------------------------------------------------
def test_list_and_search_take_a_namespace(store: None) -> None:
    here = add("Atlas deploys with Helm")
    personal = add("I like Atlas-themed mugs", "--namespace", "user")
    elsewhere = add("Atlas moons are tiny", "--namespace", "astronomy")

    def listed(*options: str) -> set[str]:
        return {m["id"] for m in as_json("list", *options)["memories"]}

    def found(*options: str) -> set[str]:
        return {r["id"] for r in as_json("search", "Atlas", *options)["results"]}

    assert listed() == found() == {here, personal}  # the project and 'user'
    assert listed("--namespace", "astronomy") == found("--namespace", "astronomy") == {elsewhere}
    assert listed("--namespace", "*") == found("--namespace", "*") == {here, personal, elsewhere}
    page = ok("list", "--namespace", "*", "--limit", "1").stdout
    assert "--namespace '*' --cursor " in page  # the next page's command keeps the namespace
    assert "astronomy" in ok("list", "--namespace", "astronomy").stdout


# -- --json everywhere -------------------------------------------------------------------------------
def every_command(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    found: list[tuple[tuple[str, ...], click.Command]] = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += every_command(command, (*prefix, name))
        else:
            found.append(((*prefix, name), command))
    return found


def test_every_command_but_the_servers_and_hook_takes_json() -> None:
    names = {path: command for path, command in every_command(cli)}
    for expected in (("add",), ("update",), ("forget",), ("pin",), ("unpin",), ("token", "list")):
        assert expected in names
    missing = [
        " ".join(path)
        for path, command in names.items()
        # serve and ui run servers; hook speaks Claude Code's hook protocol (its stdout is Claude's JSON)
        if path[0] not in ("serve", "ui", "hook")
        and "--json" not in {opt for p in command.params for opt in p.opts}
    ]
    assert missing == []


def test_json_output_parses_and_has_the_fields(store: None, tmp_path: Any) -> None:
    memory_id = add("JSON everywhere")
    assert set(as_json("namespaces")) == {"namespaces", "current"}
    assert as_json("gc") == {"removed": 0}
    out = tmp_path / "export.jsonl"
    summary = as_json("export", "-o", str(out))
    assert summary == {"exported": 1, "namespace": "default", "output": str(out), "vectors": False}
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[1])["id"] == memory_id
    token = as_json("token", "create", "alice", "--team", "core")
    assert set(token) == {"token", "id", "user", "teams", "location"} and token["teams"] == ["core"]
    assert [t["id"] for t in as_json("token", "list")] == [token["id"]]
    assert as_json("token", "revoke", token["id"]) == {"revoked": [token["id"]]}


# -- tables and progress ---------------------------------------------------------------------------
def test_tables_on_a_terminal_plain_lines_otherwise(store: None, monkeypatch: pytest.MonkeyPatch) -> None:
    memory_id = add("A [bold]memory[/bold] with brackets")
    plain = ok("list").stdout
    assert plain.splitlines()[0].startswith(memory_id) and "NAMESPACE" not in plain
    monkeypatch.setattr(cli_display, "stdout_is_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", "160")  # rich's width when stdout is not really a terminal
    for args, headers in (
        (("list",), ("ID", "CREATED", "NAMESPACE", "CONTENT")),
        (("search", "memory brackets"), ("SCORE", "ID", "NAMESPACE", "CONTENT")),
        (("namespaces",), ("NAMESPACE", "MEMORIES")),
    ):
        drawn = ok(*args).stdout
        assert all(header in drawn for header in headers), drawn
        assert memory_id in drawn or "default" in drawn
    assert "[bold]memory" in ok("list").stdout  # a memory's brackets are text, not rich markup
    assert "No tokens" in ok("token", "list").stdout


def test_progress_is_plain_on_stderr_and_absent_with_json(store: None, tmp_path: Any) -> None:
    for n in range(3):
        add(f"Exported memory {n}")
    out = tmp_path / "all.jsonl"
    exported = ok("export", "-o", str(out))
    assert exported.stdout == ""
    assert exported.stderr.splitlines() == [
        "Exporting: 3/3",
        f"Exported 3 memories (namespace 'default') to {out}.",
    ]
    piped = ok("export")
    assert piped.stderr.splitlines() == ["Exported 3 memories (namespace 'default') to stdout."]
    assert json.loads(piped.stdout.splitlines()[0])["count"] == 3
    assert ok("export", "-o", str(out), "--json").stderr == ""

    imported = ok("import", str(out))
    assert imported.stderr.splitlines() == ["Importing: 3/3"]
    quiet = ok("import", str(out), "--json")
    assert quiet.stderr == "" and json.loads(quiet.stdout)["skipped"] == 3


def test_progress_bar_on_a_terminal_keeps_stdout_clean(
    store: None, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    add("Shown with a bar")
    monkeypatch.setattr(cli_display, "stderr_is_terminal", lambda: True)
    out = tmp_path / "bar.jsonl"
    assert json.loads(ok("export", "-o", str(out), "--json").stdout)["exported"] == 1
    result = ok("import", str(out), "--json")
    assert json.loads(result.stdout)["skipped"] == 1


def test_add_embeds_every_sentence_before_it_exits(store: None, fake_env: dict[str, str]) -> None:
    """A command exits right after its store: nothing is left for a background filler."""
    from pathlib import Path

    from mcp_memory_core.passages import split_passages
    from mcp_memory_sqlite_vec import SqliteVecStore

    text = "Maya moved to Lisbon in March. She works as a data engineer. Her team ships on Tuesdays."
    memory_id = add(text)
    db = SqliteVecStore(Path(fake_env["MCP_MEMORY_DB_PATH"]))
    stored = db.stored_model()
    assert stored is not None
    db.open(*stored)
    try:
        assert db.count_pending_passages() == 0
        assert len(db.vectors([memory_id])[memory_id]) == len(split_passages(text)) == 4
    finally:
        db.close()
