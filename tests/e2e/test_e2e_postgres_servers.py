"""Two HTTP servers on one PostgreSQL database, as a team runs them behind a load balancer.

The tokens are created with `mcp-memory token create` into the database itself (no
MCP_MEMORY_TOKENS_PATH, each server and the CLI with a data directory of their own: no file is
shared). Twenty real MCP SDK clients (four users: alice and bob share the team "core", carol and
dave are in none) connect at once, each to one of the two servers, and store private, team and
public memories. Then every client reads each of its acknowledged writes back through the OTHER
server, by id and by search, and every user lists what they can see through both servers: a private
memory reaches only its owner, a team memory only teammates, a public one everybody; no call fails.
Finally a token revoked through the CLI is refused by both servers at once, and a wrong token too.

The servers scan exactly only up to 20 vectors (``MCP_MEMORY_POSTGRES_EXACT_ROWS``), so the vector
index gets built in the background while the clients write, and the reads go through it.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import anyio
import pytest
from e2e_helpers import create_token, http_server, module_command, server_env
from test_e2e_http_users import MISSING, call, cli, failure, post_initialize, session_as

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("default_plugins")]

USERS = {"alice": ("core",), "bob": ("core",), "carol": (), "dave": ()}
CLIENTS = 20
WRITES = 3  # per client: one private, one team, one public
SCOPES = ("private", "team", "public")


def may_read(reader: str, owner: str, scope: str) -> bool:
    if reader == owner or scope == "public":
        return True
    return scope == "team" and bool(set(USERS[reader]) & set(USERS[owner]))


async def test_two_servers_one_database_twenty_clients(postgres_url: str, tmp_path: Path) -> None:
    def env(machine: str) -> dict[str, str]:
        """One machine's environment: the shared database, a data directory of its own."""
        return server_env(
            tmp_path / machine / "unused.db",
            MCP_MEMORY_STORE="postgres",
            MCP_MEMORY_DATABASE_URL=postgres_url,
            MCP_MEMORY_POSTGRES_EXACT_ROWS="20",
        )

    admin = env("admin")
    tokens = {user: create_token(admin, user, *teams) for user, teams in USERS.items()}
    users = list(itertools.islice(itertools.cycle(USERS), CLIENTS))
    written: dict[str, tuple[str, str, str]] = {}  # id -> (owner, scope, content)
    errors: list[str] = []

    with (
        http_server(module_command(), env("a"), tmp_path / "a.err") as server_a,
        http_server(module_command(), env("b"), tmp_path / "b.err") as server_b,
    ):
        servers = [server_a, server_b]

        async def write(client: int) -> None:
            user = users[client]
            async with session_as(servers[client % 2], tokens[user]) as session:
                for n, scope in enumerate(SCOPES):
                    content = f"{user} note {client}-{n}: the {scope} code word is kw{client}x{n}"
                    result = await call(session, "store_memory", content=content, privacy_scope=scope)
                    if "id" not in result:
                        errors.append(f"client {client} store: {result}")
                        continue
                    written[result["id"]] = (user, scope, content)

        async with anyio.create_task_group() as tasks:
            for client in range(CLIENTS):
                tasks.start_soon(write, client)
        assert errors == []
        assert len(written) == CLIENTS * WRITES

        async def read_back(client: int) -> None:
            """This client's writes, through the server it did not write to."""
            user = users[client]
            mine = {i: w for i, w in written.items() if w[2].startswith(f"{user} note {client}-")}
            async with session_as(servers[(client + 1) % 2], tokens[user]) as session:
                for memory_id, (_, _, content) in mine.items():
                    got = await call(session, "get_memory", id=memory_id)
                    if got.get("content") != content:
                        errors.append(f"client {client}: get {memory_id} gave {got}")
                    code = content.rsplit(" ", 1)[1]
                    found = await call(session, "search_memories", query=f"code word {code}", limit=5)
                    if memory_id not in {r["id"] for r in found.get("results", [])}:
                        errors.append(f"client {client}: search for {code} missed {memory_id}: {found}")

        async with anyio.create_task_group() as tasks:
            for client in range(CLIENTS):
                tasks.start_soon(read_back, client)
        assert errors == []

        async def visible(user: str, server: str) -> set[str]:
            seen: set[str] = set()
            async with session_as(server, tokens[user]) as session:
                cursor: str | None = None
                while True:
                    args: dict[str, Any] = {"limit": 100}
                    if cursor:
                        args["cursor"] = cursor
                    page = await call(session, "list_memories", **args)
                    seen |= {m["id"] for m in page["memories"]}
                    cursor = page.get("next_cursor")
                    if not cursor:
                        return seen

        for user in USERS:
            allowed = {i for i, (owner, scope, _) in written.items() if may_read(user, owner, scope)}
            for server in servers:
                assert await visible(user, server) == allowed, (user, server)
            # another user's private memory answers exactly like a missing id, on both servers
            foreign = next(
                i for i, (owner, scope, _) in written.items() if owner != user and scope == "private"
            )
            for server in servers:
                async with session_as(server, tokens[user]) as session:
                    assert await failure(session, "get_memory", id=foreign) == await failure(
                        session, "get_memory", id=MISSING
                    )

        # a token revoked through the CLI is refused by both servers at once; the others still work
        def status(server: str, token: str) -> int:
            return int(post_initialize(server, {"Authorization": f"Bearer {token}"}).status_code)

        assert [status(server, tokens["carol"]) for server in servers] == [200, 200]
        revoked = cli(admin, "token", "revoke", "--user", "carol")
        assert revoked.returncode == 0 and revoked.stdout.startswith("Revoked 1 token(s): "), revoked.stderr
        assert [status(server, tokens["carol"]) for server in servers] == [401, 401]
        assert [status(server, tokens["alice"]) for server in servers] == [200, 200]
        assert [status(server, "mcpm_not-a-real-token") for server in servers] == [401, 401]
        public = next(i for i, (owner, scope, _) in written.items() if (owner, scope) == ("carol", "public"))
        async with session_as(server_b, tokens["bob"]) as session:  # what carol shared stays readable
            assert (await call(session, "get_memory", id=public))["content"] == written[public][2]

    # past 20 vectors one of the servers built the vector index (a server waits for its build as it stops)
    import psycopg

    from mcp_memory_postgres.vector_index import index_valid

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert index_valid(conn) is True
    # the tokens were in the database: no server and no CLI run wrote a token file
    assert list(tmp_path.rglob("tokens.db")) == []
    for log in ("a.err", "b.err"):
        assert "bearer tokens from postgresql://postgres@127.0.0.1:" in (tmp_path / log).read_text()
        assert "(table mcp_memory.tokens)" in (tmp_path / log).read_text()
        assert "(store: postgresql://postgres@127.0.0.1:" in (tmp_path / log).read_text()


