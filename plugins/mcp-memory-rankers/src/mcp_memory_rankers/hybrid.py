"""Hybrid ranking: fuse the vector channel (meaning) with the keyword channel (exact words).

Two fusions, chosen by ``method``:

- ``linear`` (default): ``vector_weight · similarity + keyword_weight · keyword_score / (best keyword
  score among the candidates + keyword_damping)``. Scaled by the query's best match, a keyword score
  lies in [0, 1) like a cosine similarity; the damping keeps a query whose only keyword matches are
  weak (common words: bm25 near 0) from handing a full keyword bonus to a chance match — a paraphrase
  then ranks by meaning. The semantic gate scales keyword evidence by ``similarity / best
  similarity``; when the vector channel is focused (the query's background similarity below
  ``focus_ratio`` of its best: short facts, where meaning singles a memory out) to the power
  ``focus_gate_power``, so a shared ordinary word cannot lift a memory that is plainly about
  something else. A fact (a memory without a speaker: not a turn of a conversation) gets keyword
  evidence only for a query naming an exact string (a number or an identifier: ``E-20417``,
  ``acct_1N8xQ2LkT5``, ``uv.lock``; see :func:`names_exact_string`), which a sentence embedding reads
  poorly; any other shared word, a name included, is left to the vectors, which rank short facts
  better without it (docs/benchmarks.md, "the fifth recall step"), focused or not: a paraphrase
  that shares no word with its fact has a weak best match, and a chance word ("file" in "How long
  may the instruction file get?" and "the bugs she files") must not decide it (the ninth session).
- ``rrf``: reciprocal rank fusion, ``vector_weight / (k + vector_rank) + keyword_weight / (k +
  keyword_rank)``; it ignores score values entirely.

A channel that did not return a candidate contributes nothing. On top of the fusion, the memory's
conversation and date lift it (:mod:`.conversation`: the previous turn's score and keywords, the
thread's best scores, dates named in the query) and a turn that only asks gives up a share of its
score; a weight of 0 turns a lift off. The defaults were
chosen on the LoCoMo dev split (conversations 0-4) and the paraphrase set's dev half
(benchmarks/data/paraphrase_facts.jsonl); docs/benchmarks.md has the figures.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import Candidate, ScoredCandidate
from mcp_memory_core.relevance import background_similarity
from mcp_memory_core.turns import speaker_of

from .conversation import ContextWeights, contextual_parts, neighbour_keywords, question_part, questions


class HybridSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_HYBRID_", extra="ignore")

    method: Literal["linear", "rrf"] = "linear"
    vector_weight: float = Field(default=0.7, ge=0)
    keyword_weight: float = Field(default=0.3, ge=0)
    k: float = Field(default=10.0, gt=0, description="RRF constant: larger flattens the rank curve")
    keyword_damping: float = Field(default=1.0, ge=0, description="Added to the best keyword score (linear)")
    semantic_gate: bool = Field(
        default=True, description="Scale keyword evidence by similarity / best similarity (linear)"
    )
    focus_ratio: float = Field(
        default=0.7,
        ge=0,
        le=1,
        description="The vector channel is focused when the query's background similarity is below this share of the best",
    )
    focus_gate_power: float = Field(
        default=16.0,
        ge=1,
        description="Power of the semantic gate when the vector channel is focused (1 otherwise)",
    )
    facts_exact_only: bool = Field(
        default=True,
        description="A fact (a memory without a speaker) gets keyword evidence only for a query naming "
        "an exact string (a number or an identifier); a conversation's turns keep theirs",
    )
    neighbour_weight: float = Field(
        default=0.3,
        ge=0,
        description="Share of the previous turn's score a reply borrows when that turn asked something",
    )
    neighbour_keyword_weight: float = Field(
        default=0.3,
        ge=0,
        description="Share of the previous turn's keyword score counted as the memory's own",
    )
    thread_weight: float = Field(
        default=0.3, ge=0, description="Times the mean of the best two scores in the memory's thread"
    )
    date_weight: float = Field(
        default=0.3, ge=0, description="Lift of a memory dated in a time the query names"
    )
    date_after_days: float = Field(
        default=7.0, gt=0, description="Days for the date lift to fade after the span"
    )
    date_before_days: float = Field(default=2.0, gt=0, description="Days for the date lift to fade before it")
    question_weight: float = Field(
        default=0.2,
        ge=0,
        le=1,
        description="Share of its score a turn that mostly asks gives up (it names what it asks about "
        "without answering it)",
    )

    @property
    def context(self) -> ContextWeights:
        return ContextWeights(
            neighbour=self.neighbour_weight,
            thread=self.thread_weight,
            date=self.date_weight,
            date_after_days=self.date_after_days,
            date_before_days=self.date_before_days,
            question=self.question_weight,
        )


class HybridRanker:
    def __init__(self, settings: HybridSettings | None = None) -> None:
        self.settings = settings or HybridSettings()

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        s = self.settings
        answers = questions(candidates) if s.neighbour_weight or s.neighbour_keyword_weight else {}
        keywords = neighbour_keywords(candidates, answers, s.neighbour_keyword_weight)
        best_similarity = max(
            (c.vector_similarity for c in candidates if c.vector_similarity is not None), default=0.0
        )
        gated = s.method == "linear" and s.semantic_gate and best_similarity > 0
        focused = gated and self._focused(candidates, best_similarity)
        power = s.focus_gate_power if focused else 1.0
        if gated and s.facts_exact_only and not names_exact_string(query):
            # Facts are ranked by meaning: their words neither count nor set the scale the turns'
            # words are measured against.
            facts = {c.memory.id for c in candidates if speaker_of(c.memory) is None}
            keywords = {memory_id: v for memory_id, v in keywords.items() if memory_id not in facts}
        best_keyword = max(keywords.values(), default=0.0)
        fused: dict[str, dict[str, float]] = {}
        for c in candidates:
            if s.method == "rrf":
                vector = s.vector_weight / (s.k + c.vector_rank) if c.vector_rank is not None else 0.0
                keyword = s.keyword_weight / (s.k + c.keyword_rank) if c.keyword_rank is not None else 0.0
            else:
                vector = s.vector_weight * c.vector_similarity if c.vector_similarity is not None else 0.0
                scale = best_keyword + s.keyword_damping
                evidence = keywords.get(c.memory.id)
                keyword = s.keyword_weight * evidence / scale if evidence is not None and scale > 0 else 0.0
                if s.semantic_gate and best_similarity > 0:
                    # A word in common counts as far as the memory is plausible by meaning: "use" in
                    # "which theme should the IDE use?" must not lift "the project uses semver".
                    plausibility = (c.vector_similarity or 0.0) / best_similarity
                    keyword *= min(max(plausibility, 0.0), 1.0) ** power
            fused[c.memory.id] = {"vector": vector, "keyword": keyword}
        own = {memory_id: parts["vector"] + parts["keyword"] for memory_id, parts in fused.items()}
        weights = s.context
        context = contextual_parts(query, candidates, answers, own, weights, now)
        scored = []
        for c in candidates:
            parts = {**fused[c.memory.id], **context[c.memory.id]}
            lifted = sum(parts.values())
            parts["question"] = question_part(c.memory, lifted, weights)
            scored.append(ScoredCandidate(candidate=c, score=lifted + parts["question"], parts=parts))
        order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
        return [scored[i] for i in order]

    def _focused(self, candidates: Sequence[Candidate], best_similarity: float) -> bool:
        """Whether the vectors single out what the query is about: its nearest memories lie well below
        its best one (short facts). Then a shared word counts only for a memory nearly as close by
        meaning as the best (the gate's power) — "picked" in "pick a chart palette" must not lift
        "Tailwind was picked over Bootstrap". When they all lie close (conversation turns sharing
        speakers and style), the words carry what the vectors miss."""
        return background_similarity(candidates) < self.settings.focus_ratio * best_similarity


# A digit; letters joined by _ / @ or . to a letter or digit ("acct_1N8", "src/app", "uv.lock"); camelCase.
_EXACT = re.compile(r"\d|[A-Za-z][_/@.][A-Za-z0-9]|[a-z][A-Z]")


def names_exact_string(query: str) -> bool:
    """True when the query holds a string a sentence embedding reads poorly and words match exactly: a
    number ("port 8443", "E-20417") or an identifier ("acct_1N8xQ2LkT5", "src/app", "ops@example.com",
    "camelCase"). "Which Rust tool ..." or "the readings store" name nothing exact."""
    return _EXACT.search(query) is not None
