"""``mcp-memory tidy``: proposals with reasons (lines, or --json), --apply with --yes (or a question
on a terminal), refused without --yes and without a terminal, and never another user's memories —
on the real sqlite-vec store with the hash embedder (bag of words: the same words in another order
are near-duplicates)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from server_helpers import cli_ok as ok
from server_helpers import run_cli as run

import mcp_memory_server.cli.tidy as cli_tidy
from mcp_memory_server.cli.common import EXIT_USAGE


@pytest.fixture
def store(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mcp_memory_sqlite_vec")
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")
    monkeypatch.delenv("MCP_MEMORY_USER", raising=False)


def as_json(*args: str) -> Any:
    return json.loads(ok(*args, "--json").stdout)


def add(content: str, *options: str) -> str:
    receipt = as_json("add", content, *options)
    assert receipt["status"] == "stored", receipt
    return str(receipt["id"])


def seed() -> dict[str, str]:
    return {
        "first": add("Maya lives in Berlin with her cat"),
        "second": add("With her cat Maya lives in Berlin"),
        "junk": add("thanks!"),
        "fact": add("Maya is vegetarian"),
    }


def every_memory() -> dict[str, Any]:
    listed = as_json("list", "--namespace", "*", "--limit", "100")["memories"]
    return {m["id"]: as_json("get", m["id"]) for m in listed}


def test_tidy_json_lists_the_proposals_with_reasons_and_changes_nothing(store: None) -> None:
    ids = seed()
    before = every_memory()
    report = as_json("tidy")
    kinds = {p["kind"]: p for p in report["proposals"]}
    assert set(kinds) == {"duplicates", "junk"}
    duplicates = kinds["duplicates"]
    assert duplicates["ids"] == [ids["first"], ids["second"]] and duplicates["keep"] == ids["second"]
    assert duplicates["links"][0]["similarity"] >= report["threshold"] == 0.87
    assert duplicates["contents"] == [
        "Maya lives in Berlin with her cat",
        "With her cat Maya lives in Berlin",
    ]
    assert kinds["junk"]["ids"] == [ids["junk"]] and kinds["junk"]["reason"]
    assert report["counts"] == {"expired": 0, "junk": 1, "superseded": 0, "duplicates": 1}
    assert every_memory() == before


def test_tidy_prints_each_proposal_and_its_reason(store: None) -> None:
    ids = seed()
    text = ok("tidy").stdout
    assert text.startswith("2 proposals among 4 memories (the current project and 'user'): 1 junk, 1 near")
    assert f"keep {ids['second']}" in text and f"fold {ids['first']}" in text and "why: " in text
    assert "junk: tombstone" in text and "'thanks!'" in text


def test_apply_yes_folds_duplicates_tombstones_junk_and_touches_nothing_else(store: None) -> None:
    ids = seed()
    before = every_memory()
    result = as_json("tidy", "--apply", "--yes")
    applied = result["applied"]
    assert applied["folded"] == {ids["second"]: [ids["first"]]} and applied["junk"] == [ids["junk"]]
    assert applied["counts"] == {"folded": 1, "junk": 1, "expired": 0, "superseded": 0, "skipped": 0}
    folded = as_json("get", ids["first"])
    assert folded["status"] == "superseded" and folded["head_id"] == ids["second"]
    assert folded["superseded_by"] == ids["second"] and folded["content"] == before[ids["first"]]["content"]
    assert as_json("get", ids["junk"])["status"] == "deleted"
    assert as_json("get", ids["fact"]) == before[ids["fact"]]
    assert as_json("get", ids["second"]) == before[ids["second"]]
    assert as_json("tidy")["proposals"] == []


def test_apply_says_what_it_did(store: None) -> None:
    ids = seed()
    text = ok("tidy", "--apply", "--yes").stdout
    assert text.startswith("2 proposals among 4 memories")  # what is applied is shown first
    assert "Tidied: 1 near-duplicates and 0 superseded leftovers folded into version chains; 1 junk" in text
    assert f"near-duplicates folded into {ids['second']}: {ids['first']}" in text
    assert f"junk tombstoned: {ids['junk']}" in text


def test_apply_without_yes_is_refused_without_a_terminal(store: None) -> None:
    ids = seed()
    result = run("tidy", "--apply")
    assert result.exit_code == EXIT_USAGE and result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line == (
        "mcp-memory: error: tidy --apply cannot ask for confirmation without a terminal: add --yes to apply."
    )
    assert as_json("get", ids["junk"])["status"] == "current"


def test_apply_asks_on_a_terminal(store: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_tidy, "_stdin_is_terminal", lambda: True)
    ids = seed()
    declined = run("tidy", "--apply", input="n\n")
    assert declined.exit_code == 1 and "Apply these 2 proposals?" in declined.stderr
    assert as_json("get", ids["junk"])["status"] == "current"
    accepted = run("tidy", "--apply", input="y\n")
    assert accepted.exit_code == 0 and accepted.stdout.startswith("Tidied: 1 near-duplicates")
    assert as_json("get", ids["junk"])["status"] == "deleted"


def test_another_user_never_sees_nor_tidies_what_is_not_theirs(
    store: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = seed()
    before = every_memory()
    monkeypatch.setenv("MCP_MEMORY_USER", "mallory")
    mallorys = add("Maya lives in Berlin with her cat")  # her own, not a duplicate of anyone's
    report = as_json("tidy", "--namespace", "*")
    assert report["proposals"] == [] and report["examined"] == 1
    assert as_json("tidy", "--apply", "--yes", "--namespace", "*")["applied"] is None
    monkeypatch.delenv("MCP_MEMORY_USER")
    assert every_memory() == before
    assert mallorys not in {i for p in as_json("tidy", "--namespace", "*")["proposals"] for i in p["ids"]}
    assert set(ids) and {i for p in as_json("tidy")["proposals"] for i in p["ids"]} == {
        ids["first"],
        ids["second"],
        ids["junk"],
    }


def test_a_bad_namespace_is_one_sentence(store: None) -> None:
    add("Maya is vegetarian")
    result = run("tidy", "--namespace", "Bad NS")
    assert result.exit_code == 1 and "is not valid" in result.stderr and "Traceback" not in result.output
