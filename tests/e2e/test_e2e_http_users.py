"""Several users on one HTTP server, each through a real MCP SDK client with their own bearer token.

alice and bob share the team "core"; carol is in no team. Every tool, the memory:// and stats
resources, the memory_injection prompt and the CLI export are checked against the Scope rules:
private memories reach only their owner, team memories teammates, public ones everybody; only the
owner changes a memory; an id outside one's scope answers exactly like a missing one.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import (
    INITIALIZE,
    cli,
    create_token,
    error_text,
    http_server,
    module_command,
    payload,
    server_env,
)

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("default_plugins")]

MISSING = "00000000-0000-4000-8000-000000000000"


@asynccontextmanager
async def session_as(url: str, token: str) -> AsyncIterator[Any]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def call(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await session.call_tool(tool, args))


async def failure(session: Any, tool: str, **args: Any) -> str:
    return error_text(await session.call_tool(tool, args)).replace(args.get("id", "-"), "ID")


def post_initialize(url: str, headers: dict[str, str]) -> Any:
    import httpx2

    return httpx2.post(
        url,
        json=INITIALIZE,
        headers={"Accept": "application/json, text/event-stream", **headers},
        timeout=30,
    )


async def test_three_users_through_every_surface(db_path: Path, tmp_path: Path) -> None:
    env = server_env(db_path, MCP_MEMORY_TOKENS_PATH=str(tmp_path / "tokens.db"))
    alice = create_token(env, "alice", "core")
    bob = create_token(env, "bob", "core")
    carol = create_token(env, "carol")
    listed = cli(env, "token", "list", "--json")
    assert {t["user"] for t in json.loads(listed.stdout)} == {"alice", "bob", "carol"}
    assert alice not in listed.stdout and "mcpm_" not in (tmp_path / "tokens.db").read_bytes().decode(
        "latin-1"
    )

    with http_server(module_command(), env, tmp_path / "http.err") as url:
        # no token, a wrong token: 401 before anything runs
        assert post_initialize(url, {}).status_code == 401
        refused = post_initialize(url, {"Authorization": "Bearer mcpm_not-a-real-token"})
        assert refused.status_code == 401
        assert "Bearer" in refused.headers.get("www-authenticate", "")
        assert post_initialize(url, {"Authorization": f"Bearer {alice}"}).status_code == 200
        import httpx2

        metadata = httpx2.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"), timeout=30)
        assert metadata.status_code == 200 and metadata.json()["resource"] == url

        async with session_as(url, alice) as a:
            private = await call(a, "store_memory", content="Alice's home alarm code is 2468")
            team = await call(
                a, "store_memory", content="The core team deploys on Fridays", privacy_scope="team"
            )
            public = await call(
                a, "store_memory", content="The office wifi is called atlas-guest", privacy_scope="public"
            )
            private_full = await call(a, "get_memory", id=private["id"])
            assert private_full["owner"] == "alice" and private_full["privacy_scope"] == "private"
            assert (await call(a, "get_memory", id=public["id"]))["privacy_scope"] == "public"
            found: set[str] = set()
            for query in ("home alarm code", "core team deploys", "office wifi name"):  # one per memory
                found |= {r["id"] for r in (await call(a, "search_memories", query=query))["results"]}
            assert found == {private["id"], team["id"], public["id"]}

        async def visible(session: Any) -> set[str]:
            found: set[str] = set()
            for query in ("home alarm code", "core team deploys", "office wifi name"):  # one per memory
                hits = await call(session, "search_memories", query=query, namespace="*")
                found |= {r["id"] for r in hits["results"]}
            listed = await call(session, "list_memories", namespace="*")
            assert {m["id"] for m in listed["memories"]} == found
            return found

        async with session_as(url, bob) as b, session_as(url, carol) as c:
            assert await visible(b) == {team["id"], public["id"]}
            assert await visible(c) == {public["id"]}

            # an id outside the scope looks exactly like a missing one, for every id tool
            for tool, extra in (
                ("get_memory", {}),
                ("update_memory", {"content": "hijacked"}),
                ("delete_memory", {}),
                ("pin_memory", {}),
            ):
                assert await failure(b, tool, id=private["id"], **extra) == await failure(
                    b, tool, id=MISSING, **extra
                )
                assert await failure(c, tool, id=team["id"], **extra) == await failure(
                    c, tool, id=MISSING, **extra
                )
            # readable, but only the owner changes it
            for tool, extra in (("update_memory", {"content": "wifi is open"}), ("delete_memory", {})):
                assert "only its owner" in await failure(b, tool, id=public["id"], **extra)
            assert (await call(b, "get_memory", id=public["id"]))["owner"] == "alice"

            # resources and the prompt
            with pytest.raises(Exception, match="No memory with id"):
                await b.read_resource(f"memory://{private['id']}")
            shared = json.loads((await c.read_resource(f"memory://{public['id']}")).contents[0].text)
            assert shared["content"] == "The office wifi is called atlas-guest"
            stats = json.loads((await c.read_resource("memory://stats")).contents[0].text)
            assert stats["user"] == "carol" and stats["stored_versions_all_namespaces"] == 1
            prompt = await b.get_prompt(
                "memory_injection", {"query": "alarm code wifi", "token_budget": "400"}
            )
            text = " ".join(m.content.text for m in prompt.messages)
            assert "wifi" in text and "2468" not in text

            # bob's own writes, and a clear that only removes bob's
            mine = await call(b, "store_memory", content="Bob prefers dark mode", namespace="user")
            ns = await call(b, "list_namespaces")
            project = public["namespace"]
            assert {n["name"]: n["memories"] for n in ns["namespaces"]} == {"user": 1, project: 2}
            cleared = await call(b, "clear_memories", namespace="user", confirm="user")
            assert cleared["purged"] == 1
            assert "No memory with id" in await failure(b, "get_memory", id=mine["id"])

        async with session_as(url, alice) as a:
            got = await call(a, "get_memory", id=public["id"])
            assert got["status"] == "current" and got["content"] == "The office wifi is called atlas-guest"
            assert (await call(a, "get_memory", id=private["id"]))["status"] == "current"

        # a version made private later: the old public one names neither it nor its id, on every surface
        async with session_as(url, alice) as a:
            secret = await call(
                a, "update_memory", id=public["id"], content="The wifi is now hidden", privacy_scope="private"
            )
        async with session_as(url, bob) as b:
            old = await call(b, "get_memory", id=public["id"], history=True)
            assert old["status"] == "superseded" and old["head_id"] is None and old["superseded_by"] is None
            resource = (await b.read_resource(f"memory://{public['id']}")).contents[0].text
            assert secret["id"] not in json.dumps(old) + resource

        # a revoked token stops working at once
        revoked = cli(env, "token", "revoke", "--user", "carol")
        assert revoked.returncode == 0, revoked.stderr
        assert post_initialize(url, {"Authorization": f"Bearer {carol}"}).status_code == 401

    # export obeys the same rule: a user's export holds their own memories only
    as_bob = cli({**env, "MCP_MEMORY_USER": "bob"}, "export", "--all-namespaces")
    assert as_bob.returncode == 0, as_bob.stderr
    assert "2468" not in as_bob.stdout and "wifi" not in as_bob.stdout
    as_alice = cli({**env, "MCP_MEMORY_USER": "alice"}, "export", "--all-namespaces")
    assert (
        "2468" in as_alice.stdout and as_alice.stdout.count('"owner":"alice"') == 4
    )  # and the private version


def test_no_auth_is_refused_beyond_loopback(db_path: Path) -> None:
    for host in ("0.0.0.0", "192.0.2.10", "::"):
        done = cli(server_env(db_path), "serve", "--transport", "http", "--host", host, "--no-auth")
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "without authentication" in lines[0], done.stderr
        assert done.stdout == ""
    assert not db_path.exists()  # refused before anything was opened


async def test_a_memory_added_with_the_cli_is_listed_over_mcp_http_with_the_token_token_create_makes_for_the_person_at_the_machine(
    db_path: Path, tmp_path: Path
) -> None:
    env = server_env(db_path, MCP_MEMORY_TOKENS_PATH=str(tmp_path / "tokens.db"))
    added = cli(env, "add", "The person at the machine takes the 7:40 train", "--json")
    assert added.returncode == 0, added.stderr
    memory_id = json.loads(added.stdout)["id"]
    created = cli(env, "token", "create")  # no name: the person at the machine
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("mcpm_") and "acts as another user" not in created.stderr

    with http_server(module_command(), env, tmp_path / "http.err") as url:
        async with session_as(url, token) as session:
            listed = await call(session, "list_memories")
            assert [m["id"] for m in listed["memories"]] == [memory_id]
            got = await call(session, "get_memory", id=memory_id)
            assert got["owner"] == "local" and "7:40 train" in got["content"]
