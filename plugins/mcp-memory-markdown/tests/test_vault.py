"""The vault through the engine: the files it writes, and edits made to them outside the server."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from mcp_memory_core import MemoryEngine
from mcp_memory_core.errors import EditConflictError, MemoryNotFoundError, StorageError
from mcp_memory_core.lifecycle import TTLPolicy
from mcp_memory_core.models import Memory, MemoryType
from mcp_memory_core.scope import Scope
from mcp_memory_markdown import MarkdownStore
from mcp_memory_markdown.notes import note_id, parse_note, render_note, split_frontmatter
from mcp_memory_testing import HashEmbedder, SimilarityRanker


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.texts: list[str] = []

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return super().embed_documents(texts)


def make_engine(vault: Path, *, watch: bool = True) -> tuple[MemoryEngine, MarkdownStore, CountingEmbedder]:
    store = MarkdownStore(vault, namespace="proj", owner="local", watch=watch)
    embedder = CountingEmbedder()
    engine = MemoryEngine(store, embedder, SimilarityRanker(), namespace="proj", track_access=False)
    engine.open()
    return engine, store, embedder


@pytest.fixture(params=[True, False], ids=["inotify", "scan"])
def vault(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[MemoryEngine, MarkdownStore, CountingEmbedder]]:
    engine, store, embedder = make_engine(tmp_path / "vault", watch=request.param)
    yield engine, store, embedder
    engine.close()


def front(path: Path) -> dict:  # type: ignore[type-arg]
    data, _ = split_frontmatter(path.read_text(encoding="utf-8"))
    assert data is not None
    return data


def found(engine: MemoryEngine, query: str) -> list[str]:
    return [hit.memory.content for hit in engine.search(query, limit=10).hits]


def notes(vault: Path) -> list[str]:
    return sorted(
        p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".mcp-memory" not in p.parts
    )


def test_a_stored_memory_is_a_note_with_frontmatter(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    stored = engine.store_memory("Andrew prefers dark mode in every editor", tags=["user", "prefs"]).memory
    path = store.path_of(stored.id)
    assert path is not None and path.relative_to(store.vault).as_posix() == (
        "Concepts/Andrew prefers dark mode in every editor.md"
    )
    data = front(path)
    assert data["id"] == stored.id and data["type"] == "semantic" and data["tags"] == ["user", "prefs"]
    assert data["namespace"] == "proj" and data["owner"] == "local" and data["privacy_scope"] == "private"
    assert path.read_text(encoding="utf-8").endswith("---\nAndrew prefers dark mode in every editor\n")
    procedure = engine.store_memory("To release: tag, build, upload", type="procedural").memory
    assert store.path_of(procedure.id).parent.name == "Skills"  # type: ignore[union-attr]
    # nothing but notes and the one hidden cache folder
    assert sorted(p.name for p in store.vault.iterdir()) == [".mcp-memory", "Concepts", "Skills"]


def test_every_field_survives_the_file(tmp_path: Path) -> None:
    full = Memory(
        content="Ünïcödé ✓ — line one\nline two\n",
        metadata={
            "aliases": ["Andy"],
            "nested": {"a": [1, None, True]},
            "id": "clashes",
            "when": "2024-05-01",
        },
        namespace="proj",
        type="episodic",
        tags=("a b", "ü"),
        importance=0.25,
        pinned=True,
        owner="alice@example.org",
        privacy_scope="team",
        thread="chat/42",
        superseded_by="11111111-2222-3333-4444-555555555555",
    )
    text = render_note(full)
    back = parse_note(text.encode(), "Archive/x.md", mtime=full.created_at, namespace="other", owner="bob")
    assert back.memory == full and not back.hand_written


def test_update_keeps_the_note_in_place_and_archives_the_old_version(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    old = engine.store_memory("The staging database runs on port 5432").memory
    place = store.path_of(old.id)
    new = engine.update_memory(old.id, "The staging database runs on port 6543").memory
    assert store.path_of(new.id) == place
    assert front(place)["supersedes"] == old.id  # type: ignore[arg-type]
    archived = store.path_of(old.id)
    assert archived is not None and archived.parent.name == "Archive" and archived.exists()
    assert front(archived)["superseded_by"] == new.id
    assert "5432" in archived.read_text(encoding="utf-8")
    deleted = engine.delete_memory(new.id)
    assert deleted is not None
    gone = store.path_of(new.id)
    assert gone is not None and gone.parent.name == "Archive" and "deleted" in front(gone)
    assert not place.exists()  # type: ignore[union-attr]


def test_pin_rewrites_the_frontmatter_and_keeps_other_properties(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    memory = engine.store_memory("Use ruff for linting").memory
    path = store.path_of(memory.id)
    assert path is not None
    text = path.read_text(encoding="utf-8").replace("pinned: false\n", "pinned: false\ncssclasses:\n- wide\n")
    path.write_text(text, encoding="utf-8")
    engine.pin_memory(memory.id)  # the engine reads the edit first, so nothing is clobbered
    data = front(path)
    assert data["pinned"] is True and data["cssclasses"] == ["wide"]


def test_an_edited_body_is_searched_with_its_new_words(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, embedder = vault
    memory = engine.store_memory("The deploy script lives in tools/ship.sh").memory
    engine.store_memory("Lunch is at noon on Fridays")
    path = store.path_of(memory.id)
    assert path is not None
    path.write_text(path.read_text(encoding="utf-8").replace("tools/ship.sh", "scripts/release.py"))
    embedder.texts.clear()
    assert "The deploy script lives in scripts/release.py" in found(engine, "scripts release py")
    assert embedder.texts[0] == "The deploy script lives in scripts/release.py"  # only the edited note
    assert engine.get_memory(memory.id).memory.content.endswith("scripts/release.py")
    assert all("ship.sh" not in text for text in found(engine, "tools ship sh"))


def test_a_frontmatter_edit_keeps_the_vectors(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, embedder = vault
    memory = engine.store_memory("Coffee beans come from the shop on Main Street").memory
    path = store.path_of(memory.id)
    assert path is not None
    path.write_text(path.read_text(encoding="utf-8").replace("importance: 0.5", "importance: 0.9"))
    embedder.texts.clear()
    assert engine.get_memory(memory.id).memory.importance == 0.9
    assert [t for t in embedder.texts if "Coffee" in t] == []


def test_a_hand_written_note_is_a_memory_without_touching_its_file(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    folder = store.vault / "People"
    folder.mkdir()
    note = folder / "Maria.md"
    note.write_text("Maria leads the [[Payments]] team. #people\n", encoding="utf-8")
    before = note.read_bytes()
    hits = engine.search("Who leads the payments team?", limit=5).hits
    assert hits and hits[0].memory.content == "Maria leads the [[Payments]] team. #people"
    assert hits[0].memory.id == note_id("People/Maria.md")
    assert hits[0].memory.namespace == "proj" and hits[0].memory.owner == "local"
    assert note.read_bytes() == before  # never rewritten
    titled = folder / "Andrew Smith.md"
    titled.write_text("---\naliases: [Andy]\n---\nPrefers short answers.\n", encoding="utf-8")
    assert "Prefers short answers." in found(engine, "Andy")  # the alias is searchable


def test_a_deleted_file_is_gone_and_a_renamed_one_keeps_its_id(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, embedder = vault
    keep = engine.store_memory("Backups run nightly at two").memory
    drop = engine.store_memory("The office plant needs water on Mondays").memory
    store.path_of(drop.id).unlink()  # type: ignore[union-attr]
    assert "The office plant needs water on Mondays" not in found(engine, "office plant water")
    with pytest.raises(MemoryNotFoundError):
        engine.get_memory(drop.id)
    old = store.path_of(keep.id)
    assert old is not None
    target = store.vault / "Projects" / "backups.md"
    target.parent.mkdir(exist_ok=True)
    embedder.texts.clear()
    os.rename(old, target)
    assert engine.get_memory(keep.id).memory.content == "Backups run nightly at two"
    assert store.path_of(keep.id) == target
    assert embedder.texts == []  # a move is not a new text


def test_a_renamed_hand_written_note_keeps_its_id_through_the_sidecar(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    folder = store.vault / "People"
    folder.mkdir()
    (folder / "Maria.md").write_text("Maria leads the payments team.\n", encoding="utf-8")
    first = engine.search("who leads payments", limit=1).hits[0].memory
    assert first.id == note_id("People/Maria.md")
    # renamed and moved by hand: same id, the file untouched, the sidecar says where it went
    (store.vault / "Team").mkdir()
    os.rename(folder / "Maria.md", store.vault / "Team" / "Maria Lopez.md")
    assert engine.get_memory(first.id).memory.content == "Maria leads the payments team."
    assert store.path_of(first.id) == store.vault / "Team" / "Maria Lopez.md"
    sidecar = store.vault / ".mcp-memory" / "ids.json"
    assert json.loads(sidecar.read_text()) == {"Team/Maria Lopez.md": first.id}
    assert (store.vault / "Team" / "Maria Lopez.md").read_text() == "Maria leads the payments team.\n"
    # the index rebuilt from the files (reindex) keeps it: the sidecar is not part of the index
    engine.close()
    store.reset_index()
    engine.open()
    engine.refresh()
    assert engine.get_memory(first.id).memory.content == "Maria leads the payments team."
    # a deleted note leaves nothing behind in the sidecar
    (store.vault / "Team" / "Maria Lopez.md").unlink()
    with pytest.raises(MemoryNotFoundError):
        engine.get_memory(first.id)
    assert json.loads(sidecar.read_text()) == {}
    # git keeps the sidecar and ignores the index
    assert (store.vault / ".mcp-memory" / ".gitignore").read_text().splitlines()[1:] == [
        "*",
        "!.gitignore",
        "!ids.json",
    ]


def test_a_hand_written_note_edited_and_renamed_at_once_is_a_new_memory(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    (store.vault / "Maria.md").write_text("Maria leads payments.\n", encoding="utf-8")
    old = engine.search("who leads payments", limit=1).hits[0].memory.id
    (store.vault / "Maria.md").unlink()
    (store.vault / "Maria L.md").write_text("Maria leads payments and billing.\n", encoding="utf-8")
    hits = engine.search("who leads payments", limit=5).hits
    assert [h.memory.id for h in hits] == [note_id("Maria L.md")] and old != note_id("Maria L.md")


TRANSCRIPT = """\
thread: planning-call
tags: [planning]
messages:
  - speaker: Alice
    at: 2026-11-20T09:00:00Z
    content: Shall we move the release to Friday?
  - speaker: Bob
    at: 2026-11-20T09:01:00Z
    content: Friday works, QA signs off on Thursday.
