"""What a vault's files cannot do to the server: hand edits racing a write are never lost, files
are never read whole past the limits, links inside the vault are never followed."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_memory_core import MemoryEngine
from mcp_memory_core.errors import EditConflictError, StorageError
from mcp_memory_core.models import Memory
from mcp_memory_core.secret_scan import SecretPolicy
from mcp_memory_core.validation import Limits
from mcp_memory_markdown import MarkdownStore, vault_io
from mcp_memory_markdown.notes import render_note
from mcp_memory_markdown.refresh import RefreshReport
from mcp_memory_testing import HashEmbedder, SimilarityRanker

FS_CALLS = ("rename", "replace", "link", "unlink")


def make_engine(vault: Path, **options: Any) -> tuple[MemoryEngine, MarkdownStore]:
    store = MarkdownStore(vault, namespace="proj", owner="local", **options)
    engine = MemoryEngine(store, HashEmbedder(64), SimilarityRanker(), namespace="proj", track_access=False)
    engine.open()
    return engine, store


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[tuple[MemoryEngine, MarkdownStore]]:
    engine, store = make_engine(tmp_path / "vault", watch=False)
    yield engine, store
    engine.close()


def visible_files(vault: Path) -> dict[str, bytes]:
    """Every file a person sees in the vault (no hidden file or folder)."""
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in vault.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(vault).parts)
    }


def hidden_leftovers(vault: Path) -> list[str]:
    return [
        p.name
        for p in vault.rglob(".mcp-memory-*")
        if ".mcp-memory" not in p.relative_to(vault).parts[:-1] and p.name != ".mcp-memory"
    ]


# -- hand edits racing a write ----------------------------------------------------------------------


class HandEdit:
    """A person's edit of ``note``, made at the ``at``-th rename/replace/link/unlink the store makes
    (``how``: rewriting the file in place, saving like an editor (a temporary file renamed over it),
    or writing through a descriptor opened before the store's call)."""

    def __init__(self, note: Path, how: str, at: int, real: dict[str, Callable[..., Any]]) -> None:
        self.note, self.how, self.at, self.real = note, how, at, real
        self.calls = 0
        self.done = False
        self.marker = f"HAND-EDIT-{how}-{at}".encode()
        self.handle = open(note, "r+b") if how == "open file" else None  # noqa: SIM115

    def __call__(self) -> None:
        self.calls += 1
        if self.done or self.calls - 1 != self.at:
            return
        self.done = True
        if self.how == "open file":
            assert self.handle is not None
            self.handle.seek(0)
            text = self.handle.read()
            self.handle.seek(0)
            self.handle.write(text + b"\n" + self.marker + b"\n")
            self.handle.flush()
            return
        text = self.note.read_bytes() if self.note.exists() else b"Written from scratch"
        edited = text + b"\n" + self.marker + b"\n"
        if self.how == "in place":
            with open(self.note, "r+b" if self.note.exists() else "wb") as handle:
                handle.write(edited)
                handle.truncate()
        else:  # an editor's save: a temporary file renamed over the note
            temp = self.note.with_name(".editor-save.tmp")
            temp.write_bytes(edited)
            self.real["replace"](temp, self.note)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def run_with_edit(
    monkeypatch: pytest.MonkeyPatch, vault: Path, operation: str, how: str, at: int
) -> tuple[HandEdit, BaseException | None]:
    engine, store = make_engine(vault, watch=False)
    try:
        memory = engine.store_memory("The release train leaves every Tuesday").memory
        note = store.path_of(memory.id)
        assert note is not None
        real = {name: getattr(os, name) for name in FS_CALLS}
        edit = HandEdit(note, how, at, real)
        with monkeypatch.context() as patch:
            for name in FS_CALLS:

                def wrapped(*args: Any, _real: Callable[..., Any] = real[name], **kwargs: Any) -> Any:
                    edit()
                    return _real(*args, **kwargs)

                patch.setattr(os, name, wrapped)
            failure: BaseException | None = None
            try:
                if operation == "pin":
                    engine.pin_memory(memory.id)
                elif operation == "update":
                    engine.update_memory(memory.id, "The release train leaves every Wednesday")
                else:
                    engine.delete_memory(memory.id)
            except EditConflictError as exc:
                failure = exc
        edit.close()
        engine.refresh()
        return edit, failure
    finally:
        engine.close()


@pytest.fixture(params=["openat", "paths", "no hard links"])
def file_system(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How the vault's folders are reached: relative to folder descriptors (Linux, macOS), by
    checked paths (Windows has no descriptors of folders), or on a file system without hard links
    (FAT, some network shares: an exclusive create and a copy)."""
    if request.param == "paths":
        monkeypatch.setattr(vault_io, "_AT", False)
    elif request.param == "no hard links":

        def no_link(*args: Any, **kwargs: Any) -> None:
            raise OSError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_link)
    return str(request.param)


@pytest.mark.parametrize("how", ["in place", "editor", "open file"])
@pytest.mark.parametrize("operation", ["pin", "update", "delete"])
def test_a_hand_edit_at_any_step_of_a_write_is_never_lost(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, operation: str, how: str, file_system: str
) -> None:
    """The edit lands at each file-system step of the store's write in turn (before its first
    rename, between each pair, before its last unlink): whatever the step, the person's bytes are
    in a visible file afterwards, no hidden file is left, and a refused write says why."""
    steps = 0
    for at in range(40):
        vault = tmp_path / f"v{at}"
        edit, failure = run_with_edit(monkeypatch, vault, operation, how, at)
        if not edit.done:
            break
        steps += 1
        holders = [path for path, data in visible_files(vault).items() if edit.marker in data]
        assert holders, f"the edit made at step {at} is in no file: {sorted(visible_files(vault))}"
        assert hidden_leftovers(vault) == []
        if failure is not None:
            assert "outside mcp-memory" in str(failure)
    assert steps >= 2  # the write made several steps, and an edit landed at each


def test_the_index_records_the_file_it_wrote(tmp_path: Path, file_system: str) -> None:
    """Whatever the file system, the stamp recorded is the written file's: a second write straight
    after the first (no catch-up in between) is not mistaken for a hand edit."""
    engine, store = make_engine(tmp_path / "vault", watch=False)
    try:
        memory = engine.store_memory("Two writes in a row").memory
        store.update_fields(memory.id, {"pinned": True})
        store.update_fields(memory.id, {"pinned": False})
        note = store.path_of(memory.id)
        assert note is not None and b"pinned: false" in note.read_bytes()
    finally:
        engine.close()


def test_an_edit_between_the_check_and_the_replace_refuses_the_write(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The first rename of a pin is the moment the old code replaced the note after checking it."""
    edit, failure = run_with_edit(monkeypatch, tmp_path / "vault", "pin", "in place", 0)
    assert edit.done and isinstance(failure, EditConflictError)
    note = edit.note
    assert edit.marker in note.read_bytes()  # the person's version is the note, untouched
    assert b"pinned: false" in note.read_bytes()


def test_a_late_write_through_an_open_file_is_kept_as_a_conflict_copy(
    monkeypatch: pytest.MonkeyPatch, engine
) -> None:  # type: ignore[no-untyped-def]
    """An editor opened the note before the server moved it aside and writes just before the
    server deletes the moved-aside file: the server's write stands, the person's bytes become a
    visible conflict copy, and the log says so."""
    engine, store = engine
    memory = engine.store_memory("The office closes at six").memory
    note = store.path_of(memory.id)
    assert note is not None
    handle = open(note, "r+b")  # noqa: SIM115
    real_unlink = vault_io.Folder.unlink

    def late_write(folder: vault_io.Folder, name: str) -> None:
        if name.startswith(".mcp-memory-aside-"):
            handle.seek(0, os.SEEK_END)
            handle.write(b"\nWritten late by hand\n")
            handle.flush()
        real_unlink(folder, name)

    monkeypatch.setattr(vault_io.Folder, "unlink", late_write)
    with handle:
        assert engine.pin_memory(memory.id).pinned
    assert b"pinned: true" in note.read_bytes()
    copy = note.with_name("The office closes at six (conflict copy).md")
    assert copy.read_bytes().endswith(b"Written late by hand\n") and b"pinned: false" in copy.read_bytes()
    assert hidden_leftovers(store.vault) == []


def test_an_editor_saving_while_the_note_is_aside_keeps_its_save(
    monkeypatch: pytest.MonkeyPatch, engine
) -> None:  # type: ignore[no-untyped-def]
    """An editor saves the note (a new file at its path) after the server moved it aside and before
    it places the new version: the save stays, the write is refused and says what it kept."""
    engine, store = engine
    memory = engine.store_memory("Standup is at nine").memory
    note = store.path_of(memory.id)
    assert note is not None
    real_place = vault_io.Folder.place

    def editor_saves_first(folder: vault_io.Folder, source: str, target: str) -> None:
        if target == note.name and source.startswith(".mcp-memory-tmp-"):
            note.write_bytes(b"Standup moved to ten, says the person\n")
        real_place(folder, source, target)

    monkeypatch.setattr(vault_io.Folder, "place", editor_saves_first)
    with pytest.raises(EditConflictError, match=r"was created outside mcp-memory.*conflict copy") as raised:
        store.update_fields(memory.id, {"pinned": True})  # the store asked directly: no catch-up first
    assert note.read_bytes() == b"Standup moved to ten, says the person\n"
    copy = note.with_name("Standup is at nine (conflict copy).md")
    assert copy.name in str(raised.value) and b"pinned: false" in copy.read_bytes()
    assert hidden_leftovers(store.vault) == []


def test_another_server_scanning_while_a_note_is_aside_keeps_its_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A second server sharing the vault looks at it while the first has a note moved aside: it
    sees the note missing, but by the time it may write (the first's commit) the note is back, so
    the memory stays in the shared index."""
    engine, store = make_engine(tmp_path / "vault", watch=False)
    other_engine, other = make_engine(tmp_path / "vault", watch=False)
    try:
        memory = engine.store_memory("The shared vault keeps this note").memory
        note = store.path_of(memory.id)
        assert note is not None and other_engine.count() == 1
        seen: list[Any] = []
        real_place = vault_io.Folder.place

        def other_scans_first(folder: vault_io.Folder, source: str, target: str) -> Any:
            if target == note.name and not seen:
                seen.append(other._changed(None))  # the note is aside: missing to this scan
            return real_place(folder, source, target)

        monkeypatch.setattr(vault_io.Folder, "place", other_scans_first)
        engine.pin_memory(memory.id)
        candidates, gone, known = seen[0]
        assert [row.memory_id for path, row in known.items() if path in gone] == [memory.id]
        other._catch_up(candidates, gone, known, other_engine.embed, None, RefreshReport())
        assert other.get([memory.id])  # still indexed: the note is back
    finally:
        other_engine.close()
        engine.close()


EDITOR = textwrap.dedent(
    """
    import os, sys
    note, count = sys.argv[1], int(sys.argv[2])
    for i in range(count):
        marker = f"STRESS-{i}".encode()
        if i % 2:  # an editor's save
            while True:
                try:
                    with open(note, "rb") as handle:
                        text = handle.read()
                    break
                except FileNotFoundError:
                    continue
            temp = os.path.join(os.path.dirname(note), f".save-{i}.tmp")
            with open(temp, "wb") as handle:
                handle.write(text + b"\\n" + marker + b"\\n")
            os.replace(temp, note)
        else:  # appended in place
            with open(note, "ab") as handle:
                handle.write(b"\\n" + marker + b"\\n")
    print("done", flush=True)
    """
)


def test_hand_edits_while_the_server_writes_are_all_kept(tmp_path: Path) -> None:
    """A real race: another process edits the note while this one pins and unpins it. However the
    race falls, every edit's marker is in a visible file afterwards."""
    engine, store = make_engine(tmp_path / "vault", watch=False)
    try:
        memory = engine.store_memory("A note edited by hand while the server writes it").memory
        note = store.path_of(memory.id)
        assert note is not None
        count = 1500
        editor = subprocess.Popen(
            [sys.executable, "-c", EDITOR, str(note), str(count)], stdout=subprocess.PIPE, text=True
        )
        flag = True
        while editor.poll() is None:
            try:
                engine.pin_memory(memory.id, pinned=flag)
                flag = not flag
            except (EditConflictError, StorageError):
                pass
        assert editor.wait() == 0
    finally:
        engine.close()
    text = b"\n".join(visible_files(tmp_path / "vault").values())
    lost = [i for i in range(count) if f"STRESS-{i}\n".encode() not in text]
    assert lost == []
    assert hidden_leftovers(tmp_path / "vault") == []


# -- limits -------------------------------------------------------------------------------------------

ALIAS_BOMB = textwrap.dedent(
    """\
    ---
    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    ---
    lol
    """
)


def problems_of(store: MarkdownStore) -> dict[str, str]:
    return {p.path: p.reason for p in store.problems()}


def test_an_alias_bomb_is_reported_not_expanded(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    (store.vault / "Concepts").mkdir()
    (store.vault / "Concepts" / "bomb.md").write_text(ALIAS_BOMB, encoding="utf-8")
    (store.vault / "Concepts" / "self.md").write_text("---\na: &a [*a]\n---\nloops\n", encoding="utf-8")
    assert engine.count() == 0
    reported = problems_of(store)
    assert "alias" in reported["Concepts/bomb.md"] and "alias" in reported["Concepts/self.md"]


def test_aliases_the_server_wrote_before_are_still_read(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    (store.vault / "Concepts").mkdir()
    (store.vault / "Concepts" / "old.md").write_text(
        "---\nid: 21af4a2c-2b8d-4cdd-81d0-94b76dbe20f0\ntype: semantic\nnamespace: proj\n"
        "created: &id001 2026-11-26T06:06:17.327456+00:00\nupdated: *id001\n---\nx\n",
        encoding="utf-8",
    )
    assert engine.count() == 1 and problems_of(store) == {}


def test_new_notes_have_no_yaml_aliases() -> None:
    memory = Memory(content="x", namespace="proj")
    assert memory.created_at is memory.updated_at  # one object: a plain dump would alias it
    assert "&" not in render_note(memory) and "*" not in render_note(memory)


def test_a_note_past_the_limits_is_reported_never_read_whole(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    concepts = store.vault / "Concepts"
    concepts.mkdir()
    (concepts / "huge.md").write_bytes(b"word " * 1_700_000)  # 8.5 MB of text
    (concepts / "long text.md").write_text("x" * 40_000, encoding="utf-8")  # past 32 KB of content
    (concepts / "fat props.md").write_text(
        "---\nlist:\n" + "".join(f"- item {i:05}\n" for i in range(2_000)) + "---\nshort\n", encoding="utf-8"
    )
    (concepts / "fine.md").write_text("A note of a normal size", encoding="utf-8")
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        reads.append(len(data))
        return data

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "read", counting_read)
        assert engine.count() == 1
    reported = problems_of(store)
    assert "8,500,000 bytes" in reported["Concepts/huge.md"]
    assert "MCP_MEMORY_MAX_CONTENT_BYTES" in reported["Concepts/long text.md"]
    assert "MCP_MEMORY_MAX_METADATA_BYTES" in reported["Concepts/fat props.md"]
    assert sum(reads) < 1_000_000  # the 8.5 MB file was not read


def test_the_limits_follow_the_settings(tmp_path: Path) -> None:
    engine, store = make_engine(tmp_path / "vault", watch=False, limits=Limits(content_bytes=100))
    try:
        (store.vault / "Concepts").mkdir()
        (store.vault / "Concepts" / "a.md").write_text("y" * 150, encoding="utf-8")
        assert engine.count() == 0 and "limit is 100" in problems_of(store)["Concepts/a.md"]
    finally:
        engine.close()


def test_a_transcript_past_the_limits_is_reported(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    threads = store.vault / "Threads"
    threads.mkdir()
    (threads / "long message.yaml").write_text(f"- {'z' * 40_000}\n- short\n", encoding="utf-8")
    (threads / "huge.yaml").write_text("- a line of talk\n" * 200_000, encoding="utf-8")  # 3.4 MB
    (threads / "bomb.yaml").write_text(ALIAS_BOMB.replace("---\n", "").replace("lol\n", ""), encoding="utf-8")
    (threads / "fine.yaml").write_text("- Ann said hello\n", encoding="utf-8")
    assert engine.count() == 1
    reported = problems_of(store)
    assert "message 1" in reported["Threads/long message.yaml"]
    assert "bytes" in reported["Threads/huge.yaml"]
    assert "alias" in reported["Threads/bomb.yaml"]


# -- what a note's frontmatter may say ---------------------------------------------------------------


def test_invalid_ids_namespaces_and_owners_are_reported(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    concepts = store.vault / "Concepts"
    concepts.mkdir()
    (concepts / "bad id.md").write_text("---\nid: not-a-uuid\n---\ntext\n", encoding="utf-8")
    (concepts / "bad ns.md").write_text("---\nnamespace: Not A Namespace!\n---\ntext\n", encoding="utf-8")
    (concepts / "bad owner.md").write_text("---\nowner: 'a b'\n---\ntext\n", encoding="utf-8")
    (concepts / "bad chain.md").write_text(
        "---\nid: 5d0f1e1c-0d3c-4a53-9d8e-1f6f3a2b9c11\nsuperseded_by: nope\n---\ntext\n", encoding="utf-8"
    )
    assert engine.count(namespace="*") == 0
    reported = problems_of(store)
    assert "'id'" in reported["Concepts/bad id.md"] and "UUID" in reported["Concepts/bad id.md"]
    assert "'namespace'" in reported["Concepts/bad ns.md"]
    assert "'owner'" in reported["Concepts/bad owner.md"]
    assert "'superseded_by'" in reported["Concepts/bad chain.md"]


def test_a_read_only_vault_without_an_index_says_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    (vault / "Concepts").mkdir(parents=True)
    (vault / "Concepts" / "a.md").write_text("A note in a read-only vault", encoding="utf-8")
    real_mkdir = os.mkdir

    def read_only(path: Any, *args: Any, **kwargs: Any) -> None:
        if str(path).endswith(".mcp-memory"):
            raise PermissionError(13, "Permission denied", str(path))
        real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", read_only)
    store = MarkdownStore(vault, namespace="proj", owner="local", watch=False)
    with pytest.raises(StorageError) as raised:
        store.open("model", 8)
    message = str(raised.value)
    assert "writable" in message and f"mcp-memory reindex --path {vault}" in message
    assert message.count(". ") <= 1  # one sentence (and what to do)


# -- links inside the vault ---------------------------------------------------------------------------


@pytest.fixture(params=["openat", "paths"])
def reach(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Folders reached through folder descriptors (Linux, macOS) or through checked paths (Windows)."""
    if request.param == "paths":
        monkeypatch.setattr(vault_io, "_AT", False)
    return str(request.param)


@pytest.fixture
def outside(tmp_path: Path, reach: str) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.md").write_text("The outside secret is swordfish", encoding="utf-8")
    return folder


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_a_linked_note_is_reported_never_read(engine, outside: Path) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    (store.vault / "Concepts").mkdir()
    (store.vault / "Concepts" / "secret.md").symlink_to(outside / "secret.md")
    (store.vault / "Threads").mkdir()
    (store.vault / "Threads" / "talk.yaml").symlink_to(outside / "secret.md")
    assert engine.count() == 0
    assert not [hit for hit in engine.search("swordfish", limit=5).hits]
    reported = problems_of(store)
    assert "symbolic link" in reported["Concepts/secret.md"]
    assert "symbolic link" in reported["Threads/talk.yaml"]


def test_a_linked_folder_is_neither_read_nor_written(engine, outside: Path) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    before = snapshot(outside)
    (store.vault / "Concepts").symlink_to(outside, target_is_directory=True)
    assert engine.count() == 0 and "symbolic link" in problems_of(store)["Concepts"]
    with pytest.raises(StorageError, match="Concepts is a symbolic link"):
        engine.store_memory("A fact that must not land outside the vault")
    assert snapshot(outside) == before


def test_a_linked_archive_is_never_written(engine, outside: Path) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    memory = engine.store_memory("The build server is called hopper").memory
    note = store.path_of(memory.id)
    assert note is not None
    text = note.read_bytes()
    before = snapshot(outside)
    (store.vault / "Archive").symlink_to(outside, target_is_directory=True)
    with pytest.raises(StorageError, match="Archive is a symbolic link"):
        engine.update_memory(memory.id, "The build server is called turing")
    with pytest.raises(StorageError, match="Archive is a symbolic link"):
        engine.delete_memory(memory.id)
    assert snapshot(outside) == before and note.read_bytes() == text


def test_a_note_replaced_by_a_link_is_never_written_through(engine, outside: Path) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    memory = engine.store_memory("Lunch is at noon").memory
    note = store.path_of(memory.id)
    assert note is not None
    before = snapshot(outside)
    note.unlink()
    note.symlink_to(outside / "secret.md")
    with pytest.raises(StorageError, match="is a symbolic link"):  # asked before the engine's catch-up
        store.update_fields(memory.id, {"pinned": True})
    assert engine.count() == 0  # the link is not the note any more
    assert snapshot(outside) == before and note.is_symlink()


def test_a_linked_hidden_folder_is_refused(tmp_path: Path, outside: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / ".mcp-memory").symlink_to(outside, target_is_directory=True)
    (outside / "index-0123456789ab.db").write_bytes(b"another program's file")
    before = snapshot(outside)
    store = MarkdownStore(vault, namespace="proj", owner="local", watch=False)
    assert store.index_files() == []  # `doctor` and `reindex` do not look through the link either
    with pytest.raises(StorageError, match=r"\.mcp-memory is a symbolic link"):
        store.open("model", 8)
    assert snapshot(outside) == before


def test_the_index_folder_is_private(tmp_path: Path, reach: str) -> None:
    engine, store = make_engine(tmp_path / "vault", watch=False)
    try:
        engine.store_memory("Only the owner reads the index")
        assert (store.vault / ".mcp-memory").stat().st_mode & 0o777 == 0o700
        assert store.index_path.stat().st_mode & 0o777 == 0o600
    finally:
        engine.close()


def test_the_vault_itself_may_be_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    engine, store = make_engine(tmp_path / "link", watch=False)
    try:
        engine.store_memory("Stored through a linked vault")
        assert store.vault == real and len(list((real / "Concepts").iterdir())) == 1
    finally:
        engine.close()


def test_a_write_interrupted_by_a_crash_is_put_back_on_open(tmp_path: Path) -> None:
    """A crash between moving a note aside and placing its new version: the next open puts it
    back; a crash after placing it keeps the moved-aside bytes as a conflict copy (nothing lost)."""
    engine, store = make_engine(tmp_path / "vault", watch=False)
    first = engine.store_memory("Crash test one").memory
    second = engine.store_memory("Crash test two").memory
    one, two = store.path_of(first.id), store.path_of(second.id)
    assert one is not None and two is not None
    engine.close()
    one_bytes = one.read_bytes()
    one.rename(one.with_name(".mcp-memory-aside-0123abcd-" + one.name))  # moved aside, nothing placed
    two.with_name(".mcp-memory-aside-89abcdef-" + two.name).write_bytes(b"an older version")  # placed
    two.with_name(".mcp-memory-tmp-0011223344556677.md").write_bytes(b"half a temporary file")
    engine, store = make_engine(tmp_path / "vault", watch=False)
    try:
        assert one.read_bytes() == one_bytes
        assert engine.count() == 3  # the copy is a note too: visible, searchable, for the person to sort out
        copy = two.with_name(two.name.removesuffix(".md") + " (conflict copy).md")
        assert copy.read_bytes() == b"an older version"
        assert hidden_leftovers(tmp_path / "vault") == []
    finally:
        engine.close()


# -- a secret typed into a note by hand ---------------------------------------------------------------

AWS_ID = "AKIAQ3EGUJ7NYWPRT4FD"
SECRET_NOTE = f"The deploy user's access key is {AWS_ID}, rotate it in March.\n"


def index_bytes(store: MarkdownStore) -> bytes:
    """Everything the vault's index keeps on disk (the database and its write-ahead log)."""
    return b"".join(p.read_bytes() for p in (store.vault / ".mcp-memory").rglob("*") if p.is_file())


def test_a_hand_written_secret_is_indexed_redacted_and_the_note_left_alone(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    (store.vault / "Concepts").mkdir()
    note = store.vault / "Concepts" / "deploy.md"
    note.write_text(SECRET_NOTE, encoding="utf-8")
    (store.vault / "Concepts" / "plain.md").write_text("Deploys go out on Fridays.\n", encoding="utf-8")
    report = engine.refresh()
    assert [p.path for p in report.redacted] == ["Concepts/deploy.md"]
    assert "an AWS access key in content" in report.redacted[0].reason
    assert AWS_ID not in str(report.redacted[0])
    [hit] = [h for h in engine.search("deploy user access key", 5).hits if "deploy user" in h.memory.content]
    assert "[REDACTED:aws-key]" in hit.memory.content and AWS_ID not in hit.memory.content
    assert engine.count() == 2 and problems_of(store) == {}
    assert note.read_text(encoding="utf-8") == SECRET_NOTE  # the person's file is theirs
    store.close()
    assert AWS_ID.encode() not in index_bytes(store)


def test_a_hand_written_secret_is_not_indexed_under_refuse(tmp_path: Path) -> None:
    engine, store = make_engine(tmp_path / "vault", watch=False, secrets=SecretPolicy("refuse"))
    try:
        (store.vault / "Concepts").mkdir()
        (store.vault / "Concepts" / "deploy.md").write_text(SECRET_NOTE, encoding="utf-8")
        (store.vault / "Concepts" / "plain.md").write_text("Deploys go out on Fridays.\n", encoding="utf-8")
        assert engine.count() == 1
        reason = problems_of(store)["Concepts/deploy.md"]
        assert "an AWS access key in content" in reason and "MCP_MEMORY_SECRETS=redact" in reason
        assert AWS_ID not in reason
    finally:
        engine.close()
    assert AWS_ID.encode() not in index_bytes(store)


def test_a_hand_written_secret_is_indexed_as_written_under_allow(tmp_path: Path) -> None:
    engine, store = make_engine(tmp_path / "vault", watch=False, secrets=SecretPolicy("allow"))
    try:
        (store.vault / "Concepts").mkdir()
        (store.vault / "Concepts" / "deploy.md").write_text(SECRET_NOTE, encoding="utf-8")
        [memory] = engine.list_memories(limit=10).memories
        assert AWS_ID in memory.content
    finally:
        engine.close()


def test_secrets_in_a_hand_written_transcript_and_properties_are_redacted(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    (store.vault / "Threads").mkdir()
    (store.vault / "Threads" / "ops.yaml").write_text(
        f"- 'Ann: the key is {AWS_ID}'\n- 'Bo: thanks'\n", encoding="utf-8"
    )
    (store.vault / "Concepts").mkdir()
    (store.vault / "Concepts" / "db.md").write_text(
        "---\ndb_password: Qw3rty!9xZ-long\n---\nThe main database's settings.\n", encoding="utf-8"
    )
    report = engine.refresh()
    assert sorted(p.path for p in report.redacted) == ["Concepts/db.md", "Threads/ops.yaml#1"]
    contents = {m.content: m for m in engine.list_memories(limit=10).memories}
    assert any("[REDACTED:aws-key]" in c for c in contents) and not any(AWS_ID in c for c in contents)
    settings = contents["The main database's settings."].metadata
    assert "Qw3rty" not in str(settings) and "[REDACTED" in str(settings)


def test_a_note_the_server_wrote_is_never_screened_again(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    stored = engine.store_memory(f"The deploy key is {AWS_ID}.").memory
    assert "[REDACTED:aws-key]" in stored.content
    store._reread = True  # the next call reads every file again, as after a settings change
    report = engine.refresh()
    assert report.redacted == [] and engine.get_memory(stored.id).memory.content == stored.content


def test_mcp_memory_never_writes_placeholders_over_a_typed_secret(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    (store.vault / "Concepts").mkdir()
    note = store.vault / "Concepts" / "deploy.md"
    note.write_text(SECRET_NOTE, encoding="utf-8")
    (store.vault / "Concepts" / "plain.md").write_text("Deploys go out on Fridays.\n", encoding="utf-8")
    memories = {m.content[:7]: m for m in engine.list_memories(limit=10).memories}
    secret, plain = memories["The dep"], memories["Deploys"]
    before = visible_files(store.vault)
    for change in (
        lambda: engine.update_memory(secret.id, secret.content + " Ask Ops first."),
        lambda: engine.delete_memory(secret.id),
    ):
        with pytest.raises(StorageError) as refused:
            change()
        assert "Concepts/deploy.md holds an AWS access key in content typed into the file" in str(
            refused.value
        )
        assert AWS_ID not in str(refused.value)
        assert visible_files(store.vault) == before  # nothing written, nothing archived
    assert engine.get_memory(secret.id).memory.content == secret.content
    engine.update_memory(plain.id, "Deploys go out on Thursdays.")  # other notes are written as ever
    assert note.read_text(encoding="utf-8") == SECRET_NOTE
    note.write_text("The deploy user's key lives in the password manager.\n", encoding="utf-8")
    engine.update_memory(
        secret.id, "The deploy user's key lives in 1Password."
    )  # the secret is gone: writable
    assert "1Password" in note.read_text(encoding="utf-8")


def test_a_secret_in_a_notes_name_or_aliases_is_not_in_the_title_row_either(engine) -> None:  # type: ignore[no-untyped-def]
    engine, store = engine
    (store.vault / "Concepts").mkdir()
    (store.vault / "Concepts" / "deploy.md").write_text(
        f"---\nname: key {AWS_ID}\naliases: [k {AWS_ID}]\n---\nThe deploy key.\n", encoding="utf-8"
    )
    [memory] = engine.list_memories(limit=10).memories
    assert memory.metadata == {"name": "key [REDACTED:aws-key]", "aliases": ["k [REDACTED:aws-key]"]}
    [hit] = engine.search("key", 5).hits  # found by its title row, which says the placeholder
    assert hit.memory.id == memory.id
    engine.close()
    assert AWS_ID.encode() not in index_bytes(store)
