"""The vault's notes on disk: a scan of every note, and the table that remembers what the index was
built from (each note's path, size, modification time and content hash). Reads and writes of the
files themselves are :mod:`.vault_io` and :mod:`.note_writes`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .vault_io import LINK, Stamp, is_link, stamp_from

__all__ = ["FILES_DDL", "SUFFIXES", "FileTable", "Indexed", "Stamp", "is_note", "scan", "stamp_of"]

FILES_DDL = """
CREATE TABLE IF NOT EXISTS vault_files (
    path TEXT PRIMARY KEY,      -- relative to the vault, '/' separated
    memory_id TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    heading TEXT NOT NULL DEFAULT ''  -- the title row embedded beside the content ('' = none)
);
CREATE INDEX IF NOT EXISTS vault_files_memory ON vault_files (memory_id);
"""


@dataclass(frozen=True)
class Indexed:
    """A row of ``vault_files``: the file as it was when the index last read or wrote it."""

    path: str
    memory_id: str
    stamp: Stamp
    sha256: str
    heading: str = ""


def stamp_of(path: Path) -> Stamp | None:
    """The stamp of ``path`` itself (a link is stamped as a link, never followed)."""
    try:
        return stamp_from(os.lstat(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def is_note(relative_path: str) -> bool:
    """A markdown file outside hidden folders (and not a hidden file itself)."""
    parts = relative_path.split("/")
    return relative_path.endswith(".md") and not any(part.startswith(".") for part in parts)


SUFFIXES = (".md", ".yaml", ".yml")  # notes, and conversation transcripts (in the threads folder)


def scan(vault: Path, skip: Iterable[str] = ()) -> dict[str, Stamp]:
    """Every note and YAML file of the vault with its stamp (hidden folders and ``skip`` folders are
    not entered). A symbolic link is never followed: a linked folder, or a linked file named like a
    note, is returned with a stamp that says ``link`` (to be reported)."""
    skipped = set(skip)
    found: dict[str, Stamp] = {}
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            entries = os.scandir(vault / relative if relative else vault)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        with entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                child = f"{relative}/{entry.name}" if relative else entry.name
                try:
                    if entry.is_symlink() or is_link(entry.stat(follow_symlinks=False)):
                        if child not in skipped and (entry.name.endswith(SUFFIXES) or entry.is_dir()):
                            found[child] = LINK
                    elif entry.is_dir(follow_symlinks=False):
                        if child not in skipped:
                            stack.append(child)
                    elif entry.name.endswith(SUFFIXES) and entry.is_file(follow_symlinks=False):
                        found[child] = stamp_from(entry.stat(follow_symlinks=False))
                except OSError:
                    continue
    return found


class FileTable:
    """``vault_files`` in the index database, read and written through the index store's ``sql()``:
    inside its ``transaction()``, rows commit or roll back with the memories they describe."""

    def __init__(self, sql: Any) -> None:
        self._sql = sql  # the index store's sql(): a context manager yielding a connection

    def create(self) -> None:
        """Create the table (inside the index's transaction: ``executescript`` would commit it)."""
        with self._sql() as conn:
            for statement in FILES_DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)

    def all(self) -> dict[str, Indexed]:
        return {row.path: row for row in self._select("", ())}

    def by_paths(self, paths: Iterable[str]) -> dict[str, Indexed]:
        return {row.path: row for row in self._select_in("path", paths)}

    def by_files(self, files: Iterable[str]) -> dict[str, Indexed]:
        """The rows read from ``files``: a note's own row, a transcript's one row per message
        (``file#1``, ``file#2`` …; '#' sorts just before '$')."""
        return {
            row.path: row
            for path in dict.fromkeys(files)
            for row in self._select(
                "WHERE path = ? OR (path > ? AND path < ?)", (path, path + "#", path + "$")
            )
        }

    def by_memory(self, memory_ids: Iterable[str]) -> dict[str, Indexed]:
        return {row.memory_id: row for row in self._select_in("memory_id", memory_ids)}

    def _select_in(self, column: str, values: Iterable[str]) -> list[Indexed]:
        wanted = list(dict.fromkeys(values))
        rows: list[Indexed] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            rows += self._select(f"WHERE {column} IN ({','.join('?' * len(chunk))})", chunk)
        return rows

    def _select(self, where: str, params: Sequence[Any]) -> list[Indexed]:
        with self._sql() as conn:
            found = conn.execute(
                f"SELECT path, memory_id, mtime_ns, size, sha256, heading FROM vault_files {where}", params
            ).fetchall()
        return [Indexed(row[0], row[1], Stamp(row[2], row[3]), row[4], row[5]) for row in found]

    def put(self, rows: Iterable[Indexed]) -> None:
        """Upsert rows (inside the index's transaction)."""
        with self._sql() as conn:
            conn.executemany(
                "INSERT INTO vault_files (path, memory_id, mtime_ns, size, sha256, heading) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET memory_id = excluded.memory_id, "
                "mtime_ns = excluded.mtime_ns, size = excluded.size, sha256 = excluded.sha256, "
                "heading = excluded.heading",
                [(r.path, r.memory_id, r.stamp.mtime_ns, r.stamp.size, r.sha256, r.heading) for r in rows],
            )

    def drop(self, paths: Iterable[str]) -> None:
        with self._sql() as conn:
            conn.executemany("DELETE FROM vault_files WHERE path = ?", [(p,) for p in paths])

    def clear(self) -> None:
        with self._sql() as conn:
            conn.execute("DELETE FROM vault_files")
