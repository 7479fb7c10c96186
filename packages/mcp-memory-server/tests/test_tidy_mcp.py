"""What tidying leaves, as an MCP client sees it: memories stored through the tools, tidied by the
operation the CLI and the web UI call, then read through the tools again — a folded near-duplicate
is an older version whose history ends at the memory kept, search finds the kept one, junk is a
tombstone, and nothing else changed. (There is no tidy tool: see the README's "Tidying".)"""

from __future__ import annotations

from typing import Any

import pytest
from server_helpers import payload

from mcp_memory_server.operations.tidy import ApplyRequest, apply, propose

pytestmark = pytest.mark.anyio


async def store(client: Any, content: str) -> str:
    return str(payload(await client.call_tool("store_memory", {"content": content}))["id"])


async def get(client: Any, memory_id: str, history: bool = False) -> dict[str, Any]:
    return payload(await client.call_tool("get_memory", {"id": memory_id, "history": history}))


async def test_what_tidy_folds_and_tombstones_reads_right_through_mcp(client: Any, app: Any) -> None:
    older = await store(client, "Maya lives in Berlin with her cat")
    newer = await store(client, "With her cat Maya lives in Berlin")
    junk = await store(client, "thanks!")
    fact = await store(client, "Maya is vegetarian")
    before = {i: await get(client, i) for i in (newer, fact)}
    engine = app.memory_service.engine()
    scope = engine.default_scope
    report = propose(engine, scope)
    applied = apply(engine, scope, ApplyRequest(proposals=report.proposals))
    assert applied.folded == {newer: [older]} and applied.junk == [junk]
    folded = await get(client, older, history=True)
    assert folded["status"] == "superseded" and folded["head_id"] == newer
    assert [m["id"] for m in folded["history"]] == [older, newer]
    hits = payload(await client.call_tool("search_memories", {"query": "Maya cat Berlin"}))["results"]
    assert [h["id"] for h in hits if "Berlin" in h["content"]] == [newer]
    assert (await get(client, junk))["status"] == "deleted"
    for memory_id, seen in before.items():
        now = await get(client, memory_id)
        assert {k: v for k, v in now.items() if k not in ("access_count", "last_accessed", "age")} == {
            k: v for k, v in seen.items() if k not in ("access_count", "last_accessed", "age")
        }
