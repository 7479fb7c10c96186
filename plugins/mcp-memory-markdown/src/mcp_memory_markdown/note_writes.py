"""Replacing and removing notes while a person may be editing them: no edit is ever written over.

A check of a note's stamp followed by a rename over it leaves a window in which an edit is lost.
So a note is never replaced in place; a write goes in steps, each checked after the fact:

1. :func:`take` renames the note aside to a hidden name in its folder (atomic; an editor's later
   save makes a new file at the note's path instead of replacing ours), then checks that the file
   it moved is the one the index read: same size and modification time, same sha256 of its bytes.
   If not, the person edited it: it is put back (without replacing anything now at the path, else
   kept as a visible conflict copy) and the write is refused, nothing written.
2. :func:`place` gives a new note its path with a hard link from a fsynced temporary file: a link
   never replaces, so an editor that created the path meanwhile keeps its file (the write is
   refused). File systems without hard links: Windows' rename never replaces; POSIX falls back
   to an exclusive create and a copy.
3. :func:`discard` removes the moved-aside file once everything is written: it opens it, unlinks
   it, then hashes it through the open descriptor. A write that reached it since step 1 (an
   editor writing in place through a descriptor opened before the rename) is saved next to the
   note as a conflict copy, with a warning in the log. Only a write through such a descriptor
   after this last read is not seen: it goes to a file that no longer has a name, as it would
   after any program deleted the file.

Undo (a later step failed) takes back what was placed the same way, and puts the moved-aside
files back without replacing anything (a conflict copy when the path is taken). A crash leaves at
most hidden temporary and moved-aside files: :func:`recover` deletes the first and puts the second
back (or keeps it as a conflict copy) when the store opens, under the index's write lock.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from .vault_io import (
    TEMP_PREFIX,
    Folder,
    LinkInVault,
    Stamp,
    chunks_of,
    digest_of,
    is_link,
    open_folder,
    split,
    stamp_from,
)

log = logging.getLogger(__name__)

ASIDE_PREFIX = ".mcp-memory-aside-"
NAME_MAX = 255  # bytes of a file name on every common file system


class Conflict(Exception):
    """A note changed outside the store since it was indexed; ``kept``: a conflict copy made."""

    def __init__(self, relative: str, what: str, kept: str | None = None) -> None:
        super().__init__(f"{relative} {what}")
        self.path = relative
        self.what = what
        self.kept = kept


@dataclass(frozen=True)
class Taken:
    """A note moved aside by :func:`take`, as the index knew it."""

    path: str  # the note's relative path
    aside: str  # its hidden name in the same folder
    stamp: Stamp
    sha256: str


def take(vault: Path, relative: str, expect: Stamp, sha256: str) -> Taken:
    """Move the note at ``relative`` aside and check it is the file the index read (see the module
    docstring). Raises Conflict (nothing changed but a conflict copy) when it is not."""
    folder_path, name = split(relative)
    with open_folder(vault, folder_path) as folder:
        st = folder.lstat(name)
        if st is None:
            raise Conflict(relative, "was removed")
        if not stat.S_ISREG(st.st_mode):  # a folder, a link, a FIFO: not the note that was indexed
            raise Conflict(relative, "was edited")
        aside = _aside_name(name)
        try:
            folder.rename(name, aside)
        except FileNotFoundError:
            raise Conflict(relative, "was removed") from None
        try:
            fd = folder.open_read(aside)
        except Exception:  # swapped for something else since the lstat: it goes back, as it was
            _put_back(folder, aside, name)
            raise
        try:
            unchanged = _same(fd, expect, sha256)
        finally:
            os.close(fd)
        if not unchanged:
            raise Conflict(relative, "was edited", _put_back(folder, aside, name))
        return Taken(relative, aside, expect, sha256)


def place(vault: Path, relative: str, data: bytes) -> Stamp:
    """Write ``data`` as a new file at ``relative``, never replacing one (Conflict if one is there)."""
    folder_path, name = split(relative)
    with open_folder(vault, folder_path, create=True) as folder:
        temp, stamp = folder.write_temp(data)
        try:
            copied = folder.place(temp, name)
        except FileExistsError:
            raise Conflict(relative, "was created") from None
        finally:
            folder.unlink_quietly(temp)
        folder.sync()
        return copied or stamp


def discard(vault: Path, taken: Taken) -> str | None:
    """Delete a moved-aside note; returns the conflict copy made when it changed since ``take``."""
    folder_path, name = split(taken.path)
    with open_folder(vault, folder_path) as folder:
        try:
            fd = folder.open_read(taken.aside)
        except FileNotFoundError:
            return None
        try:
            folder.unlink(taken.aside)
            folder.sync()
            if _same(fd, taken.stamp, taken.sha256):
                return None
            return _save_copy(folder, fd, name)
        finally:
            os.close(fd)


def restore(vault: Path, taken: Taken) -> str | None:
    """Undo :func:`take`: the note goes back to its path; returns the conflict copy made instead
    when the path is taken meanwhile."""
    folder_path, name = split(taken.path)
    with open_folder(vault, folder_path) as folder:
        return _put_back(folder, taken.aside, name)


def withdraw(vault: Path, relative: str, stamp: Stamp, sha256: str) -> str | None:
    """Undo :func:`place`: remove the file written at ``relative`` unless it was edited since (then
    it stays: Conflict). Returns a conflict copy's path if a late write had to be kept."""
    return discard(vault, take(vault, relative, stamp, sha256))


