"""The HTTP server's bearer tokens in PostgreSQL: the token-table suite (the same tests the server's
token file passes) against a real database, and what only a shared database has: the table created
while a store creates the schema, only hashes stored, errors without the password, the hook."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from mcp_memory_core import MemoryFilter, PluginManager, Settings, TokenTableSpec
from mcp_memory_core.errors import PluginError
from mcp_memory_core.tokens import TokenRegistry, TokenStoreError
from mcp_memory_postgres import PostgresStore, plugin
from mcp_memory_postgres.tokens import TABLE, PostgresTokenTable
from mcp_memory_testing.token_suite import TokenTableConformance


class TestPostgresTokenTable(TokenTableConformance):
    @pytest.fixture
    def make_table(self, postgres_url: str) -> Callable[[], PostgresTokenTable]:
        return lambda: PostgresTokenTable(postgres_url)


def test_tokens_and_a_store_starting_at_once_share_the_schema(postgres_url: str) -> None:
    """The first token and the first server on a fresh database create the ``mcp_memory`` schema at
    the same moment: they take turns under one advisory lock, and both work."""
    store, registry = PostgresStore(postgres_url), TokenRegistry(PostgresTokenTable(postgres_url))
    start = threading.Barrier(2)

    def open_store() -> None:
        start.wait()
        store.open("test-model", 8)

    def first_token() -> str:
        start.wait()
        return registry.create("alice", ["core"])[0]

    try:
        with ThreadPoolExecutor(2) as pool:
            opened, created = pool.submit(open_store), pool.submit(first_token)
            opened.result()
            secret = created.result()
        assert registry.verify(secret) is not None
        assert store.count(MemoryFilter(namespace=None)) == 0
    finally:
        store.close()
        registry.close()


def test_only_the_hash_is_stored_and_the_columns_are_typed(postgres_url: str) -> None:
    with TokenRegistry(PostgresTokenTable(postgres_url)) as registry:
        secret, info = registry.create("alice", ["core", "ops"])
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(f"SELECT * FROM {TABLE}").fetchall()
        types = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'mcp_memory' AND table_name = 'tokens'"
            ).fetchall()
        )
    assert secret not in str(rows) and len(rows) == 1
    assert rows[0][2:4] == ("alice", ["core", "ops"])
    assert types == {
        "id": "text",
        "hash": "text",
        "username": "text",
        "teams": "ARRAY",
        "created_at": "timestamp with time zone",
        "revoked_at": "timestamp with time zone",
    }
    assert info.created_at.endswith("+00:00")


def test_a_closed_table_reconnects(postgres_url: str) -> None:
    table = PostgresTokenTable(postgres_url)
    registry = TokenRegistry(table)
    secret, _ = registry.create("alice")
    registry.close()
    try:
        assert registry.verify(secret) is not None
    finally:
        registry.close()


def test_location_never_shows_the_password() -> None:
    table = PostgresTokenTable("postgresql://mcp:pw-s3cret@db.internal:5433/memory")
    assert table.location == f"postgresql://mcp@db.internal:5433/memory (table {TABLE})"
    assert "pw-s3cret" not in repr(table)


def test_an_unreachable_database_is_one_sentence_without_the_password() -> None:
    refused = "postgresql://mcp:pw-s3cret@127.0.0.1:1/memory"
    for call in (
        lambda r: r.tokens(),
        lambda r: r.create("alice"),
        lambda r: r.verify("mcpm_x"),
        lambda r: r.revoke("abc"),
        lambda r: r.memberships("alice"),
    ):
        with pytest.raises(TokenStoreError) as info:
            call(TokenRegistry(PostgresTokenTable(refused)))
        message = str(info.value)
        assert message.startswith("Cannot ") and message.endswith(".") and "\n" not in message
        assert "postgresql://mcp@127.0.0.1:1/memory" in message and "pw-s3cret" not in message


def test_a_password_libpq_echoes_is_hidden() -> None:
    bad_port = "postgresql://mcp:pw-s3cret@127.0.0.1:notaport/memory"
    with pytest.raises(TokenStoreError, match="notaport") as info:
        TokenRegistry(PostgresTokenTable(bad_port)).tokens()
    assert "pw-s3cret" not in str(info.value)
    garbled = "host=127.0.0.1 password=pw-s3cret dbname"
    with pytest.raises(TokenStoreError, match="not a valid PostgreSQL URL") as info:
        TokenRegistry(PostgresTokenTable(garbled)).tokens()
    assert "pw-s3cret" not in str(info.value)


def test_the_plugin_registers_the_token_table_for_its_store(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = PluginManager()
    manager.register(plugin, name="postgres")
    spec = manager.token_table("postgres")
    assert isinstance(spec, TokenTableSpec) and spec.settings_model is plugin.PostgresSettings
    assert manager.token_table("sqlite-vec") is None
    monkeypatch.setenv("MCP_MEMORY_DATABASE_URL", "postgresql://mcp:pw@db.internal/memory")
    table = spec.factory(Settings())  # the plugin reads its own settings (PostgresSettings)
    assert isinstance(table, PostgresTokenTable) and table.location.startswith(
        "postgresql://mcp@db.internal/"
    )
    monkeypatch.delenv("MCP_MEMORY_DATABASE_URL")
    with pytest.raises(PluginError, match="needs MCP_MEMORY_DATABASE_URL"):
        spec.factory(Settings())


def test_connections_that_died_with_a_restart_do_not_fail_a_lookup(postgres_url: str) -> None:
    """Every pooled connection is cut (as a database restart does): the next lookups, a request's
    token and teams, go through on fresh connections instead of failing once per dead one."""
    table = PostgresTokenTable(postgres_url)
    registry = TokenRegistry(table)
    try:
        secret, _ = registry.create("alice", ["core"])
        with ThreadPoolExecutor(4) as pool:  # the pool holds several connections, all idle now
            assert all(pool.map(lambda _: registry.verify(secret) is not None, range(16)))
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            cut = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        assert cut is not None and cut[0] >= 1
        assert registry.verify(secret) is not None
        assert registry.memberships("alice") == (frozenset({"core"}), frozenset())
        assert [t.user for t in registry.tokens()] == ["alice"]
    finally:
        registry.close()
