"""The relevance floor: a search returns only memories that plausibly answer the query.

A ranker's score says which memory is best, not whether any is good: an off-topic question ("what is
the capital of Australia?") against a store of conversations still gets five memories, and a model
reading them wastes its context on them. The floor asks the vector channel, ranker-independently,
whether a candidate is about the query at all. A candidate clears it when its cosine similarity

- is at least ``min_similarity`` (clearly about the query), or
- stands out from the store's background for this query by at least ``min_standout``: the
  background is the median similarity of the query's ``BACKGROUND_K`` nearest memories (a store
  with fewer counts the missing ones at ``BACKGROUND_PRIOR``, the typical similarity of unrelated
  text), so a paraphrase in a store of unrelated facts clears it while the best of six hundred
  chit-chat turns that are all equally far from the question does not; or
- is at least ``min_keyword_similarity`` for a memory the keyword channel found (it shares a
  word with the query: "Biscuit learned to fetch" for "Biscuit the dog");

and a reply (:func:`.turns.is_reply`) whose previous turn clears it clears it too (the question it
answers is about the query). The ranker's best candidate also clears it at ``min_best_similarity``:
a paraphrase sharing no word with its memory can sit as low as an unrelated memory, and hiding the
best match would answer "nothing stored" when the answer is stored; an off-topic question then gets
at most that one weak result, its low score saying so. Below the best, a memory also needs
``min_extra_similarity`` by whichever clause it clears (its own or its question's): in a small store
of facts the background is near zero, so standing out alone is cheap, and an off-topic question
would get a second and third weak result beside the first.

The values belong to the embedding model (each has its own cosine scale), so an embedder declares
them as its ``relevance_floor`` attribute; without one, search has no floor unless the settings give
all three values. The minilm plugin's values (all-MiniLM-L6-v2) and how they were chosen are in
docs/benchmarks.md, "Relevance floor".
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .models import Candidate, ScoredCandidate
from .turns import is_reply

BACKGROUND_K = 32
BACKGROUND_PRIOR = 0.15


def background_similarity(candidates: Sequence[Candidate]) -> float:
    """The query's background: the median similarity of its ``BACKGROUND_K`` nearest memories (by the
    vector channel's ranks; a store with fewer counts the missing ones at ``BACKGROUND_PRIOR``)."""
    nearest = sorted(
        (
            c.vector_similarity
            for c in candidates
            if c.vector_rank is not None and c.vector_similarity is not None
        ),
        reverse=True,
    )[:BACKGROUND_K]
    nearest += [BACKGROUND_PRIOR] * (BACKGROUND_K - len(nearest))
    return float(statistics.median(nearest))


@dataclass(frozen=True)
class RelevanceFloor:
    min_similarity: float
    min_standout: float
    min_keyword_similarity: float
    # The ranker's best candidate clears the floor at this similarity (None: as any other does).
    min_best_similarity: float | None = None
    # Below the ranker's best, a memory needs at least this similarity whichever clause clears it.
    min_extra_similarity: float | None = None

    def kept(
        self, candidates: Sequence[Candidate], ranked: Sequence[ScoredCandidate]
    ) -> tuple[list[ScoredCandidate], float]:
        """The ranked candidates that clear the floor, in order, and the query's background."""
        background = self.background(candidates)
        by_id = {c.memory.id: c for c in candidates}
        return [
            s
            for i, s in enumerate(ranked)
            if self.clears(s.candidate, by_id, background, best=i == 0)
            or (i == 0 and self._best_clears(s.candidate))
        ], background

    def _best_clears(self, candidate: Candidate) -> bool:
        similarity = candidate.vector_similarity
        return (
            self.min_best_similarity is not None
            and similarity is not None
            and similarity >= self.min_best_similarity
        )

    def background(self, candidates: Sequence[Candidate]) -> float:
        return background_similarity(candidates)

    def clears(
        self, candidate: Candidate, by_id: Mapping[str, Candidate], background: float, *, best: bool = True
    ) -> bool:
        """Whether ``candidate`` (or, for a reply, the turn it answers) is about the query; ``best``:
        it is the ranker's first, so ``min_extra_similarity`` does not apply."""
        own = [candidate]
        previous = by_id.get(candidate.previous_id) if candidate.previous_id is not None else None
        if previous is not None and is_reply(candidate.memory, previous.memory):
            own.append(previous)
        return any(self._relevant(c, background, best) for c in own)

    def _relevant(self, candidate: Candidate, background: float, best: bool) -> bool:
        similarity = candidate.vector_similarity
        if similarity is None:
            return False
        if not best and self.min_extra_similarity is not None and similarity < self.min_extra_similarity:
            return False
        return (
            similarity >= self.min_similarity
            or similarity - background >= self.min_standout
            or (bool(candidate.keyword_score) and similarity >= self.min_keyword_similarity)
        )

    def describe(self, background: float) -> dict[str, float]:
        """What ``explain`` shows: the thresholds and this query's background."""
        shown = {
            "min_similarity": self.min_similarity,
            "min_standout": self.min_standout,
            "min_keyword_similarity": self.min_keyword_similarity,
            "background": round(background, 4),
        }
        if self.min_best_similarity is not None:
            shown["min_best_similarity"] = self.min_best_similarity
        if self.min_extra_similarity is not None:
            shown["min_extra_similarity"] = self.min_extra_similarity
        return shown


# all-MiniLM-L6-v2's calibration, shared by the plugins that serve that model (minilm on onnxruntime,
# sentence-transformers): chosen on LoCoMo dev with 30 off-topic questions and 36 paraphrases; the
# shared-word floor and the bar below the best on the paraphrase worlds' dev half (docs/benchmarks.md,
# "Relevance floor").
ALL_MINILM_L6_V2 = RelevanceFloor(
    min_similarity=0.40,
    min_standout=0.14,
    min_keyword_similarity=0.35,
    min_best_similarity=0.20,
    min_extra_similarity=0.30,
)


@runtime_checkable
class Calibrated(Protocol):
    """An embedder with a relevance floor calibrated for its model's cosine scale: search then
    returns only memories that clear it. Without it, search has no floor unless settings set one."""

    @property
    def relevance_floor(self) -> RelevanceFloor | None: ...
