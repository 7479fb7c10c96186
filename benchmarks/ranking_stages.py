"""The server's ranking, stage by stage: each stage a set of server settings (environment variables of
a spawned server), each adding one part of the ranking to the one before.

- ``vector``: the hybrid ranker with only its vector channel (keyword, neighbour, neighbour-keyword,
  thread, date and question weights 0), no relevance floor: the product's vector channel with its chains and
  scope resolution, to compare with plain cosine. It differs from plain cosine of each whole memory
  where memories have several sentences: the server also embeds each sentence and a memory counts
  with its best one;
- ``keyword``: + the keyword channel at its default weight, semantic gate on;
- ``context``: + the conversation lifts (neighbour, thread, date) and the question discount at their
  defaults;
- ``shipped``: the server's defaults, which add the relevance floor.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FLOOR_OFF = {"MCP_MEMORY_RANKER": "hybrid", "MCP_MEMORY_RELEVANCE_FLOOR": "false"}
CONTEXT_OFF = {
    "MCP_MEMORY_HYBRID_NEIGHBOUR_WEIGHT": "0",
    "MCP_MEMORY_HYBRID_NEIGHBOUR_KEYWORD_WEIGHT": "0",
    "MCP_MEMORY_HYBRID_THREAD_WEIGHT": "0",
    "MCP_MEMORY_HYBRID_DATE_WEIGHT": "0",
    "MCP_MEMORY_HYBRID_QUESTION_WEIGHT": "0",
}
CONTEXT_PARTS = frozenset(
    {"neighbour", "thread", "date", "question"}
)  # the hybrid ranker's score parts they fill


@dataclass(frozen=True)
class Stage:
    name: str
    summary: str
    env: Mapping[str, str] = field(default_factory=dict)  # what the spawned server is given
    off: frozenset[str] = frozenset()  # score parts the server must report as 0
    floor: bool = True

    def mismatch(self, answer: Mapping[str, Any]) -> str | None:
        """Why a ``search_memories`` answer asked with ``explain`` shows the server did not rank with
        this stage's settings (None: it did)."""
        for result in answer.get("results", []):
            for part, value in result.get("score_parts", {}).items():
                if part in self.off and value != 0:
                    return (
                        f"the server ranked with {part} {value:g} where the {self.name} stage turns it "
                        "off: its settings did not reach it"
                    )
        if self.floor and "floor" not in answer:
            return (
                f"the server applied no relevance floor where the {self.name} stage has one: its "
                "settings did not reach it"
            )
        if not self.floor and "floor" in answer:
            return (
                f"the server applied the relevance floor the {self.name} stage turns off: its settings "
                "did not reach it"
            )
        return None

    def reading(self) -> str:
        """What the stage ranks with, and the environment that makes a server rank so."""
        settings = " ".join(f"{name}={value}" for name, value in self.env.items())
        return f"`{self.name}`: {self.summary}" + (f" (`{settings}`)" if settings else "")


def _stages() -> Iterator[Stage]:
    yield Stage(
        "vector",
        "the hybrid ranker's vector channel alone (each memory's best passage: its whole text or one of its "
        "sentences), no relevance floor",
        {**FLOOR_OFF, **CONTEXT_OFF, "MCP_MEMORY_HYBRID_KEYWORD_WEIGHT": "0"},
        CONTEXT_PARTS | {"keyword"},
        floor=False,
    )
    yield Stage(
        "keyword",
        "+ the keyword channel (default weight, semantic gate on)",
        {**FLOOR_OFF, **CONTEXT_OFF},
        CONTEXT_PARTS,
        floor=False,
    )
    yield Stage(
        "context",
        "+ the conversation lifts (neighbour, thread, date) and the question discount",
        dict(FLOOR_OFF),
        floor=False,
    )
    yield Stage("shipped", "the server's defaults, which add the relevance floor (rows without a stage)")


STAGES = {stage.name: stage for stage in _stages()}  # in their cumulative order


class UnknownStage(ValueError):
    pass


def choose(names: str) -> Sequence[Stage]:
    """The stages named (comma-separated, or ``all``), in their cumulative order, each once."""
    wanted = {name.strip() for name in names.split(",") if name.strip()}
    known = ", ".join(STAGES)
    unknown = sorted(wanted - set(STAGES) - {"all"})
    if unknown:
        raise UnknownStage(f"unknown stage {unknown[0]!r}: pass --stages with names among {known}, or all")
    if not wanted:
        raise UnknownStage(f"no stage named: pass --stages with names among {known}, or all")
    return [stage for name, stage in STAGES.items() if name in wanted or "all" in wanted]
