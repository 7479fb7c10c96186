"""The markdown vault store: the files are the truth, the index is derived from them.

Every memory is a note (:mod:`.notes`) in a folder of the vault (:mod:`.layout`). The index is the
sqlite-vec store itself, in ``<vault>/.mcp-memory/index.db``, with one table of its own
(``vault_files``: each note's path, size, modification time, content hash and memory id).

Writes: inside ``transaction()`` the index is written first (uncommitted, holding SQLite's write
lock), then each changed note is written by :mod:`.note_writes` (moved aside and checked, never
written over a person's edit), then the index commits. A crash before the
files leaves nothing; between the files and the commit, the next ``refresh`` reads the files back
(the truth) into the index. A file is never replaced or removed when it changed on disk since the
index read it: the write is refused (:class:`~mcp_memory_core.errors.EditConflictError`) and nothing is
written. Old versions and deleted memories move to ``Archive/``; a new version takes over its
predecessor's file, so a note keeps its place and name.

Reads go to the index after ``refresh(embed)``, which the engine calls before every call: the paths
that changed since the previous call (inotify on Linux, a scan elsewhere) are read, malformed notes
are reported and skipped, and only notes whose text changed are embedded again.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import datetime as dt
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from mcp_memory_core.errors import EditConflictError, PluginError, StorageError
from mcp_memory_core.models import Memory, MemoryFilter
from mcp_memory_core.passages import split_passages
from mcp_memory_core.protocols import StoreCapabilities, StoreDiagnosis, Vector
from mcp_memory_core.validation import DEFAULT_LIMITS, Limits
from mcp_memory_sqlite_vec import SqliteVecStore

from .changes import ChangeWatch
from .layout import (
    CACHE_DIR,
    CONFIG_NAME,
    INDEX_GLOB,
    VaultConfig,
    free_path,
    index_name,
    load_config,
    note_name,
    write_config,
)
from .note_ids import NoteIds, write_gitignore
from .note_writes import Conflict, Taken, discard, place, recover, restore, take, withdraw
from .notes import (
    TRANSCRIPT_MESSAGES,
    MalformedNote,
    Note,
    content_hash,
    heading_of,
    note_bytes,
    parse_note,
    render_note,
    title_of,
    transcript_bytes,
)
from .threads import file_of, is_message, is_thread_file, parse_thread
from .vault_files import FileTable, Indexed, Stamp, is_note, scan, stamp_of
from .vault_io import LinkInVault, NotRegular, TooLarge, open_folder, read_file, stamp_in

log = logging.getLogger(__name__)

Embed = Callable[[Sequence[str]], tuple[Vector, "list[int] | None"]]
Progress = Callable[[int, int], None]
REFRESH_BATCH = 256  # notes embedded and committed together: an interrupted build keeps what it did


@dataclass(frozen=True)
class Problem:
    """A note that could not be read as a memory, and why (one sentence)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class RefreshReport:
    """What one ``refresh`` did."""

    indexed: int = 0  # notes embedded (new or changed text)
    updated: int = 0  # notes whose properties changed (vectors kept)
    removed: int = 0  # memories whose file is gone
    problems: list[Problem] = field(default_factory=list)


@dataclass
class _Op:
    """One file change of a flush: write ``data`` to ``path`` (``None``: remove it)."""

    path: str
    memory_id: str
    data: bytes | None
    expect: Stamp | None  # the file as the index knows it (None: it must not exist)
    sha256: str = ""  # the bytes the index read from it
    heading: str = ""  # its title row (see notes.heading_of)
    recorded: bool = True  # False: the index's rows do not fit the note (a title row to add)


