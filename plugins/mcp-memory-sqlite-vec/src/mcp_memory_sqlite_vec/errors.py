"""SQLite's errors as one sentence a user can act on (``StorageError``), and the checks that keep the
store from writing where it must not: a file that is not SQLite, another program's database, a file
deleted or replaced under a running server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from mcp_memory_core.errors import StorageError
from mcp_memory_core.local_files import database_path_problem

Action = Literal["open", "read", "write"]
_DOING = {"open": "opening", "read": "reading", "write": "writing to"}
_NOTHING_WRITTEN = {"open": "", "read": "", "write": "; nothing was written"}


def is_busy(exc: BaseException) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED: another connection holds the lock (worth waiting for)."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def storage_error(exc: BaseException, location: str, action: Action, busy_seconds: float) -> StorageError:
    """``exc`` (a DB-API DatabaseError from SQLite) as one sentence naming the file and what to do."""
    text = str(exc).lower()
    done = _NOTHING_WRITTEN[action]
    if "full" in text:
        message = f"The disk holding {location} is full{done}. Free some space and try again."
    elif "readonly" in text or "read-only" in text:
        return read_only_error(location, done)
    elif is_busy(exc):
        message = (
            f"{location} is busy: another process held its lock for more than {busy_seconds:.0f} s"
            f"{done}. Try again."
        )
    elif "not a database" in text or "malformed" in text or "corrupt" in text:
        message = (
            f"{location} is damaged or is not a SQLite database ({exc}): mcp-memory will not write into "
            "it. Restore it from a backup, or point MCP_MEMORY_DB_PATH at another file."
        )
    elif "i/o" in text or "unable to open" in text:
        message = (
            f"{location} could not be {'read' if action == 'read' else 'opened or written'} "
            f"(disk I/O error){done}: check that the file and its folder exist and are accessible."
        )
    else:
        message = f"SQLite failed while {_DOING[action]} {location}: {exc}{done}."
    return StorageError(message)


def read_only_error(location: str, done: str = "; nothing was written") -> StorageError:
    return StorageError(
        f"{location} is read-only{done}: check the file's permissions, or point MCP_MEMORY_DB_PATH at a "
        "writable file (searching a read-only database works)."
    )


def refuse_foreign(conn: Any, location: str) -> None:
    """Raise StorageError unless the database is empty or one of ours (read-only checks, before
    anything is written: even switching a file to WAL would change another program's database)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables:
        return
    ours = "meta" in tables and conn.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone()
    if not ours:
        shown = ", ".join(sorted(tables)[:5]) + (", …" if len(tables) > 5 else "")
        raise StorageError(
            f"{location} is another program's SQLite database (tables: {shown}): mcp-memory will not "
            "write into it. Point MCP_MEMORY_DB_PATH at a new file."
        )


def check_database_path(path: Path) -> None:
    """Raise StorageError when ``path`` cannot be a database file (see ``database_path_problem``)."""
    problem = database_path_problem(path)
    if problem is not None:
        raise StorageError(
            f"{problem}. Set MCP_MEMORY_DB_PATH to a file path in a folder you can write (e.g. …/memories.db)."
        )


def create_private_file(path: Path) -> None:
    """Create ``path`` (and its folder) readable by its owner only: 0600 in a 0700 folder. SQLite gives
    the -wal and -shm files the database file's permissions. An existing file is left as it is."""
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def file_identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of ``path``, None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def check_same_file(path: Path, identity: tuple[int, int] | None) -> None:
    """Raise StorageError when ``path`` is no longer the file the store opened (deleted or replaced
    while the server ran): a commit would go to a file nobody will read again."""
    if identity is not None and file_identity(path) != identity:
        raise StorageError(
            f"{path} was deleted or replaced while mcp-memory was running; nothing was written. "
            "Restart the server (it creates a new database, or opens the replacement)."
        )