async def test_a_stopped_database_is_a_503_and_a_clear_tool_error(tmp_path: Path) -> None:
    """PostgreSQL stops under two running servers (a database of their own: this test stops it). The
    server whose bearer tokens live in the database answers 503 with Retry-After and one sentence (the
    token lookup fails inside the MCP SDK's auth middleware: it was a bare 500); the server whose
    tokens are in a file still lets its user in, and every tool call says the database is unavailable
    (never a bare "Error executing tool X")."""
    from mcp_memory_testing.postgres import PostgresServer

    sentence = "The memory database is unavailable; try again shortly."
    with PostgresServer() as database:
        url = database.create_database("outage")
        in_database = server_env(
            tmp_path / "a" / "unused.db", MCP_MEMORY_STORE="postgres", MCP_MEMORY_DATABASE_URL=url
        )
        in_file = {**in_database, "MCP_MEMORY_TOKENS_PATH": str(tmp_path / "tokens.db")}
        alice, bob = create_token(in_database, "alice"), create_token(in_file, "bob")
        with (
            http_server(module_command(), in_database, tmp_path / "a.err") as server_a,
            http_server(module_command(), in_file, tmp_path / "b.err") as server_b,
        ):
            async with session_as(server_a, alice) as session:
                assert "id" in await call(session, "store_memory", content="alice: the deploy key rotates")
            async with session_as(server_b, bob) as session:
                assert "id" in await call(session, "store_memory", content="bob: staging rebuilds on Monday")
                database.stop()
                for tool, args in (
                    ("store_memory", {"content": "bob: the VPN moved"}),
                    ("search_memories", {"query": "staging"}),
                    ("list_memories", {}),
                ):
                    text = await failure(session, tool, **args)
                    assert text.startswith(f"Error executing tool {tool}: {sentence} PostgreSQL at "), text
            for _ in range(2):  # the pool's dead connection, then no connection at all
                reply = post_initialize(server_a, {"Authorization": f"Bearer {alice}"})
                assert reply.status_code == 503, reply.text
                assert reply.headers["retry-after"] == "5"
                assert reply.json()["error_description"] == sentence
    assert "refused with 503: Cannot read the tokens in PostgreSQL" in (tmp_path / "a.err").read_text()