"""


def test_a_transcript_is_a_thread_of_memories(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, embedder = vault
    threads = store.vault / "Threads"
    threads.mkdir()
    transcript = threads / "2026-11-20 planning.yaml"
    transcript.write_text(TRANSCRIPT, encoding="utf-8")
    hits = engine.search("when does QA sign off", limit=5).hits
    bob = hits[0].memory
    assert bob.content == "Bob: Friday works, QA signs off on Thursday."
    assert bob.thread == "planning-call" and bob.tags == ("planning",) and bob.metadata == {"speaker": "Bob"}
    assert bob.pinned  # a record never expires
    assert bob.occurred_at.isoformat() == "2026-11-20T09:01:00+00:00" and bob.namespace == "proj"
    assert bob.id == note_id("Threads/2026-11-20 planning.yaml#2")
    assert store.path_of(bob.id) == transcript
    # a message appended: only it is embedded; the others keep their vectors
    embedder.texts.clear()
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write("  - speaker: Alice\n    content: Then Friday it is, I will tell the customers.\n")
    assert "Alice: Then Friday it is, I will tell the customers." in found(engine, "tell the customers")
    assert embedder.texts == ["Alice: Then Friday it is, I will tell the customers."]
    # read-only through mcp-memory: a change is refused with one sentence, nothing written
    before = transcript.read_bytes()
    for change in (
        lambda: engine.update_memory(bob.id, "Bob: Saturday works"),
        lambda: engine.pin_memory(bob.id, True),
        lambda: engine.delete_memory(bob.id),
    ):
        with pytest.raises(
            StorageError,
            match=re.escape("transcript Threads/2026-11-20 planning.yaml: transcripts are read-only"),
        ):
            change()
    assert transcript.read_bytes() == before and notes(store.vault) == []
    assert engine.get_memory(bob.id).memory.content == bob.content
    # a message removed from the file is gone; the file removed takes its messages with it
    transcript.write_text(TRANSCRIPT.split("  - speaker: Bob")[0], encoding="utf-8")
    assert engine.count() == 1
    with pytest.raises(MemoryNotFoundError):
        engine.get_memory(bob.id)
    transcript.unlink()
    assert engine.count() == 0


def test_a_bad_transcript_is_reported_and_skipped(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    threads = store.vault / "Threads"
    threads.mkdir()
    (threads / "a.yaml").write_text("messages: [{speaker: Al}]\n", encoding="utf-8")
    (threads / "b.yml").write_text("title: x\nmesages: []\n", encoding="utf-8")
    (threads / "c.yaml").write_text("messages: [unclosed\n", encoding="utf-8")
    (store.vault / "Concepts").mkdir(exist_ok=True)
    (store.vault / "Concepts" / "settings.yaml").write_text("not: a transcript\n", encoding="utf-8")
    (threads / "d.yaml").write_text("- just one line of talk\n", encoding="utf-8")
    engine.refresh()
    assert [(p.path, p.reason) for p in store.problems()] == [
        ("Threads/a.yaml", "message 1 has no content"),
        (
            "Threads/b.yml",
            "a thread has no 'mesages' key (it takes: messages, namespace, owner, privacy_scope, tags, thread, title)",
        ),
        ("Threads/c.yaml", store.problems()[2].reason),
    ]
    assert store.problems()[2].reason.startswith("it is not valid YAML")
    assert [m.content for m in engine.list_memories(limit=10).memories] == ["just one line of talk"]


def test_malformed_notes_are_reported_and_never_rewritten(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    engine.store_memory("A healthy note about tea")
    bad = {
        "Concepts/bad yaml.md": b"---\nid: [unclosed\n---\nbody\n",
        "Concepts/open.md": b"---\nid: x\nno end\n",
        "Concepts/binary.md": b"\x00\x01\x02junk",
        "Concepts/latin1.md": "caf\xe9".encode("latin-1"),
        "Concepts/bad type.md": b"---\nid: 0b6f4a38-9a0e-4f43-8d3c-2f6f0e4d5a11\ntype: feelings\n---\nbody\n",
        "Concepts/empty.md": b"",
    }
    for name, data in bad.items():
        (store.vault / name).write_bytes(data)
    assert engine.count() == 1
    reported = {p.path: p.reason for p in store.problems()}
    assert set(reported) == set(bad)
    assert "not valid YAML" in reported["Concepts/bad yaml.md"]
    assert "never closes" in reported["Concepts/open.md"]
    assert "not a text file" in reported["Concepts/binary.md"]
    assert "not UTF-8" in reported["Concepts/latin1.md"]
    assert "'type'" in reported["Concepts/bad type.md"]
    for name, data in bad.items():
        assert (store.vault / name).read_bytes() == data
    (store.vault / "Concepts/bad yaml.md").write_bytes(
        b"---\nid: 7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f\n---\nNow it reads fine\n"
    )
    assert engine.count() == 2 and "Concepts/bad yaml.md" not in {p.path for p in store.problems()}


def test_a_copied_note_is_reported_not_merged(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    memory = engine.store_memory("The API key rotates every 90 days").memory
    source = store.path_of(memory.id)
    assert source is not None
    shutil.copy(source, source.with_name("copy.md"))
    assert engine.count() == 1 and store.path_of(memory.id) == source
    assert any(p.path == "Concepts/copy.md" and "has the id of" in p.reason for p in store.problems())


def test_a_write_never_clobbers_a_file_edited_since_it_was_read(tmp_path: Path) -> None:
    engine, store, _ = make_engine(tmp_path / "vault")
    try:
        memory = engine.store_memory("Release freeze starts on the 20th").memory
        path = store.path_of(memory.id)
        assert path is not None
        edited = path.read_text(encoding="utf-8").replace("20th", "21st")
        # the edit lands between the engine's catch-up and its write (the store is asked directly)
        path.write_text(edited, encoding="utf-8")
        with pytest.raises(EditConflictError, match="edited outside mcp-memory"):
            store.update_fields(memory.id, {"pinned": True})
        assert path.read_text(encoding="utf-8") == edited  # the user's edit stands
        assert engine.pin_memory(memory.id).pinned  # the next call reads it first, then writes
        assert "21st" in path.read_text(encoding="utf-8") and front(path)["pinned"] is True
    finally:
        engine.close()


def test_files_written_before_a_crash_are_read_back(tmp_path: Path) -> None:
    """A crash after the notes were written but before the index committed: the files win."""
    engine, _, _ = make_engine(tmp_path / "vault")
    memory = engine.store_memory("Invoices are due on the first").memory
    engine.close()
    # what a crash between the file writes and the commit leaves: an update's two notes, no index rows
    newer = Memory(content="Invoices are due on the fifth", namespace="proj")
    place = tmp_path / "vault" / "Concepts" / "Invoices are due on the first.md"
    old_text = place.read_text(encoding="utf-8")
    archived = memory.model_copy(update={"superseded_by": newer.id})
    (tmp_path / "vault" / "Archive").mkdir()
    (tmp_path / "vault" / "Archive" / "old.md").write_text(render_note(archived), encoding="utf-8")
    place.write_text(render_note(newer, supersedes=memory.id), encoding="utf-8")
    assert old_text != place.read_text(encoding="utf-8")
    engine, _, _ = make_engine(tmp_path / "vault")
    try:
        assert [hit.memory.id for hit in engine.search("when are invoices due", limit=3).hits] == [newer.id]
        assert engine.get_memory(memory.id).memory.superseded_by == newer.id
    finally:
        engine.close()


def test_a_rebuilt_index_answers_like_the_original(tmp_path: Path) -> None:
    engine, _, _ = make_engine(tmp_path / "vault")
    texts = [
        f"Fact {i}: the {word} is {colour}"
        for i, (word, colour) in enumerate(
            [("sky", "blue"), ("grass", "green"), ("sun", "yellow"), ("night", "dark"), ("snow", "white")]
        )
    ]
    for text in texts:
        engine.store_memory(text)
    first = engine.list_memories(limit=10).memories[0]
    engine.update_memory(first.id, "Fact 9: the sea is grey")
    queries = ["what colour is the sky", "grass", "sea", "snow white"]
    before = {q: [h.memory.id for h in engine.search(q, limit=5).hits] for q in queries}
    engine.close()
    shutil.copytree(tmp_path / "vault", tmp_path / "copy", ignore=shutil.ignore_patterns(".mcp-memory"))
    copy, _, _ = make_engine(tmp_path / "copy")
    try:
        report = copy.refresh()
        assert report.indexed == 6 and not report.problems  # five facts and one new version
        after = {q: [h.memory.id for h in copy.search(q, limit=5).hits] for q in queries}
        assert after == before
    finally:
        copy.close()


def test_settings_file_renames_folders_and_excludes(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / ".mcp-memory.yaml").write_text("concepts_dir: People\nexclude: [Templates]\n", encoding="utf-8")
    (vault / "Templates").mkdir()
    (vault / "Templates" / "daily.md").write_text("{{date}} template text\n", encoding="utf-8")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "hidden.md").write_text("never indexed\n", encoding="utf-8")
    engine, store, _ = make_engine(vault)
    try:
        memory = engine.store_memory("Ana owns the billing service").memory
        assert store.path_of(memory.id).parent.name == "People"  # type: ignore[union-attr]
        assert engine.count() == 1
    finally:
        engine.close()


def test_yaml_on_disk_is_plain(tmp_path: Path) -> None:
    engine, store, _ = make_engine(tmp_path / "vault")
    try:
        memory = engine.store_memory("Dates are ISO", metadata={"due": "2024-05-01"}).memory
        path = store.path_of(memory.id)
        assert path is not None
        block = path.read_text(encoding="utf-8").split("---\n")[1]
        data = yaml.safe_load(block)
        assert data["due"] == "2024-05-01"  # a string stays a string
        assert "T" in block.split("created: ")[1].split("\n")[0]  # ISO 8601 with a T
    finally:
        engine.close()


def test_another_user_cannot_read_or_change_a_note_through_the_vault(tmp_path: Path) -> None:
    """The engine's Scope holds on the vault as on any store: Bob, on the same vault (an HTTP
    server with tokens), neither reads nor changes Alice's private notes, hand-written notes she
    owns, or her transcripts; her note's file is untouched by his attempts."""
    engine, store, _ = make_engine(tmp_path / "vault")
    alice = Scope.for_user("alice", project="proj")
    bob = Scope.for_user("bob", project="proj")
    try:
        secret = engine.store_memory("Alice's salary is 120k", scope=alice).memory
        path = store.path_of(secret.id)
        assert path is not None and front(path)["owner"] == "alice"
        (store.vault / "Concepts" / "Alice diary.md").write_text(
            "---\nowner: alice\n---\nAlice is interviewing at another company.\n", encoding="utf-8"
        )
        (store.vault / "Threads").mkdir()
        (store.vault / "Threads" / "1on1.yaml").write_text(
            "owner: alice\nmessages:\n  - {speaker: Alice, content: My salary review is next week.}\n",
            encoding="utf-8",
        )
        assert len(engine.search("salary interviewing", limit=10, scope=alice).hits) == 3
        assert engine.search("salary interviewing", limit=10, scope=bob).hits == []
        assert engine.list_memories(limit=10, scope=bob).memories == []
        before = path.read_bytes()
        for memory_id in [secret.id, note_id("Concepts/Alice diary.md"), note_id("Threads/1on1.yaml#1")]:
            with pytest.raises(MemoryNotFoundError):
                engine.get_memory(memory_id, scope=bob)
            with pytest.raises(MemoryNotFoundError):
                engine.update_memory(memory_id, "Bob was here", scope=bob)
            with pytest.raises(MemoryNotFoundError):
                engine.delete_memory(memory_id, hard=True, scope=bob)
        assert path.read_bytes() == before and len(notes(store.vault)) == 2
    finally:
        engine.close()


