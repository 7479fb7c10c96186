"""Bearer tokens for the HTTP server: who a request comes from, and the teams they belong to.

A token is shown once, when created (``mcp-memory token create USER``); only its SHA-256 is kept, in
a small SQLite file of its own beside the memory database (``tokens.db``; ``MCP_MEMORY_TOKENS_PATH``
overrides it), created ``0600``. Every request looks its token up there, so a revoked token stops
working at once in every server process that shares the file, with no cache to go stale.

A user's teams are the union of the teams of their active tokens; two users are *teammates* when
they share one. The Scope of a request gets both (the engine decides visibility from them).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mcp_memory_core.errors import InvalidInputError, MemoryServerError
from mcp_memory_core.scope import validate_principal

TOKEN_PREFIX = "mcpm_"
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


class TokenStoreError(MemoryServerError):
    """The token file cannot be read or written."""


@dataclass(frozen=True)
class TokenInfo:
    """One token as listed (never its secret)."""

    id: str
    user: str
    teams: tuple[str, ...]
    created_at: str
    revoked_at: str | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenRegistry:
    """The token file. Cheap to construct; every method opens, uses and closes a connection."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @contextlib.contextmanager
    def _db(self, *, create: bool) -> Iterator[sqlite3.Connection]:
        if not self.path.exists():
            if not create:
                raise TokenStoreError(
                    f"No token file at {self.path}: create a token first with `mcp-memory token create USER`."
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

    # -- administration (the CLI) --------------------------------------------------------------------
    def create(self, user: str, teams: Iterable[str] = ()) -> tuple[str, TokenInfo]:
        """A new token for ``user`` in ``teams``: (the secret, shown once; what is stored about it)."""
        user = validate_principal(user)
        team_list = sorted({validate_principal(t, "team name") for t in teams})
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        info = TokenInfo(
            id=secrets.token_hex(4),
            user=user,
            teams=tuple(team_list),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            revoked_at=None,
        )
        with self._db(create=True) as conn:
            conn.execute(
                "INSERT INTO tokens (id, hash, user, teams, created_at) VALUES (?, ?, ?, ?, ?)",
                (info.id, hash_token(token), user, json.dumps(team_list), info.created_at),
            )
        return token, info

    def tokens(self) -> list[TokenInfo]:
        if not self.path.exists():
            return []
        with self._db(create=False) as conn:
            rows = conn.execute(
                "SELECT id, user, teams, created_at, revoked_at FROM tokens ORDER BY created_at, id"
            ).fetchall()
        return [_info(row) for row in rows]

    def revoke(self, token_id: str | None = None, *, user: str | None = None) -> list[TokenInfo]:
        """Revoke one token by id, or every active token of ``user``. Returns what was revoked."""
        if (token_id is None) == (user is None):
            raise InvalidInputError("Revoke either one token id or every token of one --user.")
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self._db(create=False) as conn:
            if token_id is not None:
                where, arg = "id = ?", token_id.strip()
            else:
                where, arg = "user = ?", validate_principal(user or "")
            rows = conn.execute(
                f"SELECT id, user, teams, created_at, revoked_at FROM tokens WHERE {where} "
                "AND revoked_at IS NULL",
                (arg,),
            ).fetchall()
            conn.execute(f"UPDATE tokens SET revoked_at = ? WHERE {where} AND revoked_at IS NULL", (now, arg))
        if not rows and token_id is not None:
            raise InvalidInputError(f"No active token with id {token_id!r}. See `mcp-memory token list`.")
        return [_info(row) for row in rows]

    # -- requests (the HTTP server) --------------------------------------------------------------------
    def verify(self, token: str) -> TokenInfo | None:
        """The active token whose hash matches, or None."""
        if not token or not self.path.exists():
            return None
        with self._db(create=False) as conn:
            row = conn.execute(
                "SELECT id, user, teams, created_at, revoked_at FROM tokens "
                "WHERE hash = ? AND revoked_at IS NULL",
                (hash_token(token),),
            ).fetchone()
        return _info(row) if row else None

    def memberships(self, user: str) -> tuple[frozenset[str], frozenset[str]]:
        """(the teams of ``user``, the other users sharing one of them), from the active tokens."""
        with self._db(create=False) as conn:
            rows = conn.execute("SELECT user, teams FROM tokens WHERE revoked_at IS NULL").fetchall()
        teams_of: dict[str, set[str]] = {}
        for member, teams in rows:
            teams_of.setdefault(member, set()).update(json.loads(teams))
        mine = frozenset(teams_of.get(user, set()))
        mates = frozenset(m for m, t in teams_of.items() if m != user and t & mine)
        return mine, mates

    def has_active(self) -> bool:
        return any(t.active for t in self.tokens())


def _info(row: tuple[str, str, str, str, str | None]) -> TokenInfo:
    return TokenInfo(
        id=row[0], user=row[1], teams=tuple(json.loads(row[2])), created_at=row[3], revoked_at=row[4]
    )
