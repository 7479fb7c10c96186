"""PostgresTokenTable: the HTTP server's bearer tokens in the store's own database.

With ``MCP_MEMORY_STORE=postgres`` (and no ``MCP_MEMORY_TOKENS_PATH``) ``mcp-memory token create``
writes to the table ``mcp_memory.tokens`` and every server reads it on every request, so a token
created or revoked on one machine counts at once on every server of the database, with no shared
file. Only SHA-256 hashes are stored, as in the token file::

    tokens(id, hash UNIQUE, username, teams text[], created_at, revoked_at timestamptz)

(``username``: ``user`` is a reserved word in PostgreSQL; ``SELECT user`` is the session's role.)

The table is created on first use, under the advisory lock the store's migrations take: servers and
CLIs starting at once take turns with each other and with the store creating the schema, and the
later ones find the work done. Using it never opens the store: no vector extension, no model.
Connections come from a pool of at most four (a request checks its token and its teams: two short
queries, 0.7 ms together on this machine's loopback), opened on first use; the first connection is
made directly, so a wrong URL fails at once. Pooled connections are not checked before use (that
doubled the cost): after a database restart, a read that finds its connection dead with it is
made again on the next one (the pool drops the dead), so no request fails for a stale connection.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from mcp_memory_core.tokens import TokenInfo, TokenStoreError, TokenStoreUnavailableError

from .schema import MIGRATION_LOCK, SCHEMA
from .store import redact

TABLE = f"{SCHEMA}.tokens"
POOL_SIZE = 4
# Seconds a request waits for a free connection. Checking a token takes two short queries, so a
# longer wait means the database is gone: the request is refused with 503 while clients still listen.
POOL_WAIT = 5.0
_COLUMNS = "id, username, teams, created_at, revoked_at"
_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {TABLE} ("
    " id text PRIMARY KEY,"
    " hash text NOT NULL UNIQUE,"
    " username text NOT NULL,"
    " teams text[] NOT NULL DEFAULT '{}',"
    " created_at timestamptz NOT NULL,"
    " revoked_at timestamptz)"
)


class PostgresTokenTable:
    """The ``mcp_memory.tokens`` table of the database at ``url`` (a libpq URL or connection string).
    Cheap to construct; connects on first use; thread-safe."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._location = f"{redact(url)} (table {TABLE})"
        self._pool: Any = None
        self._lock = threading.Lock()

    @property
    def location(self) -> str:
        return self._location

    def __repr__(self) -> str:
        return f"PostgresTokenTable({self._location!r})"

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    # -- connections -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def _connection(self, doing: str) -> Iterator[Any]:
        """A pooled connection (autocommit); any database error as one sentence saying where."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._open().connection(timeout=POOL_WAIT) as conn:
                yield conn
        except (psycopg.Error, PoolTimeout) as exc:
            # The server down or restarting (or no connection free in time): a request may retry.
            unavailable = isinstance(exc, psycopg.OperationalError | PoolTimeout)
            raise (TokenStoreUnavailableError if unavailable else TokenStoreError)(
                f"Cannot {doing} the tokens in PostgreSQL at {self._location}: {self._reason(exc)}."
            ) from None

    def _open(self) -> Any:
        with self._lock:
            if self._pool is None:
                import psycopg
                from psycopg_pool import ConnectionPool

                with psycopg.connect(self._url, autocommit=True) as conn:
                    _create_table(conn)
                pool = ConnectionPool(
                    self._url,
                    min_size=1,
                    max_size=POOL_SIZE,
                    kwargs={"autocommit": True},
                    open=False,
                    name="mcp-memory-tokens",
                )
                pool.open(wait=True, timeout=30)
                self._pool = pool
            return self._pool

    def _reason(self, exc: Exception) -> str:
        """The first line of ``exc``, without the password (libpq may quote the URL it cannot parse)."""
        from psycopg.conninfo import conninfo_to_dict

        first = str(exc).strip().splitlines()[0].rstrip(".") if str(exc).strip() else type(exc).__name__
        try:
            password = conninfo_to_dict(self._url).get("password")
        except Exception:
            return "MCP_MEMORY_DATABASE_URL is not a valid PostgreSQL URL or connection string"
        return first.replace(str(password), "***") if password else first

    # -- the TokenTable protocol -----------------------------------------------------------------
    def insert(self, info: TokenInfo, token_hash: str) -> None:
        with self._connection("store") as conn:
            conn.execute(
                f"INSERT INTO {TABLE} (id, hash, username, teams, created_at) VALUES (%s, %s, %s, %s, %s)",
                (info.id, token_hash, info.user, list(info.teams), _time(info.created_at)),
            )

    def _read(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a read. A pooled connection that died since its last use (the database
        restarted) fails at once: the read is made again on the next one, once per connection the
        pool may hold; a database that is down fails as unavailable."""
        import psycopg

        for _ in range(POOL_SIZE):
            with self._connection("read") as conn:
                try:
                    return list(conn.execute(query, params).fetchall())
                except psycopg.OperationalError:
                    if not conn.broken:
                        raise
            # the pool throws the broken connection away on its return: try the next
        with self._connection("read") as conn:
            return list(conn.execute(query, params).fetchall())

    def rows(self) -> list[TokenInfo]:
        rows = self._read(f"SELECT {_COLUMNS} FROM {TABLE} ORDER BY created_at, id")
        return [_info(row) for row in rows]

    def revoke_id(self, token_id: str, revoked_at: str) -> list[TokenInfo]:
        return self._revoke("id", token_id, revoked_at)

    def revoke_user(self, user: str, revoked_at: str) -> list[TokenInfo]:
        return self._revoke("username", user, revoked_at)

    def _revoke(self, column: str, value: str, revoked_at: str) -> list[TokenInfo]:
        with self._connection("revoke") as conn:
            rows = conn.execute(
                f"UPDATE {TABLE} SET revoked_at = %s WHERE {column} = %s AND revoked_at IS NULL "
                f"RETURNING {_COLUMNS}",
                (_time(revoked_at), value),
            ).fetchall()
        return sorted((_info(row) for row in rows), key=lambda t: (t.created_at, t.id))

    def find_active(self, token_hash: str) -> TokenInfo | None:
        rows = self._read(
            f"SELECT {_COLUMNS} FROM {TABLE} WHERE hash = %s AND revoked_at IS NULL", (token_hash,)
        )
        return _info(rows[0]) if rows else None

    def active_teams(self) -> list[tuple[str, tuple[str, ...]]]:
        rows = self._read(f"SELECT username, teams FROM {TABLE} WHERE revoked_at IS NULL")
        return [(str(user), tuple(teams)) for user, teams in rows]


def _create_table(conn: Any) -> None:
    """Create the schema and the table unless they exist: under the store's migration lock, so two
    first users (or a first user and the store's first start) never race on the catalog."""
    if conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()[0] is not None:
        return
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        conn.execute(_CREATE)


def _time(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat(timespec="seconds") if value is not None else None


def _info(row: tuple[Any, ...]) -> TokenInfo:
    created = _iso(row[3])
    assert created is not None
    return TokenInfo(
        id=str(row[0]), user=str(row[1]), teams=tuple(row[2]), created_at=created, revoked_at=_iso(row[4])
    )