def clocked_engine(
    vault: Path, now: list[datetime], ttl: TTLPolicy | None = None
) -> tuple[MemoryEngine, MarkdownStore]:
    """An open engine on ``vault`` whose clock reads ``now[0]`` (tests move it), with ``ttl``."""
    store = MarkdownStore(vault, namespace="proj", owner="local")
    engine = MemoryEngine(
        store,
        HashEmbedder(64),
        SimilarityRanker(),
        namespace="proj",
        track_access=False,
        clock=lambda: now[0],
        ttl=ttl,
    )
    engine.open()
    return engine, store


def test_an_expired_memory_is_a_tombstone_in_the_archive_and_a_pinned_one_stays(tmp_path: Path) -> None:
    """TTL on the vault: a working memory past its 48 h moves to Archive/ marked ``deleted`` (the
    moment it expired); a pinned one never expires; a hand-written note is semantic: never."""
    now = [datetime(2026, 11, 1, tzinfo=UTC)]
    engine, store = clocked_engine(tmp_path / "vault", now)
    try:
        task = engine.store_memory("Current task: fix the login bug", type="working").memory
        kept = engine.store_memory("Current task: write the release notes", type="working").memory
        engine.pin_memory(kept.id)
        (store.vault / "Reading list.md").write_text("Read the SRE book.\n", encoding="utf-8")
        assert store.path_of(task.id).parent.name == "Projects"  # type: ignore[union-attr]
        now[0] += timedelta(hours=49)
        assert engine.sweep() == 1
        archived = store.path_of(task.id)
        assert archived is not None and archived.parent.name == "Archive"
        assert front(archived)["deleted"] == datetime(2026, 11, 3, tzinfo=UTC) + (
            task.created_at - datetime(2026, 11, 1, tzinfo=UTC)
        )
        assert engine.get_memory(task.id).status == "expired"
        assert store.path_of(kept.id).parent.name == "Projects"  # type: ignore[union-attr]
        assert (store.vault / "Reading list.md").read_text(encoding="utf-8") == "Read the SRE book.\n"
        assert sorted(m.content for m in engine.list_memories(limit=10).memories) == [
            "Current task: write the release notes",
            "Read the SRE book.",
        ]
    finally:
        engine.close()


