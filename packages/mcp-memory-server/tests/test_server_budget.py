"""Every tool result within the token budget (MCP_MEMORY_MAX_RESULT_TOKENS, here its minimum, 1,000
tokens = 4,000 bytes of JSON text): what does not fit is cut in order and named, never dropped
silently, and get_memory still returns any memory whole. Through a real MCP client on the fakes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from server_helpers import payload

from mcp_memory_core.settings import Settings

pytestmark = pytest.mark.anyio

BUDGET = 1000
LIMIT = BUDGET * 4  # bytes of JSON text
NOTE = f"did not fit in the {BUDGET:,}-token result budget (MCP_MEMORY_MAX_RESULT_TOKENS)"


@pytest.fixture
def settings(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    monkeypatch.setenv("MCP_MEMORY_MAX_RESULT_TOKENS", str(BUDGET))
    yield Settings()


def sent(result: Any) -> dict[str, Any]:
    """The payload of a result whose text is within the budget."""
    assert len(result.content[0].text.encode()) <= LIMIT, len(result.content[0].text.encode())
    return payload(result)


async def store(client: Any, content: str, **args: Any) -> str:
    return str(payload(await client.call_tool("store_memory", {"content": content, **args}))["id"])


async def contents(client: Any, ids: list[str]) -> dict[str, str]:
    return {i: payload(await client.call_tool("get_memory", {"id": i}))["content"] for i in ids}


async def test_search_beyond_the_budget_is_cut_in_order_and_names_the_rest(app: Any, client: Any) -> None:
    ids = [
        await store(client, f"Garden note {i}: " + "tomatoes need sun and water. " * 30) for i in range(12)
    ]
    ranked = app.memory_service.call_sync(
        lambda engine: [hit.memory.id for hit in engine.search_memories("garden tomatoes", 12)]
    )
    data = sent(await client.call_tool("search_memories", {"query": "garden tomatoes", "limit": 12}))
    shown = [r["id"] for r in data["results"]]
    assert 2 <= len(shown) < 12 and data["count"] == len(shown)
    assert shown + data["omitted"] == ranked and sorted(ranked) == sorted(ids)  # best first, none lost
    assert data["hint"].startswith(f"{12 - len(shown)} more results {NOTE}; omitted names them by id")
    assert "get_memory returns any of them in full" in data["hint"]
    whole = await contents(client, ids)
    for result in data["results"]:  # whole, but for at most the last, cut to the room left
        if result.get("content_truncated"):
            assert result is data["results"][-1] and whole[result["id"]].startswith(result["content"])
            assert len(result["content"]) >= 400 and "content_truncated" in data["hint"]
        else:
            assert result["content"] == whole[result["id"]]


async def test_the_omitted_list_names_at_most_twenty(client: Any) -> None:
    for i in range(40):
        await store(client, f"Garden note {i}: " + "tomatoes need sun and water. " * 12)
    data = sent(await client.call_tool("search_memories", {"query": "garden tomatoes", "limit": 40}))
    left_out = 40 - data["count"]
    assert left_out > 20 and len(data["omitted"]) == 20
    assert f"{left_out} more results {NOTE}; omitted names them by id (the first 20)" in data["hint"]


async def test_a_memory_larger_than_the_budget_is_shortened_and_get_memory_returns_it_whole(
    client: Any,
) -> None:
    big = "The design document says: " + "every tool result fits the budget. " * 600  # 21 KB
    first = await store(client, big)
    second = await store(client, "Another design document: " + "lists move on to the next page. " * 600)

    found = sent(await client.call_tool("search_memories", {"query": "design document budget", "limit": 2}))
    top = found["results"][0]
    assert top["id"] == first and top["content_truncated"] is True and big.startswith(top["content"])
    assert len(top["content"]) > 2500  # most of the budget goes to the memory itself
    assert found["omitted"] == [second] and "get_memory returns it whole" in found["hint"]

    result = await client.call_tool("get_memory", {"id": first})
    assert payload(result)["content"] == big and len(result.content[0].text.encode()) > LIMIT

    page = sent(await client.call_tool("list_memories", {}))
    assert [m["id"] for m in page["memories"]] == [second] and page["memories"][0]["content_truncated"]
    assert "get_memory returns it whole" in page["hint"] and "cursor = next_cursor" in page["hint"]
    last = sent(await client.call_tool("list_memories", {"cursor": page["next_cursor"]}))
    assert [m["id"] for m in last["memories"]] == [first] and last["next_cursor"] is None


async def test_verbose_list_pages_fit_the_budget_and_cover_everything(client: Any) -> None:
    ids = {
        await store(client, f"Fact {i} about the deploy pipeline", metadata={"source": "notes", "n": i})
        for i in range(30)
    }
    seen: list[str] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"verbose": True, "limit": 1000, **({"cursor": cursor} if cursor else {})}
        page = sent(await client.call_tool("list_memories", args))
        assert all("created_at" in m for m in page["memories"])
        seen += [m["id"] for m in page["memories"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
        assert f"the most that fit in the {BUDGET:,}-token result budget" in page["hint"]
    assert len(seen) == 30 and set(seen) == ids


async def test_similar_memories_beyond_the_budget_are_named(client: Any) -> None:
    base = "The release checklist: bump the version, tag, build wheels, upload, announce. " * 12
    earlier = [await store(client, f"{base} Variant {i}.") for i in range(5)]
    data = sent(await client.call_tool("store_memory", {"content": f"{base} Variant 5."}))
    assert data["status"] == "stored" and data["id"] not in earlier
    named = [s["id"] for s in data["similar"]] + data["omitted"]
    assert sorted(named) == sorted(earlier) and len(data["similar"]) < 5
    assert "more similar memor" in data["hint"] and NOTE in data["hint"]


async def test_history_beyond_the_budget_is_named_and_the_memory_is_whole(client: Any) -> None:
    versions = [await store(client, "Version 0 of the runbook. " + "Restart the workers first. " * 30)]
    for i in range(1, 8):
        update = {
            "id": versions[-1],
            "content": f"Version {i} of the runbook. " + "Restart the workers. " * 35,
        }
        versions.append(payload(await client.call_tool("update_memory", update))["id"])
    data = sent(await client.call_tool("get_memory", {"id": versions[0], "history": True}))
    assert data["id"] == versions[0] and data["status"] == "superseded" and data["head_id"] == versions[-1]
    assert data["content"].startswith("Version 0") and "content_truncated" not in data
    shown = [v["id"] for v in data["history"]]
    assert shown + data["omitted"] == versions and len(shown) < 8
    assert "more versions" in data["hint"] and "get_memory returns each of them" in data["hint"]


async def test_many_namespaces_and_a_long_purge_are_cut_with_a_note(app: Any, client: Any) -> None:
    from mcp_memory_core.models import Memory

    memories = [Memory(content=f"fact {i}", namespace=f"project-number-{i:04d}") for i in range(200)]
    app.memory_service.call_sync(lambda engine: engine.import_memories(memories))
    spaces = sent(await client.call_tool("list_namespaces", {}))
    assert len(spaces["namespaces"]) < 200 and len(spaces["omitted"]) == 20
    assert "list_memories and search_memories read any of them by name" in spaces["hint"]
    assert "omitted names them by name" in spaces["hint"]

    def chain(engine: Any) -> str:
        memory_id = engine.store_memory("revision 0").memory.id
        for i in range(1, 120):
            memory_id = engine.update_memory(memory_id, f"revision {i}").memory.id
        return str(memory_id)

    head = app.memory_service.call_sync(chain)
    purged = sent(await client.call_tool("delete_memory", {"id": head, "hard": True}))
    assert purged["status"] == "purged" and 0 < len(purged["purged"]) < 120
    assert purged["hint"].startswith("120 versions were purged; the ids of ")


def test_a_budget_below_the_minimum_is_refused_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_memory_server.runtime.config import ConfigurationError, load_settings

    monkeypatch.setenv("MCP_MEMORY_MAX_RESULT_TOKENS", "200")
    with pytest.raises(
        ConfigurationError,
        match="MCP_MEMORY_MAX_RESULT_TOKENS: Input should be greater than or equal to 1000",
    ):
        load_settings()
