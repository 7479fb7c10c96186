"""TokenTableConformance: the HTTP server's bearer tokens (core's ``TokenRegistry``) on any
``TokenTable``. Subclass it and provide a ``make_table`` fixture.

Example::

    import pytest
    from mcp_memory_testing.token_suite import TokenTableConformance

    class TestMyTokenTable(TokenTableConformance):
        @pytest.fixture
        def make_table(self, tmp_path):
            # each call: a NEW table object on the same, initially EMPTY, storage (another server)
            return lambda: MyTokenTable(tmp_path / "tokens")

The suite closes every table it made after each test. The same tests run for the server's token file
and for PostgreSQL's table, so both keep the same rules and the same messages.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from mcp_memory_core.errors import InvalidInputError
from mcp_memory_core.tokens import TOKEN_PREFIX, TokenInfo, TokenRegistry, TokenTable

from .guard import OverrideGuard

MakeTable = Callable[[], TokenTable]


def teams_and_mates(teams: set[str], mates: set[str]) -> tuple[frozenset[str], frozenset[str]]:
    """What ``TokenRegistry.memberships`` answers."""
    return frozenset(teams), frozenset(mates)


NOBODY = teams_and_mates(set(), set())


class TokenTableConformance(OverrideGuard):
    """Subclass and override ``make_table``: a callable returning a new table object on the same,
    initially EMPTY, storage every time it is called (one object per simulated server)."""

    @pytest.fixture
    def make_table(self) -> MakeTable:
        raise NotImplementedError("Override `make_table`: each call a new table on the same empty storage.")

    @pytest.fixture
    def tables(self, make_table: MakeTable) -> Iterator[Callable[[], TokenRegistry]]:
        """Registries over new tables on the test's storage; every one closed afterwards."""
        made: list[TokenRegistry] = []

        def registry() -> TokenRegistry:
            made.append(TokenRegistry(make_table()))
            return made[-1]

        yield registry
        for one in made:
            one.close()

    @pytest.fixture
    def registry(self, tables: Callable[[], TokenRegistry]) -> TokenRegistry:
        return tables()

    # -- the protocol ------------------------------------------------------------------------------
    def test_implements_protocol(self, make_table: MakeTable) -> None:
        """Troubleshooting: a token table needs every member of ``mcp_memory_core.tokens.TokenTable``
        (location, insert, rows, revoke_id, revoke_user, find_active, active_teams, close), and
        ``location`` must work before the table is used (the server logs it at start)."""
        table = make_table()
        try:
            assert isinstance(table, TokenTable)
            assert isinstance(table.location, str) and table.location
        finally:
            table.close()

    def test_a_new_table_holds_no_token(self, registry: TokenRegistry) -> None:
        """Troubleshooting: ``make_table`` must return a table on EMPTY storage (a fresh file or database
        per test); reading a table nobody wrote yet is no error: no rows, no token, no teams."""
        assert registry.tokens() == []
        assert registry.has_active() is False
        assert registry.verify(TOKEN_PREFIX + "not-a-real-token") is None
        assert registry.memberships("alice") == NOBODY

    # -- create and verify -------------------------------------------------------------------------
    def test_a_created_token_verifies_and_is_listed(self, registry: TokenRegistry) -> None:
        """Troubleshooting: ``insert`` must keep the info as given (id, user, teams in order, the time)
        and ``find_active`` must find it by the hash the registry passes; times come back as ISO 8601
        in UTC, to the second (convert a database's timestamp type back)."""
        before = datetime.now(UTC).replace(microsecond=0)
        secret, info = registry.create("alice", ["ops", "core", "core"])
        assert secret.startswith(TOKEN_PREFIX) and len(secret) > 40
        assert (info.user, info.teams, info.revoked_at) == ("alice", ("core", "ops"), None)
        assert before <= datetime.fromisoformat(info.created_at) <= before + timedelta(seconds=5)
        assert datetime.fromisoformat(info.created_at).utcoffset() == timedelta(0)
        assert registry.verify(secret) == info
        assert registry.tokens() == [info]
        assert registry.has_active() is True

    def test_only_the_exact_secret_verifies(self, registry: TokenRegistry) -> None:
        """Troubleshooting: look a token up by its hash only, never by a prefix or by the id; an empty
        token is refused without a query."""
        secret, info = registry.create("alice")
        for wrong in ("", secret[:-1], secret + "x", secret.upper(), info.id, TOKEN_PREFIX):
            assert registry.verify(wrong) is None, wrong
        assert registry.verify(secret) == info

    def test_names_are_checked_before_anything_is_stored(self, registry: TokenRegistry) -> None:
        """Troubleshooting: the registry validates user and team names before calling ``insert``; a
        table must not need to."""
        for user, teams in (("", ()), ("has space", ()), ("alice", ("core", "no/slash"))):
            with pytest.raises(InvalidInputError, match="is not a valid"):
                registry.create(user, teams)
        assert registry.tokens() == []

    def test_tokens_are_listed_oldest_first(self, registry: TokenRegistry) -> None:
        """Troubleshooting: ``rows`` orders by created_at, then id, and includes revoked tokens."""
        infos = [registry.create(f"user{n}")[1] for n in range(5)]
        registry.revoke(infos[2].id)
        listed = registry.tokens()
        assert [t.id for t in listed] == [t.id for t in sorted(infos, key=lambda t: (t.created_at, t.id))]
        assert [t.active for t in listed if t.id == infos[2].id] == [False]

    # -- teams ---------------------------------------------------------------------------------------
    def test_memberships_come_from_active_tokens(self, registry: TokenRegistry) -> None:
        """Troubleshooting: ``active_teams`` returns (user, teams) for every active token and nothing for
        revoked ones; a user's teams are the union over their tokens."""
        registry.create("alice", ["core"])
        _, infra = registry.create("alice", ["infra"])
        registry.create("bob", ["core", "ops"])
        registry.create("carol", ["ops"])
        registry.create("dave")
        assert registry.memberships("alice") == teams_and_mates({"core", "infra"}, {"bob"})
        assert registry.memberships("bob") == teams_and_mates({"core", "ops"}, {"alice", "carol"})
        assert registry.memberships("dave") == NOBODY
        assert registry.memberships("erin") == NOBODY
        registry.revoke(infra.id)
        assert registry.memberships("alice") == teams_and_mates({"core"}, {"bob"})
        registry.revoke(user="bob")
        assert registry.memberships("alice") == teams_and_mates({"core"}, set())
        assert registry.memberships("carol") == teams_and_mates({"ops"}, set())

    # -- revoke --------------------------------------------------------------------------------------
    def test_a_token_revoked_by_id_is_refused_at_once(self, registry: TokenRegistry) -> None:
        """Troubleshooting: ``revoke_id`` sets revoked_at on the active row with that id and returns it
        as revoked; ``find_active`` must not find it any more (no cache)."""
        secret, info = registry.create("alice", ["core"])
        other, _ = registry.create("alice")
        revoked = registry.revoke(f"  {info.id} ")
        assert [(t.id, t.user, t.teams, t.created_at) for t in revoked] == [
            (info.id, "alice", ("core",), info.created_at)
        ]
        assert revoked[0].revoked_at is not None and not revoked[0].active
        assert registry.verify(secret) is None
        assert registry.verify(other) is not None
        assert [t for t in registry.tokens() if t.id == info.id] == revoked
        with pytest.raises(InvalidInputError, match=r"No active token with id .*`mcp-memory token list`"):
            registry.revoke(info.id)
        with pytest.raises(InvalidInputError, match="No active token with id 'nope'"):
            registry.revoke("nope")

    def test_revoking_a_user_revokes_each_of_their_active_tokens(self, registry: TokenRegistry) -> None:
        """Troubleshooting: ``revoke_user`` matches the user column exactly and returns every token it
        revoked; revoking a user with no active token returns nothing (no error)."""
        first, _ = registry.create("alice", ["core"])
        second, _ = registry.create("alice")
        bobs, bob = registry.create("bob", ["core"])
        registry.create("alice2")
        revoked = registry.revoke(user="alice")
        assert sorted(t.user for t in revoked) == ["alice", "alice"] and not any(t.active for t in revoked)
        assert registry.verify(first) is None and registry.verify(second) is None
        assert registry.verify(bobs) == bob
        assert registry.revoke(user="alice") == []
        assert {t.user for t in registry.tokens() if t.active} == {"bob", "alice2"}
        assert registry.has_active() is True
        registry.revoke(user="bob")
        registry.revoke(user="alice2")
        assert registry.has_active() is False

    def test_revoke_takes_one_id_or_one_user(self, registry: TokenRegistry) -> None:
        """Troubleshooting: these checks are the registry's (core); a table only sees valid calls."""
        registry.create("alice")
        with pytest.raises(
            InvalidInputError, match="Revoke either one token id or every token of one --user"
        ):
            registry.revoke()
        with pytest.raises(
            InvalidInputError, match="Revoke either one token id or every token of one --user"
        ):
            registry.revoke("abc", user="alice")
        with pytest.raises(InvalidInputError, match="is not a valid user name"):
            registry.revoke(user="not valid")
        assert registry.has_active() is True

    # -- several servers -----------------------------------------------------------------------------
    def test_two_servers_see_each_others_creates_and_revokes_at_once(
        self, tables: Callable[[], TokenRegistry]
    ) -> None:
        """Troubleshooting: two table objects on one storage are two servers; nothing may be cached in
        the object (a token, a team, the fact that a table exists)."""
        one, two = tables(), tables()
        assert two.tokens() == []
        secret, info = one.create("alice", ["core"])
        assert two.verify(secret) == info
        bobs, _ = two.create("bob", ["core"])
        assert one.verify(bobs) is not None
        assert one.memberships("alice") == teams_and_mates({"core"}, {"bob"}) == two.memberships("alice")
        two.revoke(info.id)
        assert one.verify(secret) is None
        assert one.memberships("bob") == teams_and_mates({"core"}, set())
        one.revoke(user="bob")
        assert two.verify(bobs) is None and two.has_active() is False
        assert {t.id for t in one.tokens()} == {t.id for t in two.tokens()}

    def test_servers_starting_at_once_create_the_table_once(
        self, tables: Callable[[], TokenRegistry]
    ) -> None:
        """Troubleshooting: the first use creates the storage; when several servers or CLIs do it at the
        same moment, exactly one may create it and the others must find it (take a lock, or create
        idempotently and retry), and no token may be lost."""
        servers = [tables() for _ in range(6)]
        start = threading.Barrier(len(servers))

        def first_use(n: int) -> tuple[str, TokenInfo]:
            start.wait()
            return servers[n].create(f"user{n}", ["core"])

        with ThreadPoolExecutor(len(servers)) as pool:
            made = list(pool.map(first_use, range(len(servers))))
        later = tables()
        assert sorted(t.id for t in later.tokens()) == sorted(info.id for _, info in made)
        for secret, info in made:
            assert later.verify(secret) == info

    def test_a_token_revoked_twice_at_once_is_revoked_once(self, tables: Callable[[], TokenRegistry]) -> None:
        """Troubleshooting: revoke with one statement (or one transaction) that changes only rows still
        active and returns exactly those: of two servers revoking one token at once, one revokes it and
        the other is told there is no active token with that id."""
        one, two = tables(), tables()
        start = threading.Barrier(2)

        def revoke(registry: TokenRegistry, token_id: str) -> str:
            start.wait()
            try:
                return f"revoked {len(registry.revoke(token_id))}"
            except InvalidInputError:
                return "none active"

        with ThreadPoolExecutor(2) as pool:
            for n in range(8):  # the race is short: run it several times
                _, info = one.create(f"user{n}")
                outcomes = sorted(pool.map(revoke, (one, two), (info.id, info.id)))
                assert outcomes == ["none active", "revoked 1"], n


TokenTableConformance._suite = TokenTableConformance
