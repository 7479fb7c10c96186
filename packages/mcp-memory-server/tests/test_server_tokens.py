"""Bearer tokens: the token file passes the token-table suite (PostgreSQL's table passes the same one
in its plugin), the server and ``mcp-memory token …`` pick one place for tokens, and with
MCP_MEMORY_STORE=postgres the CLI writes to the database, not to a file."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner

from mcp_memory_core.errors import PluginError, UnknownBackendError
from mcp_memory_core.tokens import TokenRegistry, TokenStoreError, hash_token
from mcp_memory_postgres.tokens import TABLE, PostgresTokenTable
from mcp_memory_server.cli import cli
from mcp_memory_server.runtime.assembly import token_registry
from mcp_memory_server.runtime.settings import ServerSettings
from mcp_memory_server.runtime.tokens import SqliteTokenTable
from mcp_memory_testing.token_suite import TokenTableConformance


class TestSqliteTokenTable(TokenTableConformance):
    @pytest.fixture
    def make_table(self, tmp_path: Path) -> Callable[[], SqliteTokenTable]:
        return lambda: SqliteTokenTable(tmp_path / "data" / "tokens.db")


# -- the token file ---------------------------------------------------------------------------------
def test_the_token_file_is_private_and_holds_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "new" / "tokens.db"
    secret, _ = TokenRegistry(SqliteTokenTable(path)).create("alice", ["core"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert secret.encode() not in path.read_bytes() and b"alice" in path.read_bytes()


def test_a_request_reads_the_token_file_once_until_it_changes(tmp_path: Path) -> None:
    """Each HTTP request looks its token up (the auth check, then its Scope: the token again and the
    teams): answered from memory while the file is unchanged, read again once any process wrote it."""
    path = tmp_path / "tokens.db"
    server = TokenRegistry(SqliteTokenTable(path))
    admin = TokenRegistry(SqliteTokenTable(path))  # the CLI: another process, another connection
    alice, _ = admin.create("alice", ["core"])
    bob, _ = admin.create("bob", ["core"])
    reads: list[str] = []
    for name in ("find_active", "active_teams"):
        method = getattr(server.table, name)
        setattr(server.table, name, lambda *a, _m=method, _n=name: reads.append(_n) or _m(*a))
    for _ in range(3):
        info = server.verify(alice)
        assert info is not None and info.user == "alice"
        assert server.memberships("alice") == (frozenset({"core"}), frozenset({"bob"}))
    assert reads == ["find_active", "active_teams"]
    admin.revoke(user="bob")  # another process writes: both answers are read again
    assert server.memberships("alice") == (frozenset({"core"}), frozenset())
    assert server.verify(bob) is None
    assert server.verify(alice) is not None
    assert reads[2:] == ["active_teams", "find_active", "find_active"]


def test_a_revoked_token_stops_working_at_once_with_the_cache(tmp_path: Path) -> None:
    path = tmp_path / "tokens.db"
    server = TokenRegistry(SqliteTokenTable(path))
    admin = TokenRegistry(SqliteTokenTable(path))
    alice, info = admin.create("alice")
    assert server.verify(alice) is not None and server.verify(alice) is not None
    admin.revoke(info.id)
    assert server.verify(alice) is None
    again, _ = admin.create("alice")
    assert server.verify(again) is not None
    path.unlink()  # the file deleted (every token with it), then a new one made
    assert server.verify(again) is None
    fresh, _ = admin.create("carol")
    assert server.verify(again) is None and server.verify(fresh) is not None


def test_only_a_token_read_under_the_files_current_version_is_answered_from_memory(tmp_path: Path) -> None:
    """``verify_kept``: what the HTTP server answers on its event loop, without a table read."""
    path = tmp_path / "tokens.db"
    server = TokenRegistry(SqliteTokenTable(path))
    admin = TokenRegistry(SqliteTokenTable(path))
    alice, info = admin.create("alice")
    assert server.verify_kept(alice) is None  # never read: only the table can tell
    assert server.verify(alice) == info
    assert server.verify_kept(alice) == info
    assert server.verify_kept("mcpm_" + "x" * 43) is None and server.verify_kept("") is None
    admin.revoke(info.id)  # another process: the file's version moves
    assert server.verify_kept(alice) is None and server.verify(alice) is None


def test_reading_a_missing_token_file_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "tokens.db"
    registry = TokenRegistry(SqliteTokenTable(path))
    assert registry.tokens() == [] and registry.verify("mcpm_x") is None and not registry.has_active()
    assert registry.memberships("alice") == (frozenset(), frozenset())
    with pytest.raises(TokenStoreError, match=r"^No token file at .*tokens\.db: create a token first with"):
        registry.revoke(user="alice")
    assert not path.exists()


def test_a_damaged_token_file_is_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "tokens.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(TokenStoreError, match=r"^The token file .*tokens\.db cannot be used: "):
        TokenRegistry(SqliteTokenTable(path)).tokens()


# -- where tokens live ------------------------------------------------------------------------------
@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Callable[..., ServerSettings]]:
    """The server's settings from a clean MCP_MEMORY_* environment plus the given variables."""
    for name in [n for n in os.environ if n.startswith("MCP_MEMORY_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(tmp_path / "data" / "memories.db"))

    def settings(**variables: str) -> ServerSettings:
        for name, value in variables.items():
            monkeypatch.setenv(f"MCP_MEMORY_{name}", value)
        return ServerSettings()

    yield settings


def test_without_a_store_table_tokens_are_the_file_beside_the_database(
    env: Callable[..., ServerSettings], tmp_path: Path
) -> None:
    for store in ("sqlite-vec", "memory"):
        table = token_registry(env(STORE=store)).table
        assert isinstance(table, SqliteTokenTable)
        assert table.path == tmp_path / "data" / "tokens.db"


def test_postgres_keeps_tokens_in_its_database(env: Callable[..., ServerSettings]) -> None:
    settings = env(STORE="postgres", DATABASE_URL="postgresql://mcp:s3cret@db.internal:5433/memory")
    registry = token_registry(settings)  # builds, connects nowhere
    assert isinstance(registry.table, PostgresTokenTable)
    assert registry.location == f"postgresql://mcp@db.internal:5433/memory (table {TABLE})"


def test_an_explicit_tokens_path_is_the_file_whatever_the_store(
    env: Callable[..., ServerSettings], tmp_path: Path
) -> None:
    settings = env(STORE="postgres", DATABASE_URL="postgresql://db/x", TOKENS_PATH=str(tmp_path / "t.db"))
    table = token_registry(settings).table
    assert isinstance(table, SqliteTokenTable) and table.path == tmp_path / "t.db"


def test_a_store_that_cannot_be_used_is_an_error_not_a_token_file(env: Callable[..., ServerSettings]) -> None:
    with pytest.raises(UnknownBackendError, match="'postgress' is not recognized"):
        token_registry(env(STORE="postgress"))
    with pytest.raises(PluginError, match="MCP_MEMORY_STORE=postgres needs MCP_MEMORY_DATABASE_URL"):
        token_registry(env(STORE="postgres"))
    with pytest.raises(PluginError, match="token table 'postgres': MCP_MEMORY_POSTGRES_POOL_SIZE"):
        token_registry(env(STORE="postgres", DATABASE_URL="postgresql://db/x", POSTGRES_POOL_SIZE="1"))


# -- the CLI ----------------------------------------------------------------------------------------
def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, env=env)


def pg_tokens(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            f"SELECT id, username, teams, revoked_at IS NULL FROM {TABLE} ORDER BY id"
        ).fetchall()


def test_token_commands_with_the_postgres_store_use_the_database(
    env: Callable[..., ServerSettings], postgres_url: str, tmp_path: Path
) -> None:
    env(STORE="postgres", DATABASE_URL=postgres_url)
    created = run("token", "create", "alice", "--team", "core")
    assert created.exit_code == 0, created.output
    secret = created.stdout.strip()
    assert secret.startswith("mcpm_") and "\n" not in secret
    assert f"(table {TABLE})" in created.stderr and "kept in postgresql://" in created.stderr
    bob = run("token", "create", "bob")
    listed = json.loads(run("token", "list", "--json").stdout)
    assert {(t["user"], tuple(t["teams"]), t["active"]) for t in listed} == {
        ("alice", ("core",), True),
        ("bob", (), True),
    }
    alice_id = next(t["id"] for t in listed if t["user"] == "alice")
    assert sorted(pg_tokens(postgres_url)) == sorted((t["id"], t["user"], t["teams"], True) for t in listed)
    with psycopg.connect(postgres_url) as conn:  # only the hash is kept
        dumped = str(conn.execute(f"SELECT * FROM {TABLE}").fetchall())
    assert secret not in dumped and bob.stdout.strip() not in dumped

    human = run("token", "list")
    assert [line.split()[:2] for line in human.stdout.splitlines()] == [[t["id"], t["user"]] for t in listed]
    assert "Tokens in postgresql://postgres@127.0.0.1:" in human.stderr
    revoked = run("token", "revoke", alice_id)
    assert revoked.exit_code == 0 and revoked.stdout.strip() == f"Revoked 1 token(s): {alice_id}"
    assert [row[3] for row in pg_tokens(postgres_url) if row[0] == alice_id] == [False]
    assert run("token", "revoke", "--user", "bob").stdout.strip().startswith("Revoked 1 token(s): ")
    assert [t["user"] for t in json.loads(run("token", "list", "--json").stdout)] == []
    assert len(json.loads(run("token", "list", "--all", "--json").stdout)) == 2
    assert not list(tmp_path.rglob("tokens.db"))  # no file anywhere


def test_tokens_path_forces_the_file_with_the_postgres_store(
    env: Callable[..., ServerSettings], postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "forced" / "tokens.db"
    env(STORE="postgres", DATABASE_URL=postgres_url, TOKENS_PATH=str(path))
    created = run("token", "create", "alice")
    assert created.exit_code == 0 and f"kept in {path}." in created.stderr
    assert [t.user for t in TokenRegistry(SqliteTokenTable(path)).tokens()] == ["alice"]
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone() == (None,)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://mcp:pw-s3cret@127.0.0.1:1/memory",  # nothing listens on port 1
        "postgresql://mcp:pw-s3cret@127.0.0.1:notaport/memory",
        "host=127.0.0.1 port=1 password=pw-s3cret dbname",  # not a connection string
    ],
)
def test_a_bad_database_url_is_one_sentence_without_the_password(
    env: Callable[..., ServerSettings], url: str
) -> None:
    env(STORE="postgres", DATABASE_URL=url)
    for args in (("token", "list"), ("token", "create", "alice"), ("token", "revoke", "--user", "alice")):
        result = run(*args)
        assert result.exit_code == 1, result.output
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mcp-memory: error: Cannot "), result.stderr
        assert "PostgreSQL at postgresql://" in lines[0] and lines[0].endswith(".")
        assert "pw-s3cret" not in result.stderr and "Traceback" not in result.stderr


