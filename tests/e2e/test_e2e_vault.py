"""The markdown vault end to end: `mcp-memory serve --path VAULT` (real MiniLM, real files) through the
MCP SDK's stdio client, with the vault edited by other programs between calls."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_helpers import error_text, payload, script_command, server_env, stdio_session

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("default_plugins")]

QUERIES = [
    "which port does the staging database use?",
    "how should answers be written for Andrew?",
    "who is in charge of payments?",
    "when do backups run?",
    "what editor theme does the user like?",
]


async def call(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await session.call_tool(tool, args))


async def search(session: Any, query: str, limit: int = 5) -> list[dict[str, Any]]:
    return list((await call(session, "search_memories", query=query, limit=limit))["results"])


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return dict(yaml.safe_load(text.split("---\n")[1]))


def note_of(vault: Path, memory_id: str) -> Path:
    matches = [
        p
        for p in vault.rglob("*.md")
        if ".mcp-memory" not in p.parts and f"id: {memory_id}\n" in p.read_text()
    ]
    assert len(matches) == 1, matches
    return matches[0]


def mcp_memory(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*script_command(), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


async def test_the_vault_through_a_real_client(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    env = server_env(tmp_path / "unused.db", MCP_MEMORY_NAMESPACE="e2e")
    created = mcp_memory("init", "--path", str(vault), env=env)
    assert created.returncode == 0, created.stderr
    assert (vault / ".mcp-memory.yaml").is_file() and (vault / "Concepts").is_dir()
    command = [*script_command(), "serve", "--path", str(vault)]
    async with stdio_session(command, env, tmp_path / "server.err") as session:
        # store -> a note with the expected frontmatter
        stored = await call(
            session,
            "store_memory",
            content="The staging database listens on port 5432",
            tags=["infra", "staging"],
            importance=0.8,
        )
        note = note_of(vault, stored["id"])
        assert note.parent.name == "Concepts" and note.name == "The staging database listens on port 5432.md"
        front = frontmatter(note)
        assert (
            front["id"] == stored["id"]
            and front["type"] == "semantic"
            and front["tags"] == ["infra", "staging"]
        )
        assert front["importance"] == 0.8 and front["namespace"] == "e2e" and front["pinned"] is False
        assert note.read_text(encoding="utf-8").endswith("---\nThe staging database listens on port 5432\n")
        await call(session, "store_memory", content="Andrew wants concise answers without preamble")
        await call(session, "store_memory", content="Nightly backups run at 02:00 UTC", type="procedural")
        backups_id = (await search(session, QUERIES[3]))[0]["id"]
        backups = note_of(vault, backups_id)
        assert backups.parent.name == "Skills"

        # edit the body with another program -> the new wording is found, the old one is not
        subprocess.run(["sed", "-i", "s/port 5432/port 6543/", str(note)], check=True)
        hits = await search(session, QUERIES[0])
        assert hits[0]["id"] == stored["id"] and "6543" in hits[0]["content"]
        assert all("5432" not in hit["content"] for hit in await search(session, "port 5432", limit=10))
        got = await call(session, "get_memory", id=stored["id"])
        assert got["content"] == "The staging database listens on port 6543"

        # a new hand-written note (no frontmatter) -> found, and its file is left as written
        people = vault / "People"
        people.mkdir()
        (people / "Maria.md").write_text(
            "Maria is in charge of the [[Payments]] team. #people\n", encoding="utf-8"
        )
        hits = await search(session, QUERIES[2])
        assert hits and hits[0]["content"] == "Maria is in charge of the [[Payments]] team. #people"
        assert (people / "Maria.md").read_text(encoding="utf-8") == (
            "Maria is in charge of the [[Payments]] team. #people\n"
        )

        # a conversation transcript dropped into Threads/ -> each message found, with its speaker;
        # changing one through MCP is refused in one sentence (the file is the record)
        (vault / "Threads").mkdir(exist_ok=True)
        (vault / "Threads" / "standup.yaml").write_text(
            "messages:\n"
            "  - {speaker: Alice, content: The payments migration slips to December.}\n"
            "  - {speaker: Bob, content: Then I will move the load test to January.}\n",
            encoding="utf-8",
        )
        hits = await search(session, "when is the payments migration?")
        assert hits[0]["content"] == "Alice: The payments migration slips to December."
        refused = await session.call_tool(
            "update_memory", {"id": hits[0]["id"], "content": "Alice: November."}
        )
        assert "transcripts are read-only" in error_text(refused) and "Traceback" not in error_text(refused)

        # a note linked to a file outside the vault and an alias bomb: reported, never read or
        # expanded (the server answers the next search at once)
        outside = tmp_path / "outside.md"
        outside.write_text("The outside secret is swordfish\n", encoding="utf-8")
        (people / "Secret.md").symlink_to(outside)
        bomb = "".join(
            f"{n}: &{n} [{','.join([f'*{p}'] * 9) if p else ','.join(['lol'] * 9)}]\n"
            for n, p in zip("abcdefgh", ["", *"abcdefg"], strict=True)
        )
        (people / "Bomb.md").write_text(f"---\n{bomb}---\nlol\n", encoding="utf-8")
        assert all("swordfish" not in hit["content"] for hit in await search(session, "swordfish secret"))
        assert all(hit["content"] != "lol" for hit in await search(session, "lol", limit=10))
        (people / "Secret.md").unlink()
        (people / "Bomb.md").unlink()

        # delete a file -> gone from search and from get
        subprocess.run(["rm", str(backups)], check=True)
        assert all("backups" not in hit["content"].lower() for hit in await search(session, QUERIES[3]))
        gone = await session.call_tool("get_memory", {"id": backups_id})
        assert f"No memory with id {backups_id!r}" in error_text(gone)
        # update -> the note keeps its place, the old version moves to Archive/
        andrew = (await search(session, QUERIES[1]))[0]
        andrew_note = note_of(vault, andrew["id"])
        updated = await call(
            session, "update_memory", id=andrew["id"], content="Andrew wants concise answers with code first"
        )
        assert note_of(vault, updated["id"]) == andrew_note
        assert frontmatter(andrew_note)["supersedes"] == andrew["id"]
        archived = note_of(vault, andrew["id"])
        assert archived.parent.name == "Archive" and frontmatter(archived)["superseded_by"] == updated["id"]
        # a memory deleted through MCP: its note moves to the archive, marked deleted
        theme = await call(session, "store_memory", content="The user likes the Solarized dark theme")
        await call(session, "delete_memory", id=theme["id"])
        assert "deleted" in frontmatter(note_of(vault, theme["id"]))
        before = {q: [hit["id"] for hit in await search(session, q)] for q in QUERIES}

    # the vault holds notes, the settings file, the transcript and the one hidden folder, nothing else
    others = [
        p.relative_to(vault).as_posix()
        for p in vault.rglob("*")
        if p.is_file() and p.suffix != ".md" and ".mcp-memory" not in p.relative_to(vault).parts
    ]
    assert sorted(others) == [".mcp-memory.yaml", "Threads/standup.yaml"]

    # reindex on a copy of the vault (without its index) reproduces the same search results
    copy = tmp_path / "copy"
    shutil.copytree(vault, copy, ignore=shutil.ignore_patterns(".mcp-memory"))
    rebuilt = mcp_memory("reindex", "--path", str(copy), "--json", env=env)
    assert rebuilt.returncode == 0, rebuilt.stderr
    summary = json.loads(rebuilt.stdout)
    # the staging note, Andrew's two versions, the deleted theme (archived), Maria's note and the
    # transcript's two messages
    assert summary["indexed"] == 7 and summary["skipped"] == 0
    command = [*script_command(), "serve", "--path", str(copy)]
    async with stdio_session(command, env, tmp_path / "copy.err") as session:
        after = {q: [hit["id"] for hit in await search(session, q)] for q in QUERIES}
    assert after == before
