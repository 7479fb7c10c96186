"""Bringing the vault's index up to date with its files (``refresh``): the notes changed since the
previous call are read (malformed ones reported and skipped), screened for secrets by the server's
policy (a note edited by hand may hold one: the index keeps placeholders in its place under
``redact``, and skips the note under ``refuse``; the file itself is never changed), the ones whose
text changed embedded again, and memories whose file is gone dropped from the index.

A mixin of :class:`~.store.MarkdownStore`, which owns the index, the file table and the change watch.
"""

from __future__ import annotations

import builtins
import datetime as dt
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from mcp_memory_core.errors import PluginError
from mcp_memory_core.models import Memory
from mcp_memory_core.passages import split_passages
from mcp_memory_core.protocols import Vector
from mcp_memory_core.secret_scan import SecretPolicy, SecretRefusedError, describe, listing
from mcp_memory_core.validation import Limits

from .changes import ChangeWatch
from .index import IndexStore
from .layout import CONFIG_NAME, VaultConfig, load_config
from .note_ids import NoteIds
from .notes import (
    TRANSCRIPT_MESSAGES,
    MalformedNote,
    Note,
    aliases_of,
    content_hash,
    note_bytes,
    parse_note,
    title_of,
    transcript_bytes,
)
from .threads import file_of, is_message, is_thread_file, parse_thread
from .vault_files import FileTable, Indexed, Stamp, is_note, scan, stamp_of
from .vault_io import LinkInVault, NotRegular, TooLarge, read_file, stamp_in

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
    redacted: list[Problem] = field(default_factory=list)  # notes indexed with placeholders: what, where


class VaultRefresh:
    """``refresh`` and its steps; the attributes are :class:`~.store.MarkdownStore`'s."""

    _vault: Path
    _limits: Limits
    _namespace: str
    _owner: str
    _use_watch: bool
    _index: IndexStore
    _files: FileTable
    _ids: NoteIds
    _config: VaultConfig
    _config_stamp: Stamp | None
    _reread: bool
    _watch: ChangeWatch | None
    _refresh_lock: threading.Lock
    _problems: dict[str, tuple[Stamp, str]]
    _secrets: SecretPolicy

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
        for problem in report.redacted:
            log.warning("A note of the vault is indexed with placeholders: %s", problem)
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
            try:
                note = self._parse(raw, path, dt.datetime.fromtimestamp(stamp.mtime_ns / 1e9, dt.UTC))
            except MalformedNote as exc:
                self._report(path, stamp, str(exc), report)
                continue
            screened = self._screened(note, path, stamp, report)
            if screened is None:
                continue
            self._problems.pop(path, None)
            notes[path] = (screened, Indexed(path, note.memory.id, stamp, sha, screened.heading))
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

    def _parse(self, raw: bytes, path: str, mtime: dt.datetime) -> Note:
        """The note at ``path`` (its bytes ``raw``) as a memory of this vault: a note that names no
        namespace, owner or id gets the vault's (``mtime``: its dates when it names none)."""
        return parse_note(
            raw,
            path,
            mtime=mtime,
            namespace=self._namespace,
            owner=self._owner,
            hand_id=self._ids.id_of(path),
            limits=self._limits,
        )

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
            screened = self._screened(note, message_path, stamp, report)
            if screened is not None:
                notes[message_path] = (screened, Indexed(message_path, note.memory.id, stamp, digest, ""))
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

    def _screened(self, note: Note, path: str, stamp: Stamp, report: RefreshReport) -> Note | None:
        """``note`` as the index may hold it under the secret policy: unchanged when it holds no
        secret (every note the server wrote), with placeholders under ``redact`` (reported in
        ``report.redacted``), None under ``refuse`` (reported as a problem). Never the secret itself
        in a report or a log line; the file is left as it is."""
        memory = note.memory
        try:
            screened = self._secrets.screen(memory.content, memory.metadata, memory.tags, memory.thread)
        except SecretRefusedError as exc:
            self._report(
                path,
                stamp,
                f"it holds {listing(exc.findings)} and MCP_MEMORY_SECRETS=refuse keeps secrets out of the "
                "index: remove it from the note (keep secrets in a password manager or the environment), "
                "or set MCP_MEMORY_SECRETS=redact to index the note with a placeholder in its place",
                report,
            )
            return None
        if not screened.findings:
            return note
        report.redacted.append(Problem(path, f"{describe(screened.findings)} (the note itself is unchanged)"))
        update: dict[str, Any] = {
            "content": screened.content,
            "metadata": screened.metadata or {},
            "thread": screened.thread,
        }
        if screened.tags is not None:
            update["tags"] = screened.tags
        redacted = memory.model_copy(update=update)
        if is_message(path):  # a message has no title row
            return replace(note, memory=redacted)
        # The title row (``name`` and ``aliases``) is read from the redacted properties too.
        title = title_of(redacted, path)
        return replace(
            note, memory=redacted, title=title, aliases=aliases_of(redacted.metadata.get("aliases"))
        )

    def _typed_secrets(self, path: str) -> str | None:
        """The secrets the note at ``path`` holds as its file says (``an AWS access key in content``),
        which the index keeps as placeholders; None when it holds none, when the policy allows them
        (the index holds them as written) or when the file cannot be read as a note (the write's own
        checks say so). A write must not put the index's placeholders over what a person typed."""
        if self._secrets.mode == "allow" or is_message(path):
            return None
        try:
            raw, _ = read_file(self._vault, path, note_bytes(self._limits))
            note = self._parse(raw, path, dt.datetime.now(dt.UTC))
        except (OSError, LinkInVault, TooLarge, NotRegular, MalformedNote):
            return None
        memory = note.memory
        finder = SecretPolicy("redact", self._secrets.pii)  # what is there, whatever the policy does
        found = finder.screen(memory.content, memory.metadata, memory.tags, memory.thread).findings
        return listing(found) if found else None

    def _report(self, path: str, stamp: Stamp, reason: str, report: RefreshReport) -> None:
        self._problems[path] = (stamp, reason)
        report.problems.append(Problem(path, reason))