def recover(vault: Path) -> list[str]:
    """After a crash: delete temporary files and put moved-aside notes back, in every folder of the
    vault but hidden ones (call under the index's write lock, so that no other process is writing).
    Returns one sentence per note put back or kept as a copy."""
    said: list[str] = []
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            with open_folder(vault, relative) as folder:
                for entry, is_folder in folder.entries():
                    if is_folder and not entry.startswith("."):
                        pending.append(folder.child(entry))
                    elif entry.startswith((TEMP_PREFIX, ASIDE_PREFIX)):
                        said.extend(_recover_entry(folder, entry))
        except (OSError, LinkInVault):  # a linked folder is reported by the scan
            continue
    return said


def _recover_entry(folder: Folder, entry: str) -> list[str]:
    st = folder.lstat(entry)
    if st is None or is_link(st):
        return []
    if entry.startswith(TEMP_PREFIX):
        if not stat.S_ISDIR(st.st_mode):
            folder.unlink_quietly(entry)
        return []
    original = _original_name(entry)
    if original is None:
        copy = _rename_to_copy(folder, entry, "recovered note")
        return [f"{folder.child(entry)} was left by an interrupted write: kept as {copy}."]
    kept = _put_back(folder, entry, original)
    where = f"kept as {kept}" if kept else "put back"
    return [f"{folder.child(original)}, set aside by an interrupted write, was {where}."]


def _same(fd: int, expect: Stamp, sha256: str) -> bool:
    """Whether the file behind ``fd`` is the one stamped ``expect`` with the bytes hashed ``sha256``."""
    before = stamp_from(os.fstat(fd))
    if before != expect:
        return False
    digest = digest_of(fd)
    return digest == sha256 and stamp_from(os.fstat(fd)) == expect


def _put_back(folder: Folder, aside: str, name: str) -> str | None:
    """Give the moved-aside file its name back without replacing anything; a conflict copy's path
    when something is at the name now."""
    try:
        folder.place(aside, name)
    except FileExistsError:
        return _rename_to_copy(folder, aside, name.removesuffix(".md"))
    except OSError:  # not a file that can be linked or copied (a folder swapped in): rename it back
        if folder.lstat(name) is not None:
            return _rename_to_copy(folder, aside, name.removesuffix(".md"))
        folder.rename(aside, name)
    folder.sync()
    return None


def _rename_to_copy(folder: Folder, source: str, stem: str) -> str:
    for number in range(1, 10_000):
        copy = f"{stem} (conflict copy{'' if number == 1 else f' {number}'}).md"
        try:
            folder.place(source, copy)
        except FileExistsError:
            continue
        folder.sync()
        return folder.child(copy)
    raise FileExistsError(f"no free name for a conflict copy of {folder.child(stem)}")


def _save_copy(folder: Folder, fd: int, name: str) -> str:
    """Write the bytes behind ``fd`` as a conflict copy of note ``name``."""
    temp, _ = folder.write_temp(chunks_of(fd))
    try:
        copy = _rename_to_copy(folder, temp, name.removesuffix(".md"))
    finally:
        folder.unlink_quietly(temp)
    log.warning(
        "%s was edited while mcp-memory replaced it: the edited version is kept as %s.",
        folder.child(name),
        copy,
    )
    return copy


def _aside_name(name: str) -> str:
    token = secrets.token_hex(4)
    named = f"{ASIDE_PREFIX}{token}-{name}"
    return named if len(os.fsencode(named)) <= NAME_MAX else f"{ASIDE_PREFIX}{token}"


def _original_name(aside: str) -> str | None:
    rest = aside.removeprefix(ASIDE_PREFIX)
    token, sep, name = rest.partition("-")
    return name if sep and len(token) == 8 and name else None