def test_a_changed_settings_file_applies_without_a_restart(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, embedder = vault
    (store.vault / "Daily").mkdir()
    (store.vault / "Daily" / "2026-11-24.md").write_text(
        "Standup notes: the cat is sick.\n", encoding="utf-8"
    )
    (store.vault / "Maria.md").write_text("Maria leads payments.\n", encoding="utf-8")
    engine.store_memory("Tea is better than coffee")
    assert engine.count() == 3
    embedder.texts.clear()
    (store.vault / ".mcp-memory.yaml").write_text("namespace: other\nexclude: [Daily]\n", encoding="utf-8")
    assert engine.count() == 1  # the Daily note is excluded; Maria's note moved to namespace 'other'
    assert engine.count(namespace="other") == 1
    assert embedder.texts == []  # nothing embedded again: the texts did not change
    (store.vault / ".mcp-memory.yaml").write_text("exclude: [\n", encoding="utf-8")  # broken: kept as before
    assert engine.count() == 1 and engine.count(namespace="other") == 1


def test_diagnose_reads_the_index_and_names_the_vault(tmp_path: Path) -> None:
    engine, store, embedder = make_engine(tmp_path / "vault", watch=False)
    engine.store_memory("The vault keeps this as a note")
    engine.close()
    found = MarkdownStore(tmp_path / "vault", namespace="proj", owner="local", watch=False).diagnose()
    assert found.exists and found.problems == ()
    assert found.path == str(store.index_path) and found.details["vault"] == str(tmp_path / "vault")
    assert found.model_id == embedder.model_id


def test_a_semantic_lifetime_never_reaches_a_transcript(tmp_path: Path) -> None:
    """With a lifetime for semantic memories, the sweep tombstones an old note and leaves the
    transcript (a record, pinned) alone: list and search keep working."""
    now = [datetime(2026, 11, 1, tzinfo=UTC)]
    engine, store = clocked_engine(
        tmp_path / "vault", now, ttl=TTLPolicy({MemoryType.SEMANTIC: timedelta(days=30)})
    )
    try:
        old = engine.store_memory("An old fact about the office coffee machine").memory
        (store.vault / "Threads").mkdir()
        (store.vault / "Threads" / "call.yaml").write_text(
            "messages:\n  - {speaker: Ann, at: 2026-01-01T00:00:00Z, content: The coffee machine is fixed.}\n",
            encoding="utf-8",
        )
        now[0] += timedelta(days=31)
        assert engine.sweep() == 1 and engine.get_memory(old.id).status == "expired"
        assert [m.content for m in engine.list_memories(limit=10).memories] == [
            "Ann: The coffee machine is fixed."
        ]
    finally:
        engine.close()
