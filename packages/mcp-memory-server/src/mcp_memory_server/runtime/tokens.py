"""The token file: the default :class:`~mcp_memory_core.tokens.TokenTable`.

A small SQLite file of its own beside the memory database (``tokens.db``; ``MCP_MEMORY_TOKENS_PATH``
overrides it), created ``0600``, holding only the SHA-256 of each token. Every server process that
shares the file sees a created or revoked token at once: its :meth:`SqliteTokenTable.version` (the
file's identity and SQLite's ``data_version``, which moves on every commit of another connection)
tells the registry when what it read is out of date. A store that keeps tokens in its own
database (PostgreSQL) replaces the file unless ``MCP_MEMORY_TOKENS_PATH`` is set: see
:func:`mcp_memory_server.runtime.assembly.token_registry`. The rules live in core's ``TokenRegistry``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Hashable, Iterator
from dataclasses import replace
from pathlib import Path

from mcp_memory_core.local_files import database_path_problem
from mcp_memory_core.tokens import TokenInfo, TokenStoreError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    id         TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    user       TEXT NOT NULL,
    teams      TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    revoked_at TEXT
)
"""
_COLUMNS = "id, user, teams, created_at, revoked_at"


class SqliteTokenTable:
    """The token file. Cheap to construct; every method but :meth:`version` opens, uses and closes a
    connection (so each of its commits moves the version the watching connection reads)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._watch_lock = threading.Lock()
        self._watch: tuple[tuple[int, int], sqlite3.Connection] | None = None  # (file identity, connection)

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        """Close the watching connection (opened again on the next :meth:`version`)."""
        with self._watch_lock:
            if self._watch is not None:
                self._watch[1].close()
                self._watch = None

    def version(self) -> Hashable | None:
        """(the file's device and inode, its ``data_version`` seen from one long-lived connection);
        None without a file or when it cannot be read (the registry then keeps nothing)."""
        try:
            stat = self.path.stat()
        except OSError:
            return None
        identity = (stat.st_dev, stat.st_ino)
        with self._watch_lock:
            try:
                if self._watch is None or self._watch[0] != identity:  # first call, or the file replaced
                    if self._watch is not None:
                        self._watch[1].close()
                    self._watch = None
                    conn = sqlite3.connect(
                        self.path, timeout=10.0, isolation_level=None, check_same_thread=False
                    )
                    self._watch = (identity, conn)
                (version,) = self._watch[1].execute("PRAGMA data_version").fetchone()
            except sqlite3.Error:
                return None
        return (identity, int(version))

    @contextlib.contextmanager
    def _db(self, *, create: bool) -> Iterator[sqlite3.Connection]:
        problem = database_path_problem(self.path)
        if problem is not None:  # before SQLite leaves a journal beside /dev/null
            raise TokenStoreError(
                f"{problem}: set MCP_MEMORY_TOKENS_PATH to a file path in a folder you can write "
                "(e.g. …/tokens.db)."
            )
        if not self.path.exists():
            if not create:
                raise TokenStoreError(
                    f"No token file at {self.path}: create a token first with "
                    "`mcp-memory token create` (yours)."
                )
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        try:
            conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise TokenStoreError(f"Cannot open the token file {self.path}: {exc}") from None
        try:
            conn.execute("PRAGMA busy_timeout=10000")
            conn.execute(_SCHEMA)
            yield conn
        except sqlite3.DatabaseError as exc:
            raise TokenStoreError(f"The token file {self.path} cannot be used: {exc}") from None
        finally:
            conn.close()

    def insert(self, info: TokenInfo, token_hash: str) -> None:
        with self._db(create=True) as conn:
            conn.execute(
                "INSERT INTO tokens (id, hash, user, teams, created_at) VALUES (?, ?, ?, ?, ?)",
                (info.id, token_hash, info.user, json.dumps(list(info.teams)), info.created_at),
            )

    def rows(self) -> list[TokenInfo]:
        if not self.path.exists():
            return []
        with self._db(create=False) as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM tokens ORDER BY created_at, id").fetchall()
        return [_info(row) for row in rows]

    def revoke_id(self, token_id: str, revoked_at: str) -> list[TokenInfo]:
        return self._revoke("id", token_id, revoked_at)

    def revoke_user(self, user: str, revoked_at: str) -> list[TokenInfo]:
        return self._revoke("user", user, revoked_at)

    def _revoke(self, column: str, value: str, revoked_at: str) -> list[TokenInfo]:
        where = f"{column} = ? AND revoked_at IS NULL"
        with self._db(create=False) as conn:
            conn.execute("BEGIN IMMEDIATE")  # what is listed is what is revoked, whoever else writes
            rows = conn.execute(f"SELECT {_COLUMNS} FROM tokens WHERE {where}", (value,)).fetchall()
            conn.execute(f"UPDATE tokens SET revoked_at = ? WHERE {where}", (revoked_at, value))
            conn.execute("COMMIT")
        return [replace(_info(row), revoked_at=revoked_at) for row in rows]

    def find_active(self, token_hash: str) -> TokenInfo | None:
        if not self.path.exists():
            return None
        with self._db(create=False) as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM tokens WHERE hash = ? AND revoked_at IS NULL", (token_hash,)
            ).fetchone()
        return _info(row) if row else None

    def active_teams(self) -> list[tuple[str, tuple[str, ...]]]:
        if not self.path.exists():
            return []
        with self._db(create=False) as conn:
            rows = conn.execute("SELECT user, teams FROM tokens WHERE revoked_at IS NULL").fetchall()
        return [(user, tuple(json.loads(teams))) for user, teams in rows]


def _info(row: tuple[str, str, str, str, str | None]) -> TokenInfo:
    return TokenInfo(
        id=row[0], user=row[1], teams=tuple(json.loads(row[2])), created_at=row[3], revoked_at=row[4]
    )
