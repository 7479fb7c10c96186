"""Bearer tokens for the HTTP server: who a request comes from, and the teams they belong to.

A token is shown once, when created (``mcp-memory token create [USER]``); only its SHA-256 is kept, in
a :class:`TokenTable`: a small SQLite file beside the memory database by default (the server's), or
a table in the store's own database when the store's plugin keeps one (PostgreSQL's
``mcp_memory.tokens``, registered through the ``mcp_memory_token_tables`` hook). Every request looks
its token up in the table, so a revoked token stops working at once in every server process that
reads the same table. A table that can tell cheaply whether anyone wrote it since
(:class:`VersionedTokenTable`: the token file) lets the registry answer from memory until then; a
table that cannot (PostgreSQL's) is read on every lookup.

A user's teams are the union of the teams of their active tokens; two users are *teammates* when
they share one. The Scope of a request gets both (the engine decides visibility from them).

:class:`TokenRegistry` holds the rules (names, secrets, which argument revokes what), once; a table
only stores and finds rows.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Protocol, cast, runtime_checkable

from .errors import InvalidInputError, MemoryServerError, UnavailableError
from .scope import validate_principal

TOKEN_PREFIX = "mcpm_"


class TokenStoreError(MemoryServerError):
    """The token table cannot be read or written (one sentence saying where and why)."""


class TokenStoreUnavailableError(TokenStoreError, UnavailableError):
    """The token table's database cannot be reached now: a request may be retried shortly (HTTP 503)."""


@dataclass(frozen=True)
class TokenInfo:
    """One token as listed (never its secret). Times are ISO 8601 in UTC, to the second."""

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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@runtime_checkable
class TokenTable(Protocol):
    """Where tokens persist: rows in, rows out, no rules. Every method reads or writes the table
    itself (nothing cached), and may be called from several threads at once. Errors are
    :class:`TokenStoreError`; :class:`TokenStoreUnavailableError` when its database cannot be
    reached now (the HTTP server then answers 503, not 500)."""

    @property
    def location(self) -> str:
        """Where the tokens live, for messages: a path, or a URL without its password."""
        ...

    def insert(self, info: TokenInfo, token_hash: str) -> None:
        """Store a new active token."""
        ...

    def rows(self) -> list[TokenInfo]:
        """Every token, revoked ones too, oldest first (then by id)."""
        ...

    def revoke_id(self, token_id: str, revoked_at: str) -> list[TokenInfo]:
        """Revoke the token ``token_id`` if it is active; return it as revoked (or nothing)."""
        ...

    def revoke_user(self, user: str, revoked_at: str) -> list[TokenInfo]:
        """Revoke every active token of ``user``; return them as revoked."""
        ...

    def find_active(self, token_hash: str) -> TokenInfo | None:
        """The active token with this hash, or None."""
        ...

    def active_teams(self) -> list[tuple[str, tuple[str, ...]]]:
        """(user, teams) of every active token."""
        ...

    def close(self) -> None:
        """Release connections (a table may be used again afterwards, reconnecting)."""
        ...


@runtime_checkable
class VersionedTokenTable(TokenTable, Protocol):
    """A token table that can tell, cheaply, whether it changed: the registry then keeps what it
    read until the version moves."""

    def version(self) -> Hashable | None:
        """A value that differs from every earlier one once any process wrote the table (a token
        created or revoked, the table replaced); None when it cannot tell now (nothing is kept)."""
        ...


MAX_CACHED_TOKENS = 1024  # active tokens kept per version (a wrong token is never kept)


