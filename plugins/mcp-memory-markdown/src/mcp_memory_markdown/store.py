"""The markdown vault store: the files are the truth, the index is derived from them.

Every memory is a note (:mod:`.notes`) in a folder of the vault (:mod:`.layout`). The index is the
sqlite-vec store itself, found through the plugin manager (:mod:`.index`), in
``<vault>/.mcp-memory/index.db``, with one table of its own (``vault_files``: each note's path, size,
modification time, content hash and memory id).

Writes: inside ``transaction()`` the index is written first (uncommitted, holding SQLite's write
lock), then each changed note is written by :mod:`.note_writes` (moved aside and checked, never
written over a person's edit), then the index commits. A crash before the
files leaves nothing; between the files and the commit, the next ``refresh`` reads the files back
(the truth) into the index. A file is never replaced or removed when it changed on disk since the
index read it: the write is refused (:class:`~mcp_memory_core.errors.EditConflictError`) and nothing is
written. Nor is a note whose file holds a secret a person typed, which the index keeps as a
placeholder (:meth:`~.refresh.VaultRefresh._typed_secrets`): the write is refused, naming it. Old
versions and deleted memories move to ``Archive/``; a new version takes over its predecessor's file,
so a note keeps its place and name.

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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_memory_core.errors import EditConflictError, StorageError
from mcp_memory_core.list_order import ListOrder, SortKey
from mcp_memory_core.models import Memory, MemoryFilter
from mcp_memory_core.protocols import StoreCapabilities, StoreDiagnosis, Vector
from mcp_memory_core.secret_scan import SecretPolicy
from mcp_memory_core.validation import DEFAULT_LIMITS, Limits

from .changes import ChangeWatch
from .index import IndexFactory, IndexStore, plugin_index
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
    content_hash,
    heading_of,
    render_note,
    title_of,
)
from .refresh import Problem, VaultRefresh
from .threads import file_of, is_message
from .vault_files import FileTable, Indexed, Stamp, stamp_of
from .vault_io import LinkInVault, open_folder

log = logging.getLogger(__name__)


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


class MarkdownStore(VaultRefresh):
    """A Store whose memories are markdown notes in ``vault``. ``namespace`` and ``owner`` are given
    to notes that do not name theirs (a hand-written note). ``watch=False`` scans the vault at every
    call instead of reading change events. ``secrets``: the policy a note read from its file is
    screened by before the index holds it (the server's, ``MCP_MEMORY_SECRETS``; ``redact`` when not
    given), as the engine screens a write."""

    def __init__(
        self,
        vault: str | Path,
        *,
        namespace: str,
        owner: str,
        create: bool = True,
        watch: bool = True,
        index: IndexFactory | None = None,
        limits: Limits = DEFAULT_LIMITS,
        secrets: SecretPolicy | None = None,
    ) -> None:
        self._vault = Path(vault).expanduser().resolve()  # a link the user chose, resolved once
        self._limits = limits
        self._secrets = secrets if secrets is not None else SecretPolicy()
        self._namespace = namespace
        self._owner = owner
        self._create = create
        self._use_watch = watch
        self._index_factory = index if index is not None else plugin_index()
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

    def _new_index(self, path: Path) -> IndexStore:
        return self._index_factory(path)

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
        self,
        where: MemoryFilter,
        limit: int,
        after: SortKey | None = None,
        order: ListOrder = "newest",
    ) -> list[Memory]:
        return self._index.list(where, limit, after, order)

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
        for written in rows.values():
            if (typed := self._typed_secrets(written.path)) is not None:
                raise StorageError(
                    f"The note {written.path} holds {typed} typed into the file, which mcp-memory keeps as a "
                    "placeholder: it does not write over what you typed, so nothing was written. Edit "
                    "the file to change it (and keep the secret in a password manager or the "
                    "environment)."
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


def copy_vault(source: Path, target: Path) -> None:
    """Copy a vault's notes and settings, not its index (tests and benchmarks rebuild it)."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(CACHE_DIR))