def test_plugins_marks_the_token_table_in_use(env: Callable[..., ServerSettings], tmp_path: Path) -> None:
    def token_table_row(**variables: str) -> dict[str, Any]:
        env(**variables)
        rows = json.loads(run("plugins", "--json").stdout)["backends"]
        return next(r for r in rows if (r["kind"], r["name"]) == ("token-table", "postgres"))

    assert token_table_row(STORE="sqlite-vec")["selected"] is False
    row = token_table_row(STORE="postgres", DATABASE_URL="postgresql://db/x")
    assert row["selected"] is True and row["package"] == "mcp-memory-postgres"
    assert token_table_row(TOKENS_PATH=str(tmp_path / "t.db"))["selected"] is False


class ScriptedTable(SqliteTokenTable):
    """The token file, with the versions its readers see and the answer of one lookup scripted."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.versions: list[object] = []
        self.stale_answers: list[Any] = []

    def version(self) -> Any:
        return self.versions.pop(0) if self.versions else super().version()

    def find_active(self, token_hash: str) -> Any:
        return self.stale_answers.pop(0) if self.stale_answers else super().find_active(token_hash)


def test_a_slow_lookup_of_an_older_version_never_answers_a_newer_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """C sees the file after a revocation; between C's version read and C's look into the cache, a
    slower lookup that read the version (and the file) before the revocation resets the cache to that
    older version and keeps its answer there. C must not take it: a lookup uses only what was kept
    under the version it read itself."""
    table = ScriptedTable(tmp_path / "tokens.db")
    registry = TokenRegistry(table)
    alice, info = registry.create("alice")
    before = table.version()
    active = table.find_active(hash_token(alice))
    registry.revoke(info.id)
    current = registry._current_version

    def interleaved() -> Any:
        seen = current()  # C: the version after the revocation (the cache is emptied for it)
        if not table.versions:  # only around C's own lookup
            table.versions.append(before)  # D/B's version read, from before the revocation
            table.stale_answers.append(active)  # and its read of the file, also from before
            monkeypatch.setattr(registry, "_current_version", current)
            registry.verify(alice)  # D/B: the cache goes back to `before` and keeps that answer
        return seen

    monkeypatch.setattr(registry, "_current_version", interleaved)
    assert registry.verify(alice) is None


# -- the person at the machine ----------------------------------------------------------------------
@pytest.mark.parametrize("variables", [{}, {"USER": "maya"}])
def test_token_create_without_a_name_is_for_the_user_the_cli_acts_as(
    env: Callable[..., ServerSettings], variables: dict[str, str]
) -> None:
    env(**variables)
    created = run("token", "create", "--json")
    assert created.exit_code == 0, created.output
    expected = variables.get("USER", "local")
    assert json.loads(created.stdout)["user"] == expected
    assert created.stderr == ""
    human = run("token", "create")
    assert human.exit_code == 0 and human.stdout.startswith("mcpm_")
    assert human.stderr.startswith("Created token ") and f" for {expected}, kept in " in human.stderr
    assert "another user" not in human.stderr


def test_a_token_for_another_name_says_in_one_line_it_is_another_user(
    env: Callable[..., ServerSettings],
) -> None:
    env()
    created = run("token", "create", "maya", "--team", "core")
    assert created.exit_code == 0, created.output
    assert created.stdout.startswith("mcpm_") and created.stdout.count("\n") == 1  # scripts keep working
    note = [line for line in created.stderr.splitlines() if "another user" in line]
    assert note == [
        "Note: this token acts as maya, another user than the CLI, stdio and hooks (local), whose private "
        "memories it will not see; to be one user everywhere, set MCP_MEMORY_USER=maya or create "
        "the token without a name."
    ]
    as_json = run("token", "create", "maya", "--json")
    assert json.loads(as_json.stdout)["user"] == "maya" and note[0] in as_json.stderr
    same = run("token", "create", "maya", "--json", env={"MCP_MEMORY_USER": "maya"})
    assert same.exit_code == 0 and "another user" not in same.stderr