class TokenRegistry:
    """The tokens of the HTTP server, on top of a :class:`TokenTable`. Cheap to construct."""

    def __init__(self, table: TokenTable) -> None:
        self.table = table
        # Checked once: an isinstance check on a protocol costs tens of µs, and a request asks twice.
        self._versioned = isinstance(table, VersionedTokenTable)
        self._cache_lock = threading.Lock()
        self._cached_version: Hashable | None = None
        self._active: dict[str, TokenInfo] = {}  # token hash -> its active token
        self._teams: list[tuple[str, tuple[str, ...]]] | None = None

    @property
    def location(self) -> str:
        """Where the tokens live (for messages)."""
        return self.table.location

    def close(self) -> None:
        self.table.close()

    def __enter__(self) -> TokenRegistry:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    # -- administration (the CLI) --------------------------------------------------------------------
    def create(self, user: str, teams: Iterable[str] = ()) -> tuple[str, TokenInfo]:
        """A new token for ``user`` in ``teams``: (the secret, shown once; what is stored about it)."""
        user = validate_principal(user)
        team_list = sorted({validate_principal(t, "team name") for t in teams})
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        info = TokenInfo(
            id=secrets.token_hex(4), user=user, teams=tuple(team_list), created_at=_now(), revoked_at=None
        )
        self.table.insert(info, hash_token(token))
        self._forget()
        return token, info

    def tokens(self) -> list[TokenInfo]:
        return self.table.rows()

    def revoke(self, token_id: str | None = None, *, user: str | None = None) -> list[TokenInfo]:
        """Revoke one token by id, or every active token of ``user``. Returns what was revoked."""
        if (token_id is None) == (user is None):
            raise InvalidInputError("Revoke either one token id or every token of one --user.")
        self._forget()  # before and after: nothing read meanwhile outlives the revocation
        try:
            if token_id is None:
                return self.table.revoke_user(validate_principal(user or ""), _now())
            revoked = self.table.revoke_id(token_id.strip(), _now())
        finally:
            self._forget()
        if not revoked:
            raise InvalidInputError(f"No active token with id {token_id!r}. See `mcp-memory token list`.")
        return revoked

    # -- requests (the HTTP server) --------------------------------------------------------------------
    def verify(self, token: str) -> TokenInfo | None:
        """The active token whose hash matches, or None."""
        if not token:
            return None
        token_hash = hash_token(token)
        version, found = self._kept(token_hash)
        if found is not None:
            return found
        found = self.table.find_active(token_hash)
        if found is not None and version is not None:
            with self._cache_lock:
                if self._cached_version == version and len(self._active) < MAX_CACHED_TOKENS:
                    self._active[token_hash] = found
        return found

    def verify_kept(self, token: str) -> TokenInfo | None:
        """:meth:`verify`'s answer when it is kept from a read of the table's current version (the
        version check only: a ``stat`` and a ``PRAGMA``, no table read); None when only the table can
        tell (then call :meth:`verify`). What a revocation changed is never answered from memory."""
        return self._kept(hash_token(token))[1] if token else None

    def _kept(self, token_hash: str) -> tuple[Hashable | None, TokenInfo | None]:
        """(the table's current version, the active token of ``token_hash`` kept for it or None)."""
        version = self._current_version()
        with self._cache_lock:  # only what was read under the version this call saw
            kept = version is not None and self._cached_version == version
            return version, self._active.get(token_hash) if kept else None

    def _active_teams(self) -> list[tuple[str, tuple[str, ...]]]:
        version = self._current_version()
        with self._cache_lock:
            if version is not None and self._cached_version == version and self._teams is not None:
                return self._teams
        teams = self.table.active_teams()
        if version is not None:
            with self._cache_lock:
                if self._cached_version == version:
                    self._teams = teams
        return teams

    def _forget(self) -> None:
        with self._cache_lock:
            self._cached_version, self._active, self._teams = None, {}, None

    def _current_version(self) -> Hashable | None:
        """The table's version, read before the table itself (so what is read then is at least as
        new as it); what was kept for an older version is dropped."""
        if not self._versioned:
            return None
        version = cast(VersionedTokenTable, self.table).version()
        with self._cache_lock:
            if version is None or version != self._cached_version:
                self._cached_version, self._active, self._teams = version, {}, None
        return version

    def memberships(self, user: str) -> tuple[frozenset[str], frozenset[str]]:
        """(the teams of ``user``, the other users sharing one of them), from the active tokens."""
        teams_of: dict[str, set[str]] = {}
        for member, teams in self._active_teams():
            teams_of.setdefault(member, set()).update(teams)
        mine = frozenset(teams_of.get(user, set()))
        mates = frozenset(m for m, t in teams_of.items() if m != user and t & mine)
        return mine, mates

    def has_active(self) -> bool:
        return any(t.active for t in self.tokens())
