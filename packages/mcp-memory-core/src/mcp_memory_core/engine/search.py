"""The search pipeline: sources (the vector channel over every version's passages, the best match
per chain winning, and the keyword channel when the store has one) → resolve (chain heads, filters,
Scope) → similarity of keyword-only candidates → thread expansion (each candidate's neighbouring
turns) → ranker → relevance floor → rerankers → the best ``limit`` → record access."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np

from ..errors import InvalidInputError, StorageError
from ..filters import Filters
from ..limits import MAX_TOKEN_BUDGET
from ..models import Candidate, Memory, MemoryFilter, ScoredCandidate, SearchHit, SearchResults
from ..passages import discounted, is_two_sentences
from ..protocols import TokenCounting, Vector, VectorReading
from ..recall import Recall, approximate_tokens, pack
from ..scope import Scope
from ..turns import speaker_of
from ..validation import MAX_KNN_K, MAX_SEARCH_LIMIT, validate_limit
from ..vector_math import cosines
from .basis import EngineBasis
from .chains import Chains
from .maintenance import Maintenance
from .passage_filler import PassageFiller

log = logging.getLogger(__name__)

# The vector channel's leading candidates whose sentences are discounted (passages.PASSAGE_DISCOUNT):
# reading every candidate's vectors back cost 2.4 ms a search in a store of two-sentence facts.
DISCOUNT_DEPTH = 10

# What a search ranks does not depend on its limit (up to SEARCH_POOL): the top 5 of limit=5 are the
# top 5 of limit=50. Chosen on LoCoMo dev against the latency of the search at 1k and 100k.
SEARCH_POOL = 50  # candidates each channel brings (more when versions collapse into fewer heads)
NEIGHBOUR_DEPTH = 10  # the leading candidates whose thread neighbours join them


class SearchPipeline:
    """``search`` and ``recall``; the facade documents each call."""

    def __init__(
        self, basis: EngineBasis, chains: Chains, maintenance: Maintenance, passages: PassageFiller
    ) -> None:
        self._basis = basis
        self._chains = chains
        self._maintenance = maintenance
        self._passages = passages

    def search(
        self, query: str, limit: int, filters: Filters, namespace: str | None, scope: Scope
    ) -> SearchResults:
        basis = self._basis
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string.")
        limit = validate_limit(limit, MAX_SEARCH_LIMIT)
        namespaces = scope.read_namespaces(namespace)
        basis.ready()
        self._maintenance.sweep_if_due()
        self._passages.finish()
        vector = basis.embeddings.embed_query(query)
        where = basis.scoped(filters.where(None, include_superseded=True), scope, namespaces)
        candidates = self._discount_fact_sentences(vector, self._gather(query, vector, limit, where, scope))
        candidates = self._with_neighbours(vector, candidates, limit, where, scope)
        now = basis.clock()
        ranked = basis.ranker.rank(query, candidates, now)
        ranked, floor, below = self._above_floor(candidates, ranked, limit)
        warnings: list[str] = []
        ranked = self._rerank(query, ranked, now, warnings)[:limit]
        self._record_access(ranked, now)
        return SearchResults(
            warnings=warnings,
            floor=floor,
            below_floor=below,
            hits=[
                SearchHit(
                    memory=scored.candidate.memory,
                    score=scored.score,
                    matched_id=scored.candidate.matched_id,
                    similarity=scored.candidate.vector_similarity,
                    parts=dict(scored.parts),
                )
                for scored in ranked
            ],
        )

    def recall(
        self, query: str, token_budget: int, namespace: str | None, filters: Filters, scope: Scope
    ) -> Recall:
        if (
            isinstance(token_budget, bool)
            or not isinstance(token_budget, int)
            or not 1 <= token_budget <= MAX_TOKEN_BUDGET
        ):
            raise InvalidInputError(
                f"token_budget must be an integer from 1 to {MAX_TOKEN_BUDGET}; got {token_budget!r}."
            )
        hits = self.search(query, MAX_SEARCH_LIMIT, filters, namespace, scope).hits
        embedder = self._basis.embedder
        counter = embedder.count_tokens if isinstance(embedder, TokenCounting) else approximate_tokens
        return pack(hits, token_budget, counter, self._basis.clock())

    def _above_floor(
        self, candidates: Sequence[Candidate], ranked: Sequence[ScoredCandidate], limit: int
    ) -> tuple[list[ScoredCandidate], dict[str, float] | None, int]:
        """The ranked candidates that clear the relevance floor, in the ranker's order (search cuts
        them to ``limit`` after the rerankers), the floor as ``explain`` shows it, and how many of
        the ranker's best ``limit`` it held back.

        The floor comes before the rerankers: it judges each memory by its own features, not by its
        place, so its verdict is the same either way; this way rerankers spend their depth on
        memories that can be returned, and none can bring back one the floor held back."""
        floor = self._basis.relevance_floor
        if floor is None:
            return list(ranked), None, 0
        kept, background = floor.kept(candidates, ranked)
        top = {s.candidate.memory.id for s in ranked[:limit]}
        held_back = len(top - {s.candidate.memory.id for s in kept})
        return kept, floor.describe(background), held_back

    def _rerank(
        self, query: str, ranked: Sequence[ScoredCandidate], now: datetime, warnings: list[str]
    ) -> list[ScoredCandidate]:
        """The rerank stage: each reranker in turn reorders the best ``depth`` of what the stage
        before left, the rest following in order (see :mod:`..reranking`). One that raises, runs out
        of time or answers with anything but a reordering is skipped, with a sentence in ``warnings``."""
        out = list(ranked)
        for stage in self._basis.rerank_stages:
            out, warning = stage.apply(query, out, now)
            if warning is not None:
                warnings.append(warning)
        return out

    def _record_access(self, ranked: Sequence[ScoredCandidate], now: datetime) -> None:
        if self._basis.track_access and ranked:
            try:
                self._basis.store.record_access({s.candidate.memory.id: 1 for s in ranked}, now)
            except StorageError as exc:  # statistics only: the search still answers
                log.warning("Access statistics not recorded: %s", exc)

    def _gather(
        self, query: str, vector: Vector, limit: int, where: MemoryFilter, scope: Scope
    ) -> list[Candidate]:
        """Candidates from both channels, resolved to live heads that match the filter.

        Several versions of one chain, or matches whose head was deleted or no longer matches the
        filter, collapse into fewer candidates than asked for: fetch deeper until the vector channel
        alone yields ``limit`` candidates or the store is exhausted.
        """
        store = self._basis.store
        k = min(max(SEARCH_POOL, limit), MAX_KNN_K)
        keyword = store.capabilities.keyword_search
        while True:
            vector_pairs = store.knn(vector, k, where)
            keyword_pairs = store.keyword_search(query, k, where) if keyword else []
            heads = self._live_heads(
                [i for i, _ in vector_pairs] + [i for i, _ in keyword_pairs], where, scope
            )
            by_vector = _best_per_head(vector_pairs, heads)
            if len(by_vector) >= limit or len(vector_pairs) < k or k >= MAX_KNN_K:
                break
            k = min(k * 4, MAX_KNN_K)
        by_keyword = _best_per_head(keyword_pairs, heads)
        keyword_only = [h for h in by_keyword if h not in by_vector]
        similar = self._similarity_of(vector, keyword_only, by_keyword, heads, where)
        return _candidates(heads, by_vector, by_keyword, keyword_only, similar)

    def _similarity_of(
        self,
        vector: Vector,
        head_ids: Sequence[str],
        by_keyword: Mapping[str, tuple[str, float]],
        heads: Mapping[str, Memory],
        where: MemoryFilter,
    ) -> dict[str, tuple[str, float]]:
        """head id -> (the best matching version's id, its similarity) for keyword matches beyond
        the vector channel's depth, over the head and the version the keyword channel matched.
        Without it a memory only the keyword channel found would rank as if unrelated by meaning
        (no similarity), however close it is: LoCoMo dev turns hit@5 at limit 5 goes from 0.718 to
        0.763 with it (docs/benchmarks.md)."""
        if not head_ids:
            return {}
        members: dict[str, Memory] = {}  # the head and the matched version, each -> the head
        for head_id in head_ids:
            version = by_keyword[head_id][0]
            members[version] = members[head_id] = heads[version]
        ids = frozenset(members) if where.ids is None else frozenset(members) & where.ids
        around = dataclasses.replace(where, ids=ids)
        return _best_per_head(self._basis.store.knn(vector, len(members), around), members)

    def _discount_fact_sentences(self, vector: Vector, candidates: list[Candidate]) -> list[Candidate]:
        """Each two-sentence fact matched by one of its sentences rather than its whole text counts
        that sentence :data:`~..passages.PASSAGE_DISCOUNT` less (:func:`~..passages.discounted`).
        Not a turn, not a longer memory (see :mod:`..passages`), only among the vector channel's
        first ``DISCOUNT_DEPTH`` (those a sentence could lift to the top), and only where the store
        reads its vectors back (one read for the candidates it concerns)."""
        store = self._basis.store
        if not store.capabilities.read_vectors or not isinstance(store, VectorReading):
            return candidates
        facts = [  # one candidate a head: no id twice
            c.memory.id
            for c in candidates
            if c.vector_similarity is not None
            and c.vector_rank is not None
            and c.vector_rank <= DISCOUNT_DEPTH
            and c.matched_id == c.memory.id
            and speaker_of(c.memory) is None
            and is_two_sentences(c.memory.content)
        ]
        rows = store.vectors(facts) if facts else {}
        found = [memory_id for memory_id in facts if len(rows.get(memory_id, ())) > 1]
        if not found:
            return candidates
        wholes = dict(
            zip(found, cosines(np.stack([rows[i][0] for i in found]), vector).tolist(), strict=True)
        )
        return [
            dataclasses.replace(c, vector_similarity=discounted(c.vector_similarity, wholes[c.memory.id]))
            if c.memory.id in wholes and c.vector_similarity is not None
            else c
            for c in candidates
        ]

    def _with_neighbours(
        self,
        vector: Vector,
        candidates: list[Candidate],
        limit: int,
        where: MemoryFilter,
        scope: Scope,
    ) -> list[Candidate]:
        """Thread expansion: the turn just before and just after each leading candidate in its
        conversation joins the candidates (with its own vector and keyword scores), and every
        candidate learns which candidates are its neighbours. A reply ("Yes, it was wonderful")
        rarely matches a question by itself; the turn it answers often does.

        Leading: the best ``NEIGHBOUR_DEPTH`` by their better channel rank (``limit`` of them for a
        limit beyond ``SEARCH_POOL``, so that what is ranked never depends on a limit up to it), in a
        thread, and said by someone (:func:`..turns.speaker_of`): a memory without a speaker has no
        replies, so its neighbours cannot lift anything (LoCoMo dev: expanding the best 10 does as
        well as all)."""
        depth = limit if limit > SEARCH_POOL else NEIGHBOUR_DEPTH
        leading = sorted(
            candidates, key=lambda c: min(c.vector_rank or MAX_KNN_K, c.keyword_rank or MAX_KNN_K)
        )[:depth]
        threaded = [
            c.memory.id for c in leading if c.memory.thread is not None and speaker_of(c.memory) is not None
        ]
        if not threaded:
            return candidates
        live = dataclasses.replace(where, include_superseded=False)
        neighbours = self._basis.store.thread_neighbours(threaded, live)
        known = {c.memory.id for c in candidates}
        new_ids = sorted(
            {n for pair in neighbours.values() for n in pair if n is not None and n not in known}
        )
        if new_ids:
            candidates.extend(self._neighbour_candidates(vector, new_ids, live, scope))
        return _linked(candidates, neighbours)

    def _neighbour_candidates(
        self, vector: Vector, new_ids: Sequence[str], live: MemoryFilter, scope: Scope
    ) -> list[Candidate]:
        """The neighbours not yet among the candidates, with their similarity, not their keyword
        score: a neighbour sharing the query's words is almost always a keyword candidate already
        (the channel returns 4 x limit)."""
        store = self._basis.store
        around = dataclasses.replace(live, ids=frozenset(new_ids))
        similarity = dict(store.knn(vector, len(new_ids), around))
        now = self._basis.clock()
        return [
            Candidate(
                memory=memory,
                matched_id=memory.id if memory.id in similarity else None,
                vector_similarity=similarity.get(memory.id),
            )
            for memory in store.get(new_ids).values()
            if scope.can_read(memory) and memory.is_current and not self._basis.ttl.is_expired(memory, now)
        ]

    def _live_heads(self, memory_ids: Sequence[str], where: MemoryFilter, scope: Scope) -> dict[str, Memory]:
        """memory id -> its live head, for matches whose head is current, readable in ``scope`` and
        matches ``where``'s user-facing filters (a filter asks about the fact as it is now, not an old
        wording)."""
        matched = self._basis.store.get(list(dict.fromkeys(memory_ids)))
        heads = self._chains.resolve_heads(list(matched.values()))
        # The same filter, minus what selects versions rather than facts (heads are current by now).
        head_filter = dataclasses.replace(where, ids=None, superseded_by_in=None)
        now = self._basis.clock()
        return {
            memory_id: head
            for memory_id, head in heads.items()
            if head.is_current
            and scope.can_read(head)
            and not self._basis.ttl.is_expired(head, now)  # hidden at once, before any sweep
            and (not where.narrows_content or head_filter.matches(head))
        }


def _candidates(
    heads: Mapping[str, Memory],
    by_vector: Mapping[str, tuple[str, float]],
    by_keyword: Mapping[str, tuple[str, float]],
    keyword_only: Sequence[str],
    similar: Mapping[str, tuple[str, float]],
) -> list[Candidate]:
    """One candidate per head, the vector channel's first, with each channel's rank and score."""
    heads_by_id = {head.id: head for head in heads.values()}
    vector_ranks = {head: rank for rank, head in enumerate(by_vector, start=1)}
    keyword_ranks = {head: rank for rank, head in enumerate(by_keyword, start=1)}
    candidates = []
    for head_id in list(by_vector) + list(keyword_only):
        found = by_vector.get(head_id) or similar.get(head_id)
        matched, similarity = found if found is not None else (None, None)
        _, keyword_score = by_keyword.get(head_id, (None, None))
        candidates.append(
            Candidate(
                memory=heads_by_id[head_id],
                matched_id=matched,
                vector_similarity=similarity,
                vector_rank=vector_ranks.get(head_id),
                keyword_score=keyword_score,
                keyword_rank=keyword_ranks.get(head_id),
            )
        )
    return candidates


def _linked(
    candidates: Sequence[Candidate], neighbours: Mapping[str, tuple[str | None, str | None]]
) -> list[Candidate]:
    """Each candidate with the candidates just before and after it in its thread. A neighbour's own
    neighbours were not asked for, but adjacency goes both ways."""
    previous: dict[str, str] = {}
    following: dict[str, str] = {}
    for memory_id, (before, after) in neighbours.items():
        if before is not None:
            previous[memory_id] = before
            following.setdefault(before, memory_id)
        if after is not None:
            following[memory_id] = after
            previous.setdefault(after, memory_id)
    present = {c.memory.id for c in candidates}
    out = []
    for c in candidates:
        before, after = previous.get(c.memory.id), following.get(c.memory.id)
        before, after = (before if before in present else None), (after if after in present else None)
        out.append(
            c
            if before is None and after is None
            else dataclasses.replace(c, previous_id=before, next_id=after)
        )
    return out


def _best_per_head(
    pairs: Sequence[tuple[str, float]], heads: Mapping[str, Memory]
) -> dict[str, tuple[str, float]]:
    """head id -> (the matching version's id, its score), in channel order, the first (best) match
    of each chain kept; matches without a live head are dropped."""
    best: dict[str, tuple[str, float]] = {}
    for memory_id, score in pairs:
        if memory_id in heads and math.isfinite(score):
            best.setdefault(heads[memory_id].id, (memory_id, float(score)))
    return best
