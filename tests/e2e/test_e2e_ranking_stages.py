"""The agent-recall benchmark's ranking stages reach the real server: a server started with a stage's
settings ranks with them (its explain parts say so), and the benchmark's check notices a server that
did not get them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import module_command, payload, server_env, stdio_session

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from ranking_stages import STAGES, Stage

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.usefixtures("default_plugins")]

FACTS = (
    "The staging cluster is called kx-7731 in the console",
    "The staging cluster runs in the Frankfurt region",
    "Staging is rebuilt every night from main",
)


async def explained(tmp_path: Path, env: dict[str, str]) -> dict[str, Any]:
    async with stdio_session(module_command(), env, tmp_path / "err.log") as session:
        for content in FACTS:
            payload(await session.call_tool("store_memory", {"content": content}))
        return payload(await session.call_tool("search_memories", {"query": "kx-7731", "explain": True}))


def parts(answer: dict[str, Any], name: str) -> list[float]:
    return [result["score_parts"][name] for result in answer["results"]]


async def test_the_vector_stage_ranks_without_keywords_or_floor_and_the_keyword_stage_with_them(
    tmp_path: Path,
) -> None:
    vector: Stage = STAGES["vector"]
    answer = await explained(tmp_path, server_env(tmp_path / "vector.db", **vector.env))
    assert answer["results"] and set(parts(answer, "keyword")) == {0.0} and "floor" not in answer
    assert vector.mismatch(answer) is None
    keyword = await explained(tmp_path, server_env(tmp_path / "keyword.db", **STAGES["keyword"].env))
    assert max(parts(keyword, "keyword")) > 0 and STAGES["keyword"].mismatch(keyword) is None


async def test_a_server_without_the_stage_settings_is_noticed(tmp_path: Path) -> None:
    answer = await explained(tmp_path, server_env(tmp_path / "defaults.db"))
    assert STAGES["shipped"].mismatch(answer) is None
    assert STAGES["vector"].mismatch(answer) is not None
    assert STAGES["context"].mismatch(answer) is not None  # the floor it turns off was applied