class MarkdownStore:
    """A Store whose memories are markdown notes in ``vault``. ``namespace`` and ``owner`` are given
    to notes that do not name theirs (a hand-written note). ``watch=False`` scans the vault at every
    call instead of reading change events."""

    def __init__(
        self,
        vault: str | Path,
        *,
        namespace: str,
        owner: str,
        create: bool = True,
        watch: bool = True,
        index_options: Mapping[str, Any] | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self._vault = Path(vault).expanduser().resolve()  # a link the user chose, resolved once
        self._limits = limits
        self._namespace = namespace
        self._owner = owner
        self._create = create
        self._use_watch = watch
        self._index_options = dict(index_options or {})
        # Each embedding model has its own index file (layout.index_name); until ``open`` names the
        # model, the index is the newest one there is (what ``diagnose`` looks at).
        self._index = self._new_index(self._newest_index() or self._vault / CACHE_DIR / "index.db")
        self._files = FileTable(self._index.sql)
        self._ids = NoteIds(self._vault, CACHE_DIR)
        self._config = VaultConfig()
        self._config_stamp: Stamp | None = None
        self._reread = False  # the settings changed: read every file again at the next refresh
        self._watch: ChangeWatch | None = None
        self._depth = 0
        self._pending: dict[str, Memory | None] = {}
        self._refresh_lock = threading.Lock()
        self._problems: dict[str, tuple[Stamp, str]] = {}

    def _new_index(self, path: Path) -> SqliteVecStore:
        return SqliteVecStore(path, create=True, **self._index_options)

    def _newest_index(self) -> Path | None:
        found = sorted(self.index_files(), key=lambda p: p.stat().st_mtime_ns if p.exists() else 0)
        return found[-1] if found else None

    def index_files(self) -> builtins.list[Path]:
        """Every model's index file in the vault's hidden folder (none through a link)."""
        folder = self._vault / CACHE_DIR
        if folder.is_symlink() or not folder.is_dir():
            return []
        return sorted(path for path in folder.glob(INDEX_GLOB) if not path.is_symlink())

    # -- description -----------------------------------------------------------------------------
    @property
    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities(
            keyword_search=True,
            concurrent_processes=True,
            thread_safe=True,
            read_vectors=True,
            derived_index=True,  # an index per model, built from the notes (layout.index_name)
        )

    @property
    def location(self) -> str:
        return str(self._vault)

    @property
    def vault(self) -> Path:
        return self._vault

    @property
    def index_path(self) -> Path:
        """The index file in use (after ``open``: the configured model's)."""
        return Path(self._index.location)

    @property
    def config(self) -> VaultConfig:
        return self._config

    def __repr__(self) -> str:
        return f"MarkdownStore({self.location!r})"

    def problems(self) -> list[Problem]:
        """Notes skipped because they cannot be read as memories (as of the last refresh)."""
        return [Problem(path, reason) for path, (_, reason) in sorted(self._problems.items())]

    # -- lifecycle -------------------------------------------------------------------------------
    def open(self, model_id: str, dimensions: int) -> None:
        if not self._vault.is_dir():
            if not self._create:
                raise StorageError(
                    f"There is no vault at {self._vault}: create it with `mcp-memory init --path {self._vault}`."
                )
            self._vault.mkdir(parents=True, exist_ok=True)
        self._config_stamp = stamp_of(self._vault / CONFIG_NAME)
        self._config = load_config(self._vault)
        name = index_name(model_id, dimensions)
        self._prepare_cache(name)
        wanted = self._vault / CACHE_DIR / name
        if self.index_path != wanted:
            self._index.close()
            self._index = self._new_index(wanted)
            self._files = FileTable(self._index.sql)
            self._problems.clear()
        try:
            self._index.open(model_id, dimensions)
        except PermissionError as exc:
            raise self._read_only(exc) from None
        with self._index.transaction():  # the write lock: no other process is writing notes now
            self._files.create()
            for said in recover(self._vault):
                log.warning("%s", said)
        write_gitignore(self._vault, CACHE_DIR)
        if self._watch is None:
            skip = tuple(self._config.exclude)
            self._watch = ChangeWatch(self._vault, skip, use_inotify=self._use_watch)

    def _prepare_cache(self, index: str) -> None:
        """The hidden folder, with no link in it where the index's files go (SQLite would follow
        one out of the vault); created if missing, or one sentence saying why it cannot be."""
        try:
            # the index holds every memory's text: the folder is its owner's only, like the database's
            with open_folder(self._vault, CACHE_DIR, create=True, mode=0o700) as folder:
                names = [index, f"{index}-wal", f"{index}-shm", "ids.json", ".gitignore"]
                linked = next((n for n in names if (st := folder.stamp(n)) is not None and st.link), None)
        except LinkInVault as exc:
            linked_path = exc.path
        except OSError as exc:
            raise self._read_only(exc) from None
        else:
            if linked is None:
                return
            linked_path = f"{CACHE_DIR}/{linked}"
        raise StorageError(
            f"{self._vault / linked_path} is a symbolic link: mcp-memory follows no link inside the vault, "
            "so it keeps its index nowhere else; replace it with a real folder or file."
        )

    def _read_only(self, exc: OSError) -> StorageError:
        return StorageError(
            f"mcp-memory cannot create the index of the vault {self._vault} in its {CACHE_DIR} folder "
            f"({exc.strerror or exc}): make the folder writable, or run `mcp-memory reindex --path "
            f"{self._vault}` as a user who can write it."
        )

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        self._index.close()

    def reset_index(self) -> None:
        """Delete the index in use (the store is closed): the next ``open`` and ``refresh`` build it
        again from the files. Servers using that index must be stopped first (``reindex --rebuild``)."""
        self.close()
        path = self.index_path
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{path}{suffix}")
        self._index = self._new_index(path)
        self._files = FileTable(self._index.sql)
        self._problems.clear()

    def initialize(self) -> builtins.list[str]:
        """Create the vault's folders and its ``.mcp-memory.yaml`` (namespace: this store's default);
        nothing existing is changed. Returns what was created, relative to the vault."""
        created: builtins.list[str] = []
        if not self._vault.exists():
            self._vault.mkdir(parents=True)
            created.append(str(self._vault))
        if write_config(self._vault, self._namespace):
            created.append(CONFIG_NAME)
        self._config = load_config(self._vault)
        for folder in self._config.folders:
            if not (self._vault / folder).exists():
                (self._vault / folder).mkdir(parents=True)
                created.append(folder + "/")
        return created

    def warm(self) -> None:
        warm = getattr(self._index, "warm", None)
        if callable(warm):
            warm()

    def diagnose(self) -> StoreDiagnosis:
        """The diagnosis of the newest index (``mcp-memory doctor``): the notes are the truth, the
        index is what can be damaged (``mcp-memory reindex --rebuild`` builds it again). Another
        model's index is not a mismatch here: each model gets an index of its own, built from the
        notes on first use (``mcp-memory reindex`` builds it with a progress bar)."""
        found = self._index.diagnose()
        details = {
            "vault": str(self._vault),
            "indexes": [path.name for path in self.index_files()],
            **found.details,
        }
        return dataclasses.replace(found, details=details)

    # -- writes ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        with self._index.transaction():
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._depth = 1
            self._pending = {}
            try:
                yield
                self._flush()
            finally:
                self._depth = 0
                self._pending = {}

    def insert(
        self, memories: Sequence[Memory], vectors: Vector, owners: Sequence[int] | None = None
    ) -> None:
        with self.transaction():
            self._index.insert(memories, vectors, owners)
            for memory in memories:
                self._pending[memory.id] = memory

    def update_fields(self, memory_id: str, fields: Mapping[str, Any]) -> None:
        with self.transaction():
            self._index.update_fields(memory_id, fields)
            self._pending[memory_id] = self._index.get([memory_id])[memory_id]

    def record_access(self, counts: Mapping[str, int], when: dt.datetime) -> None:
        """Access statistics live in the index only: a search never rewrites a note."""
        self._index.record_access(counts, when)

    def purge(self, ids: Sequence[str]) -> int:
        ids = list(dict.fromkeys(ids))
        with self.transaction():
            removed = self._index.purge(ids)
            for memory_id in ids:
                self._pending[memory_id] = None
            return removed

    # -- reads (the index) -----------------------------------------------------------------------
    def get(self, ids: Sequence[str]) -> dict[str, Memory]:
        return self._index.get(ids)

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        return self._index.vectors(ids)

    def knn(self, vector: Vector, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        return self._index.knn(vector, k, where)

    def keyword_search(self, query: str, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        return self._index.keyword_search(query, k, where)

    def thread_neighbours(
        self, ids: Sequence[str], where: MemoryFilter
    ) -> dict[str, tuple[str | None, str | None]]:
        return self._index.thread_neighbours(ids, where)

    def list(
        self, where: MemoryFilter, limit: int, after: tuple[dt.datetime, str] | None = None
    ) -> list[Memory]:
        return self._index.list(where, limit, after)

    def count(self, where: MemoryFilter) -> int:
        return self._index.count(where)

    def namespaces(self, where: MemoryFilter | None = None) -> dict[str, int]:
        return self._index.namespaces(where)

    def iter_all(self) -> Iterator[Memory]:
        return self._index.iter_all()

    def path_of(self, memory_id: str) -> Path | None:
        """The note that holds a memory, if the index knows one."""
        row = self._files.by_memory([memory_id]).get(memory_id)
        return self._vault / file_of(row.path) if row is not None else None

    # -- the files of a transaction -----------------------------------------------------------------
    def _flush(self) -> None:
        """Write the notes of every memory this transaction changed (inside the index's transaction)."""
        if not self._pending:
            return
        pending = dict(self._pending)
        rows = self._files.by_memory(pending)
        transcripts = sorted({file_of(row.path) for row in rows.values() if is_message(row.path)})
        if transcripts:
            raise StorageError(
                f"That memory is a message of the conversation transcript {transcripts[0]}: transcripts "
                "are read-only through mcp-memory, so nothing was written. Edit the file to change it."
            )
        successors = self._successors(pending)
        ops: builtins.list[_Op] = []
        planned: set[str] = set()
        inherited: dict[str, str] = {}  # old version's id -> the path its new version takes over
        for memory_id, memory in pending.items():
            if memory is None or memory.is_current:
                continue
            row = rows.get(memory_id)
            newer = successors.get(memory_id)
            if (
                row is not None
                and not self._config.in_archive(row.path)
                and newer is not None
                and newer.is_current
                and newer.id not in rows
            ):
                inherited[memory_id] = row.path
        heirs = {successors[old].id: path for old, path in inherited.items()}
        for memory_id, memory in pending.items():
            row = rows.get(memory_id)
            if memory is None:
                if row is not None:
                    ops.append(_Op(row.path, memory_id, None, row.stamp, row.sha256))
                continue
            target = self._target(memory, row, heirs.get(memory_id), planned)
            planned.add(target)
            data = render_note(memory, supersedes=self._predecessor(memory.id)).encode("utf-8")
            heading = heading_of(memory, title_of(memory, target), hand_written=False)
            # The index holds the title row of the note it last read (none for what the engine inserts).
            fits = heading == (row.heading if row is not None else "")
            if row is not None and row.path == target:
                ops.append(_Op(target, memory_id, data, row.stamp, row.sha256, heading, fits))
                continue
            if memory_id in heirs:
                old_row = rows[next(old for old, path in inherited.items() if path == target)]
                ops.append(_Op(target, memory_id, data, old_row.stamp, old_row.sha256, heading, fits))
            else:
                ops.append(_Op(target, memory_id, data, None, "", heading, fits))
            if row is not None and row.path not in heirs.values():
                ops.append(_Op(row.path, memory_id, None, row.stamp, row.sha256))
        self._apply(ops)

    def _successors(self, pending: Mapping[str, Memory | None]) -> dict[str, Memory]:
        """For each pending memory superseded by another pending memory: that newer memory."""
        return {
            memory_id: newer
            for memory_id, memory in pending.items()
            if memory is not None
            and memory.superseded_by is not None
            and (newer := pending.get(memory.superseded_by)) is not None
        }

    def _predecessor(self, memory_id: str) -> str | None:
        older = self._index.list(
            MemoryFilter(namespace=None, include_deleted=True, superseded_by_in=frozenset({memory_id})), 1
        )
        return older[0].id if older else None

    def _target(self, memory: Memory, row: Indexed | None, inherit: str | None, planned: set[str]) -> str:
        """Where ``memory``'s note goes: a current memory stays where it is (or takes over its
        predecessor's file, or goes to its type's folder); another moves to the archive."""
        archive = self._config.archive_dir
        if memory.is_current:
            if row is not None and not self._config.in_archive(row.path):
                return row.path
            if inherit is not None:
                return inherit
            folder = self._config.folder_of(memory.type)
            return free_path(folder, note_name(memory.content), self._taken(folder) | planned)
        if row is not None and self._config.in_archive(row.path):
            return row.path
        stem = (
            row.path.rsplit("/", 1)[-1].removesuffix(".md") if row is not None else note_name(memory.content)
        )
        name = f"{stem}.{memory.id[:8]}"
        return free_path(archive, name, self._taken(archive) | planned)

    def _taken(self, folder: str) -> set[str]:
        try:
            with open_folder(self._vault, folder) as opened:
                return {f"{folder}/{name}" for name in opened.names()}
        except (OSError, LinkInVault):  # a link is refused when the note is written
            return set()

    def _apply(self, ops: Sequence[_Op]) -> None:
        """Check every file, then move aside the notes to replace or remove, place the new ones, and
        delete what was moved aside (:mod:`.note_writes`: a person's edit is never written over);
        undo what was done if any step fails. Records the files in ``vault_files`` (same transaction)."""
        for op in ops:  # refuse before anything is written when the index is already behind
            now = self._stamp(op.path)
            if now != op.expect:
                what = "was created" if op.expect is None else "was removed" if now is None else "was edited"
                raise self._conflict(Conflict(op.path, what))
        taken: builtins.list[Taken] = []
        placed: builtins.list[Indexed] = []
        current = ""
        try:
            for op in sorted(ops, key=lambda op: (op.data is None, op.expect is not None)):
                current = op.path
                if op.expect is not None:
                    taken.append(take(self._vault, op.path, op.expect, op.sha256))
                if op.data is not None:
                    stamp = place(self._vault, op.path, op.data)
                    placed.append(Indexed(op.path, op.memory_id, stamp, content_hash(op.data), op.heading))
        except (Conflict, LinkInVault, OSError) as exc:
            copies = self._undo(placed, taken)
            raise self._refusal(exc, current, copies) from None
        except BaseException:
            self._undo(placed, taken)
            raise
        self._discard(taken)
        # A note whose title row changed is left unrecorded: the next refresh embeds it with its title.
        unrecorded = {op.path for op in ops if not op.recorded}
        written = [row for row in placed if row.path not in unrecorded]
        self._files.drop({op.path for op in ops} - {row.path for row in written})
        self._files.put(written)

    def _discard(self, taken: Sequence[Taken]) -> None:
        """Delete the moved-aside versions (a late edit found in one is kept as a conflict copy)."""
        for moved in taken:
            try:
                kept = discard(self._vault, moved)
            except (OSError, LinkInVault) as exc:  # left hidden: the next start keeps it as a copy
                log.error("Could not delete the old version of %s set aside: %s", moved.path, exc)
                continue
            if kept is not None:
                log.warning(
                    "%s was edited while mcp-memory wrote it: that edit is kept as %s.", moved.path, kept
                )

    def _refusal(self, exc: Exception, path: str, copies: builtins.list[str]) -> StorageError:
        """One sentence for a write refused and undone."""
        if isinstance(exc, Conflict):
            return self._conflict(exc, ([exc.kept] if exc.kept else []) + copies)
        if isinstance(exc, LinkInVault):
            return self._linked(exc)
        error = exc if isinstance(exc, OSError) else None  # Windows: a note held open, not shared
        reason = (error.strerror if error is not None else None) or str(exc)
        return StorageError(f"{path} could not be written ({reason}); nothing was written.")

    def _undo(self, placed: Sequence[Indexed], taken: Sequence[Taken]) -> builtins.list[str]:
        """Take back the files placed (unless edited since: they stay), then put back what was moved
        aside (as a conflict copy when its path is taken: the copies made are returned). The files
        are the truth: the next refresh reads what is there."""
        copies: builtins.list[str] = []
        for row in reversed(placed):
            try:
                late = withdraw(self._vault, row.path, row.stamp, row.sha256)
                copies += [late] if late else []
            except Conflict:
                log.warning("%s was edited right after mcp-memory wrote it: it stays as edited.", row.path)
            except (OSError, LinkInVault) as exc:
                log.error("Could not undo the write of %s: %s", row.path, exc)
        for moved in reversed(taken):
            try:
                kept = restore(self._vault, moved)
            except (OSError, LinkInVault) as exc:
                log.error("Could not put %s back: %s", moved.path, exc)
                continue
            if kept is not None:
                copies.append(kept)
                log.warning(
                    "%s was recreated meanwhile; the version mcp-memory had is kept as %s.", moved.path, kept
                )
        return copies

    def _stamp(self, relative: str) -> Stamp | None:
        """The stamp of a file of the vault to write (a link refused: one sentence naming it)."""
        folder, _, name = relative.rpartition("/")
        try:
            with open_folder(self._vault, folder) as opened:
                stamp = opened.stamp(name)
        except LinkInVault as exc:
            raise self._linked(exc) from None
        except (FileNotFoundError, NotADirectoryError):
            return None
        if stamp is not None and stamp.link:
            raise self._linked(LinkInVault(relative))
        return stamp

    def _linked(self, exc: LinkInVault) -> StorageError:
        return StorageError(
            f"{exc.path} is a symbolic link: mcp-memory reads and writes nothing through links inside "
            "the vault, so nothing was written; replace it with a real folder or file."
        )

    @staticmethod
    def _conflict(exc: Conflict, copies: Sequence[str] = ()) -> EditConflictError:
        kept = f" (also kept, as a conflict copy: {', '.join(copies)})" if copies else ""
        return EditConflictError(
            f"{exc.path} {exc.what} outside mcp-memory since it was indexed; nothing was written{kept}. "
            "Try again: the next call reads the change first."
        )

    # -- files changed outside the store ---------------------------------------------------------
    def refresh(self, embed: Embed, progress: Progress | None = None) -> RefreshReport:
        """Bring the index up to date with the files: read the notes that changed since the last
        call, embed those whose text changed (with ``embed``, which returns rows and their owners
        as ``insert`` takes them), drop memories whose note is gone. ``progress(done, total)`` is
        called after each batch."""
        report = RefreshReport()
        with self._refresh_lock:
            if self._watch is None:
                raise RuntimeError(f"{self!r} is not open: call open(model_id, dimensions) first.")
            self._reload_config()
            touched = self._watch.changes()
            if self._reread:
                touched = None  # everything, each file read again (its namespace may have changed)
            candidates, gone, known = self._changed(touched)
            if candidates or gone:
                self._catch_up(candidates, gone, known, embed, progress, report)
            self._reread = False
        for problem in report.problems:
            log.warning("Skipped a note of the vault: %s", problem)
        return report

    def _reload_config(self) -> None:
        """Read ``.mcp-memory.yaml`` again when it changed (one stat a call): new folder names and
        excludes apply at once; every file is read again (vectors are kept where the text is the
        same). A settings file that no longer validates is logged and the previous settings stay."""
        stamp = stamp_of(self._vault / CONFIG_NAME)
        if stamp == self._config_stamp:
            return
        self._config_stamp = stamp
        try:
            config = load_config(self._vault)
        except PluginError as exc:
            log.warning("%s The vault keeps the settings it read before.", exc)
            return
        if config == self._config:
            return
        log.info("The vault's settings changed (%s): reading every note again.", CONFIG_NAME)
        if config.namespace and config.namespace != self._config.namespace:
            self._namespace = config.namespace
        self._config = config
        if self._watch is not None:
            self._watch.close()
        self._watch = ChangeWatch(self._vault, tuple(config.exclude), use_inotify=self._use_watch)
        self._reread = True

    def _changed(
        self, touched: set[str] | None
    ) -> tuple[dict[str, Stamp], builtins.list[str], dict[str, Indexed]]:
        """The notes to read (new or with another stamp than the index's), the paths that are gone,
        and the index's rows for both."""
        threads = self._config.threads_dir + "/"
        if touched is None:  # scan() enters no hidden folder: a note is any .md it finds
            on_disk = {
                path: stamp
                for path, stamp in scan(self._vault, self._config.exclude).items()
                if path.endswith(".md") or path.startswith(threads) or stamp.link
            }
            known = self._files.all()
        else:
            if not touched:
                return {}, [], {}
            known = self._files.by_files(touched)
            on_disk = {}
            for path in touched:
                if not self._is_memory_file(path) or self._config.excluded(path):
                    continue
                stamp = stamp_in(self._vault, path)
                if stamp is not None:
                    on_disk[path] = stamp
        # the stamp each file had when the index read it (a transcript's messages all share one;
        # MIXED when they do not: it is read again)
        stamps: dict[str, Stamp | None] = {}
        for path, row in known.items():
            if "#" in path:  # a transcript's message (threads.message_path)
                path = file_of(path)
                if stamps.get(path, row.stamp) != row.stamp:
                    stamps[path] = None
                    continue
            stamps[path] = row.stamp
        # a file replaced by a link is gone too: nothing is read through it
        gone = [path for path in known if (stamp := on_disk.get(file_of(path))) is None or stamp.link]
        for path in [p for p in self._problems if p not in on_disk and (touched is None or p in touched)]:
            del self._problems[path]
        problems = self._problems
        candidates = {
            path: stamp
            for path, stamp in on_disk.items()
            if self._reread
            or (stamps.get(path) != stamp and (path not in problems or problems[path][0] != stamp))
        }
        return candidates, gone, known

    def _is_back(self, path: str) -> bool:
        """Whether a file found missing is a note or transcript of the vault again."""
        if not self._is_memory_file(path) or self._config.excluded(path):
            return False
        stamp = stamp_in(self._vault, path)
        return stamp is not None and not stamp.link

    def _is_memory_file(self, path: str) -> bool:
        """A note, or a conversation transcript in the threads folder."""
        return is_note(path) or (
            is_thread_file(path, self._config.threads_dir)
            and not any(part.startswith(".") for part in path.split("/"))
        )

    def _catch_up(
        self,
        candidates: Mapping[str, Stamp],
        gone: Sequence[str],
        known: Mapping[str, Indexed],
        embed: Embed,
        progress: Progress | None,
        report: RefreshReport,
    ) -> None:
        notes: dict[str, tuple[Note, Indexed]] = {}
        touch: list[Indexed] = []
        missing = set(gone)
        gone = builtins.list(gone)
        for path, stamp in sorted(candidates.items()):
            raw = self._read(path, stamp, report)
            if raw is None:
                continue
            if is_thread_file(path, self._config.threads_dir):
                gone.extend(self._read_transcript(path, stamp, raw, known, notes, touch, report))
                continue
            sha = content_hash(raw)
            row = known.get(path)
            if row is not None and row.sha256 == sha and not self._reread:
                touch.append(Indexed(path, row.memory_id, stamp, sha, row.heading))
                continue
            mtime = dt.datetime.fromtimestamp(stamp.mtime_ns / 1e9, dt.UTC)
            try:
                note = parse_note(
                    raw,
                    path,
                    mtime=mtime,
                    namespace=self._namespace,
                    owner=self._owner,
                    hand_id=self._ids.id_of(path),
                    limits=self._limits,
                )
            except MalformedNote as exc:
                self._report(path, stamp, str(exc), report)
                continue
            self._problems.pop(path, None)
            notes[path] = (note, Indexed(path, note.memory.id, stamp, sha, note.heading))
        moved = self._follow_moves(notes, gone, known)
        self._drop_duplicates(notes, set(gone), report)
        claimed = {note.memory.id for note, _ in notes.values()}
        if gone or touch or moved:
            with self._index.transaction():
                # Another process's write moves a note aside for a moment (note_writes): a file
                # that is back by now is not gone (the next refresh reads its new version).
                gone = [path for path in gone if path not in missing or not self._is_back(file_of(path))]
                self._ids.record(moved, gone)
                rows = self._files.by_paths(gone)
                vanished = [rows[p].memory_id for p in gone if p in rows]
                still = self._files.by_memory(vanished)  # a memory whose note moved keeps its vectors
                purge = [
                    i for i in vanished if i not in claimed and (i not in still or still[i].path in gone)
                ]
                report.removed += self._index.purge(purge)
                self._files.drop(gone)
                self._files.put(touch)
        items = sorted(notes.values(), key=lambda item: item[1].path)
        total = len(items)
        for start in range(0, total, REFRESH_BATCH):
            self._index_batch(items[start : start + REFRESH_BATCH], embed, report)
            if progress is not None:
                progress(min(start + REFRESH_BATCH, total), total)

    def _read(self, path: str, stamp: Stamp, report: RefreshReport) -> bytes | None:
        """The bytes of a note or transcript, never more than it may hold and never through a link;
        None (the file reported, or gone) when they cannot be read."""
        transcript = is_thread_file(path, self._config.threads_dir)
        limit = transcript_bytes(self._limits) if transcript else note_bytes(self._limits)
        reason: str | None = None
        try:
            raw, _ = read_file(self._vault, path, limit)
            return raw
        except (FileNotFoundError, NotADirectoryError):
            return None
        except LinkInVault:
            reason = (
                "it is a symbolic link: mcp-memory reads nothing through links inside the vault "
                "(put the file or folder itself there)"
            )
        except TooLarge as exc:
            holds = (
                f"a conversation transcript may hold ({limit:,}: {TRANSCRIPT_MESSAGES} times "
                "MCP_MEMORY_MAX_CONTENT_BYTES)"
                if transcript
                else f"a note may hold ({limit:,}: MCP_MEMORY_MAX_CONTENT_BYTES of text and "
                "MCP_MEMORY_MAX_METADATA_BYTES of properties)"
            )
            reason = f"it is {exc.size:,} bytes, more than {holds}: split it into several files"
        except NotRegular:
            reason = "it is not a regular file"
        except OSError as exc:
            reason = f"it cannot be read ({exc.strerror or exc})"
        self._report(path, stamp, reason, report)
        return None

    def _read_transcript(
        self,
        path: str,
        stamp: Stamp,
        raw: bytes,
        known: Mapping[str, Indexed],
        notes: dict[str, tuple[Note, Indexed]],
        touch: builtins.list[Indexed],
        report: RefreshReport,
    ) -> builtins.list[str]:
        """Read a conversation transcript's messages into ``notes`` (or ``touch`` when a message is
        as indexed); returns the index paths of messages the file no longer has."""
        mtime = dt.datetime.fromtimestamp(stamp.mtime_ns / 1e9, dt.UTC)
        try:
            messages = parse_thread(
                raw, path, mtime=mtime, namespace=self._namespace, owner=self._owner, limits=self._limits
            )
        except MalformedNote as exc:
            self._report(path, stamp, str(exc), report)
            return []
        self._problems.pop(path, None)
        produced = set()
        for message_path, note, digest in messages:
            produced.add(message_path)
            row = known.get(message_path)
            if row is not None and row.sha256 == digest and row.memory_id == note.memory.id:
                touch.append(Indexed(message_path, row.memory_id, stamp, digest, ""))
                continue
            notes[message_path] = (note, Indexed(message_path, note.memory.id, stamp, digest, ""))
        return [p for p in known if file_of(p) == path and p not in produced]

    def _follow_moves(
        self, notes: dict[str, tuple[Note, Indexed]], gone: Sequence[str], known: Mapping[str, Indexed]
    ) -> builtins.list[tuple[str, str]]:
        """A hand-written note renamed or moved (its bytes now under a new path, its old path gone)
        keeps its id: returns the ``(new path, id)`` pairs for the sidecar."""
        left = {
            row.sha256: row
            for path in gone
            if (row := known.get(path)) is not None
            and not is_message(path)
            and self._ids.is_hand_written(path, row.memory_id)
        }
        moved: builtins.list[tuple[str, str]] = []
        for path, (note, row) in builtins.list(notes.items()):
            old = left.pop(row.sha256, None) if note.hand_written and not is_message(path) else None
            if old is None or old.memory_id == note.memory.id:
                continue
            memory = note.memory.model_copy(update={"id": old.memory_id})
            notes[path] = (replace(note, memory=memory), replace(row, memory_id=old.memory_id))
            moved.append((path, old.memory_id))
        return moved

    def _drop_duplicates(
        self, notes: dict[str, tuple[Note, Indexed]], gone: set[str], report: RefreshReport
    ) -> None:
        """Two files with one id (a copied note, or a file left by an interrupted move): the file the
        index already knows (else a current note outside the archive, else the first path) keeps it."""
        by_id: dict[str, list[str]] = {}
        for path, (note, _) in notes.items():
            by_id.setdefault(note.memory.id, []).append(path)
        owners = self._files.by_memory(by_id)
        read_now = {path: note.memory.id for path, (note, _) in notes.items()}
        for memory_id, paths in by_id.items():
            owner = owners.get(memory_id)
            keep: str | None
            if (
                owner is not None
                and owner.path not in gone
                and owner.path not in paths
                and read_now.get(owner.path, memory_id) == memory_id  # re-read with another id: freed
                and (found := stamp_in(self._vault, file_of(owner.path))) is not None
                and not found.link
            ):
                keep = None  # the note the index knows keeps its id
            else:
                ordered = sorted(paths, key=lambda p: (self._config.in_archive(p), p))
                keep = owner.path if owner is not None and owner.path in paths else ordered[0]
            for path in paths:
                if path == keep:
                    continue
                _, row = notes.pop(path)
                other = keep or (owner.path if owner is not None else "another note")
                self._report(
                    path,
                    row.stamp,
                    f"it has the id of {other} (a copy?): remove its 'id' line to make it a memory of its own",
                    report,
                )

    def _index_batch(
        self, items: Sequence[tuple[Note, Indexed]], embed: Embed, report: RefreshReport
    ) -> None:
        ids = [note.memory.id for note, _ in items]
        existing = self._index.get(ids)
        previous = self._files.by_memory(ids)
        reuse = self._index.vectors([i for i in ids if i in existing])

        def fits(note: Note, row: Indexed) -> bool:
            """The index's vectors of this memory are this note's: same text, same title row."""
            old = existing.get(note.memory.id)
            before = previous.get(note.memory.id)
            rows = reuse.get(note.memory.id)
            return (
                old is not None
                and rows is not None
                and old.content == note.memory.content
                and (before.heading == row.heading if before is not None else not row.heading)
                and len(rows) == len(split_passages(note.memory.content)) + bool(row.heading)
            )

        stale = [note for note, row in items if not fits(note, row)]
        stale_ids = {note.memory.id for note in stale}
        fresh = self._embedded(stale, embed)
        memories: list[Memory] = []
        blocks: list[Vector] = []
        for note, _ in items:
            memory = note.memory
            old = existing.get(memory.id)
            if old is not None:  # statistics are the index's: a file edit keeps them
                memory = memory.model_copy(
                    update={"access_count": old.access_count, "last_accessed": old.last_accessed}
                )
            memories.append(memory)
            blocks.append(fresh[memory.id] if memory.id in fresh else reuse[memory.id])
        with self._index.transaction():
            current = self._files.by_paths(row.path for _, row in items)
            # Another process may have indexed (or written) one of these files meanwhile: its row wins.
            keep = [
                i
                for i, (_, row) in enumerate(items)
                if self._reread or row.path not in current or current[row.path].stamp != row.stamp
            ]
            keep = [i for i in keep if stamp_in(self._vault, file_of(items[i][1].path)) == items[i][1].stamp]
            chosen = [memories[i] for i in keep]
            if not chosen:
                return
            self._index.purge([m.id for m in chosen])  # what is there now (another process may have added it)
            chosen_blocks = [blocks[i] for i in keep]
            self._index.insert(
                chosen,
                np.concatenate(chosen_blocks).astype(np.float32, copy=False),
                [n for n, block in enumerate(chosen_blocks) for _ in range(len(block))],
            )
            self._files.drop(
                p.path for i in keep if (p := previous.get(memories[i].id)) and p.path != items[i][1].path
            )
            self._files.put(items[i][1] for i in keep)
        report.indexed += sum(1 for i in keep if memories[i].id in stale_ids)
        report.updated += sum(1 for i in keep if memories[i].id not in stale_ids)

    @staticmethod
    def _embedded(notes: Sequence[Note], embed: Embed) -> dict[str, Vector]:
        """Each note's rows: its content's (as the engine splits it), then its title row if it has one."""
        if not notes:
            return {}
        vectors, owners = embed([note.memory.content for note in notes])
        rows: dict[str, list[Vector]] = {note.memory.id: [] for note in notes}
        owner_list = owners if owners is not None else list(range(len(notes)))
        for row, owner in enumerate(owner_list):
            rows[notes[owner].memory.id].append(vectors[row])
        titled = [note for note in notes if note.heading]
        if titled:
            heads, head_owners = embed([note.heading for note in titled])
            for row, owner in enumerate(head_owners if head_owners is not None else range(len(titled))):
                if head_owners is None or row == head_owners.index(owner):  # a title's whole text only
                    rows[titled[owner].memory.id].append(heads[row])
        return {memory_id: np.stack(block).astype(np.float32) for memory_id, block in rows.items()}

    def _report(self, path: str, stamp: Stamp, reason: str, report: RefreshReport) -> None:
        self._problems[path] = (stamp, reason)
        report.problems.append(Problem(path, reason))


def copy_vault(source: Path, target: Path) -> None:
    """Copy a vault's notes and settings, not its index (tests and benchmarks rebuild it)."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(CACHE_DIR))
