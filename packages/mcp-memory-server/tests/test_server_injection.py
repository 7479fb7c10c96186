"""memory_injection honours its token budget exactly: the prompt text a client receives, counted as a
whole with the real all-MiniLM-L6-v2 tokenizer, is never longer than token_budget, for every budget
from 1 up (issue 13, item 5). Through a real MCP client, with the real embedder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcp_memory_core.settings import Settings

pytestmark = pytest.mark.anyio

pytest.importorskip("mcp_memory_minilm", reason="the minilm plugin counts the tokens")

MEMORIES = [
    "The team standup is at 9:30 every weekday in the small meeting room.",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful!",
    "Deploy steps:\n1. run the tests\n2. tag the release\n3. push the tag — CI does the rest",
    "Der Kühlschrank im Büro wird freitags geleert; bitte Essen beschriften.",
    "東京オフィスの会議室は5階にあります。",
    "Use `uv run pytest -q -p no:cacheprovider` — never plain pytest — in this repository!!!",
    "The standup notes live in docs/standup/2024-05-08.md (one file per day)",
    "Sprint review: every second Friday at 15:00, demo first, then retro. " * 6,
]


@pytest.fixture
def settings(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    monkeypatch.setenv("MCP_MEMORY_EMBEDDER", "minilm")
    monkeypatch.setenv("MCP_MEMORY_RELEVANCE_FLOOR", "false")  # every memory is a candidate line
    yield Settings()


@pytest.fixture(scope="module")
def count_tokens() -> Any:
    from mcp_memory_minilm.embedder import MiniLMEmbedder

    return MiniLMEmbedder().count_tokens


async def prompt_text(client: Any, query: str, budget: str) -> str:
    result = await client.get_prompt("memory_injection", {"query": query, "token_budget": budget})
    assert len(result.messages) == 1
    return str(result.messages[0].content.text)


async def test_the_prompt_never_exceeds_its_budget(client: Any, count_tokens: Any) -> None:
    for content in MEMORIES:
        await client.call_tool("store_memory", {"content": content, "tags": ["team", "office"]})
    everything = await prompt_text(client, "standup meeting office team", "100000")
    lines = everything.splitlines()
    assert lines[0] == "Relevant memories (most relevant first):" and len(lines) > 5
    full = count_tokens(everything)
    grew = 0
    previous = ""
    for budget in [*range(1, full + 2), 2 * full, 4000]:
        text = await prompt_text(client, "standup meeting office team", str(budget))
        assert count_tokens(text) <= budget, (budget, text)
        grew += text != previous
        previous = text
    assert grew > 5  # the budgets did change what was packed
    assert previous == everything  # and a large one packs it all


async def test_when_nothing_fits_the_note_fits_too(client: Any, count_tokens: Any) -> None:
    await client.call_tool("store_memory", {"content": MEMORIES[-1]})
    for budget in range(1, 40):
        text = await prompt_text(client, "when is the sprint review? " * 20, str(budget))
        assert count_tokens(text) <= budget, (budget, text)
    assert await prompt_text(client, "sprint review", "20") == (  # 17 tokens; the memory needs ~90
        "No relevant memory fits in 20 tokens: ask for a larger token_budget."
    )
    assert await prompt_text(client, "sprint review", "16") == ""
