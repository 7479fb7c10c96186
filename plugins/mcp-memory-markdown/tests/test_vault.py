"""The vault through the engine: the files it writes, and edits made to them outside the server."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from mcp_memory_core import MemoryEngine
from mcp_memory_core.errors import EditConflictError, MemoryNotFoundError
from mcp_memory_core.models import Memory
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


def test_malformed_notes_are_reported_and_never_rewritten(vault) -> None:  # type: ignore[no-untyped-def]
    engine, store, _ = vault
    engine.store_memory("A healthy note about tea")
    bad = {
        "Concepts/bad yaml.md": b"---\nid: [unclosed\n---\nbody\n",
        "Concepts/open.md": b"---\nid: x\nno end\n",
        "Concepts/binary.md": b"\x00\x01\x02junk",
        "Concepts/latin1.md": "caf\xe9".encode("latin-1"),
        "Concepts/bad type.md": b"---\nid: abc\ntype: feelings\n---\nbody\n",
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
    (store.vault / "Concepts/bad yaml.md").write_bytes(b"---\nid: fixed-1\n---\nNow it reads fine\n")
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


def test_diagnose_reads_the_index_and_names_the_vault(tmp_path: Path) -> None:
    engine, store, embedder = make_engine(tmp_path / "vault", watch=False)
    engine.store_memory("The vault keeps this as a note")
    engine.close()
    found = MarkdownStore(tmp_path / "vault", namespace="proj", owner="local", watch=False).diagnose()
    assert found.exists and found.problems == ()
    assert found.path == str(store.index_path) and found.details["vault"] == str(tmp_path / "vault")
    assert found.model_id == embedder.model_id
