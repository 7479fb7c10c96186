"""Fast, deterministic stand-ins for unit tests and for the conformance suites' own tests.

Never a substitute for the real parts in end-to-end tests: the real store is SQLite + sqlite-vec and
the real embedder is all-MiniLM-L6-v2.
"""

from __future__ import annotations

import copy
import hashlib
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from mcp_memory_core import (
    Candidate,
    Memory,
    MemoryFilter,
    MemoryNotFoundError,
    ModelMismatchError,
    ScoredCandidate,
    StoreCapabilities,
    Vector,
)
from mcp_memory_core.list_order import ListOrder, SortKey, descending, sort_key
from mcp_memory_core.store_writes import check_update, checked_insert, checked_rows, updated

_WORD = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class TickingClock:
    """A clock for engine tests: each call is one millisecond after the previous one, so orderings
    are unambiguous; move ``now`` forward to travel in time."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


class HashEmbedder:
    """Bag-of-words vectors from hashed tokens: texts sharing words are similar, and the same text
    always gets the same vector. ``calls`` counts embedded texts (tests use it to check batching)."""

    def __init__(self, dimensions: int = 64) -> None:
        self._dimensions = dimensions
        self.loaded = False
        self.calls = 0

    @property
    def model_id(self) -> str:
        return f"hash-{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def load(self) -> None:
        self.loaded = True

    def _one(self, text: str) -> Vector:
        vector = np.zeros(self._dimensions, dtype=np.float32)
        for token in tokenize(text) or [text]:
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self._dimensions
            vector[index] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:  # every token cancelled out: fall back to a vector of the raw text
            vector[
                int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little")
                % self._dimensions
            ] = 1.0
            norm = 1.0
        return vector / norm

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        self.calls += len(texts)
        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        return np.stack([self._one(text) for text in texts]).astype(np.float32)

    def embed_query(self, text: str) -> Vector:
        self.calls += 1
        return self._one(text)

    def count_tokens(self, text: str) -> int:
        return len(tokenize(text))


class InMemoryStore:
    """The reference store: plain dicts and numpy brute force. It passes StoreConformance."""

    def __init__(self) -> None:
        self._rows: dict[str, Memory] = {}
        self._vectors: dict[str, Vector] = {}  # memory id -> (n, dims): its whole text, then passages
        self._lock = threading.RLock()
        self._depth = 0
        self._model: tuple[str, int] | None = None
        self.opened = False

    @property
    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities(keyword_search=True, concurrent_processes=False, read_vectors=True)

    @property
    def location(self) -> str:
        return ":memory:"

    def open(self, model_id: str, dimensions: int) -> None:
        with self._lock:
            if self._model is not None and self._model[0] != model_id:
                raise ModelMismatchError(self.location, self._model[0], model_id)
            self._model = (model_id, dimensions)
            self.opened = True

    def close(self) -> None:
        self.opened = False

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            saved = self._snapshot()
            self._depth = 1
            try:
                yield
            except BaseException:
                self._restore(saved)
                raise
            finally:
                self._depth = 0

    def _snapshot(self) -> tuple[Any, ...]:
        """What a rolled-back transaction puts back."""
        return dict(self._rows), dict(self._vectors)

    def _restore(self, saved: tuple[Any, ...]) -> None:
        self._rows, self._vectors = saved[0], saved[1]

    def insert(
        self, memories: Sequence[Memory], vectors: Vector, owners: Sequence[int] | None = None
    ) -> None:
        if self._model is None:
            raise RuntimeError("InMemoryStore.open() must be called before insert().")
        memories, array, rows_owner = checked_insert(memories, vectors, owners, self._model[1])
        with self.transaction():
            for memory in memories:
                if memory.id in self._rows:
                    raise ValueError(f"memory {memory.id} already exists")
            for index, memory in enumerate(memories):
                self._rows[memory.id] = memory
                self._vectors[memory.id] = array[[i for i, o in enumerate(rows_owner) if o == index]].copy()

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]:
        with self._lock:
            return {i: self._vectors[i].copy() for i in ids if i in self._vectors}

    def get(self, ids: Sequence[str]) -> dict[str, Memory]:
        with self._lock:
            return {i: self._rows[i] for i in ids if i in self._rows}

    def update_fields(self, memory_id: str, fields: Mapping[str, Any]) -> None:
        check_update(memory_id, fields)
        with self._lock:
            if memory_id not in self._rows:
                raise MemoryNotFoundError(memory_id)
            self._rows[memory_id] = updated(self._rows[memory_id], copy.deepcopy(dict(fields)))

    def record_access(self, counts: Mapping[str, int], when: datetime) -> None:
        with self.transaction():
            for memory_id, count in counts.items():
                if memory_id in self._rows:
                    current = self._rows[memory_id]
                    self._rows[memory_id] = current.model_copy(
                        update={"access_count": current.access_count + count, "last_accessed": when}
                    )

    def purge(self, ids: Sequence[str]) -> int:
        with self.transaction():
            removed = 0
            for memory_id in ids:
                if self._rows.pop(memory_id, None) is not None:
                    removed += 1
                self._vectors.pop(memory_id, None)
            return removed

    def _matching(self, where: MemoryFilter) -> list[Memory]:
        return [m for m in self._rows.values() if where.matches(m)]

    def knn(self, vector: Vector, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        with self._lock:
            rows = self._matching(where)
            if not rows or k <= 0:
                return []
            query = np.asarray(vector, dtype=np.float32)
            best = np.array([float((self._vectors[m.id] @ query).max()) for m in rows])
            order = np.argsort(-best, kind="stable")[:k]
            return [(rows[i].id, float(best[i])) for i in order]

    def keyword_search(self, query: str, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        terms = set(tokenize(query))
        with self._lock:
            scored = []
            for memory in self._matching(where):
                words = tokenize(memory.content)
                hits = sum(1 for w in words if w in terms)
                if hits:
                    scored.append((memory.id, hits / (len(words) ** 0.5)))
        scored.sort(key=lambda pair: (-pair[1], pair[0]))
        return scored[:k]

    def thread_neighbours(
        self, ids: Sequence[str], where: MemoryFilter
    ) -> dict[str, tuple[str | None, str | None]]:
        with self._lock:
            matching = self._matching(where)
        threads = {m.thread for m in matching if m.id in set(ids) and m.thread is not None}
        out: dict[str, tuple[str | None, str | None]] = {}
        for thread in threads:
            order = sorted(
                (m for m in matching if m.thread == thread), key=lambda m: (m.occurred_at, m.created_at, m.id)
            )
            for i, memory in enumerate(order):
                if memory.id in ids:
                    before = order[i - 1].id if i > 0 else None
                    after = order[i + 1].id if i + 1 < len(order) else None
                    out[memory.id] = (before, after)
        return out

    def list(
        self,
        where: MemoryFilter,
        limit: int,
        after: SortKey | None = None,
        order: ListOrder = "newest",
    ) -> list[Memory]:
        down = descending(order)
        with self._lock:
            rows = sorted(self._matching(where), key=lambda m: sort_key(m, order), reverse=down)
        if after is not None:
            rows = [m for m in rows if _beyond(sort_key(m, order), after, down)]
        return rows[:limit]

    def count(self, where: MemoryFilter) -> int:
        with self._lock:
            return len(self._matching(where))

    def namespaces(self, where: MemoryFilter | None = None) -> dict[str, int]:
        with self._lock:
            counts: dict[str, int] = {}
            rows = self._rows.values() if where is None else self._matching(where)
            for memory in rows:
                counts[memory.namespace] = counts.get(memory.namespace, 0) + int(memory.is_current)
            return counts

    def iter_all(self) -> Iterator[Memory]:
        with self._lock:
            rows = list(self._rows.values())
        yield from rows


class BackloggedStore(InMemoryStore):
    """The reference store with a passage backlog (:class:`~mcp_memory_core.protocols.PassageBacklog`):
    the engine writes a long memory's passages after acknowledging it. It passes StoreConformance."""

    def __init__(self) -> None:
        super().__init__()
        self._marked: dict[str, None] = {}  # memory ids, in the order they were marked

    def _snapshot(self) -> tuple[Any, ...]:
        return (*super()._snapshot(), dict(self._marked))

    def _restore(self, saved: tuple[Any, ...]) -> None:
        super()._restore(saved)
        self._marked = saved[2]

    def mark_passages_pending(self, ids: Sequence[str]) -> None:
        with self.transaction():
            for memory_id in ids:
                if memory_id in self._rows:
                    self._marked.setdefault(memory_id, None)

    def pending_passages(self, limit: int) -> list[tuple[str, str]]:
        with self._lock:
            return [(i, self._rows[i].content) for i in list(self._marked)[: max(0, limit)]]

    def complete_passages(self, memory_id: str, vectors: Vector) -> bool:
        if self._model is None:
            raise RuntimeError("BackloggedStore.open() must be called before complete_passages().")
        rows = checked_rows(vectors, self._model[1])
        with self.transaction():
            if memory_id not in self._marked:
                return False
            del self._marked[memory_id]
            if memory_id not in self._rows or len(self._vectors[memory_id]) > 1 or not len(rows):
                return False
            self._vectors[memory_id] = np.concatenate([self._vectors[memory_id], rows])
            return True

    def count_pending_passages(self) -> int:
        with self._lock:
            return len(self._marked)

    def purge(self, ids: Sequence[str]) -> int:
        with self.transaction():
            for memory_id in ids:
                self._marked.pop(memory_id, None)
            return super().purge(ids)


def _beyond(key: SortKey, after: SortKey, down: bool) -> bool:
    """``key`` comes after ``after`` in a list going ``down`` (descending) or up."""
    return key < after if down else key > after


class SimilarityRanker:
    """Orders candidates by their vector similarity alone (keyword-only matches last): for engine
    tests in venvs that hold no ranker plugin (the conformance sessions)."""

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        scored = [ScoredCandidate(c, c.vector_similarity or 0.0) for c in candidates]
        return sorted(scored, key=lambda s: -s.score)


class ReversingReranker:
    """A reranker for tests: it reverses the order of the candidates it is given (so a test sees
    that it ran and how deep), scoring them by their new place, and records the memory ids of every
    call in ``seen``; ``loads`` counts the loads that did something. It passes RerankerConformance."""

    def __init__(self, name: str = "reverse", depth: int = 10, heavy: bool = False) -> None:
        self.name = name
        self.depth = depth
        self.heavy = heavy
        self.loads = 0
        self.seen: list[list[str]] = []
        self._lock = threading.Lock()

    def load(self) -> None:
        with self._lock:
            if not self.loads:
                self.loads += 1

    def rerank(self, query: str, ranked: Sequence[ScoredCandidate], now: datetime) -> list[ScoredCandidate]:
        self.seen.append([s.candidate.memory.id for s in ranked])
        out = []
        for place, scored in enumerate(reversed(ranked)):
            score = float(len(ranked) - place)
            out.append(ScoredCandidate(scored.candidate, score, {**scored.parts, self.name: score}))
        return out


class FailingReranker(ReversingReranker):
    """A reranker that goes wrong as told, for the engine's tests. ``how``:

    ``raise`` (ValueError from rerank), ``load`` (RuntimeError from load), ``sleep`` (answers
    correctly, but only after ``seconds`` or when ``release`` is set), ``drop`` (loses the last
    candidate), ``repeat`` (returns the first candidate again instead of the last), ``foreign``
    (replaces the last with a memory it was not given), ``nan`` (a NaN score), ``none`` (returns None).
    """

    def __init__(self, how: str, *, name: str = "failing", depth: int = 10, seconds: float = 5.0) -> None:
        super().__init__(name=name, depth=depth)
        self.how = how
        self.seconds = seconds
        self.release = threading.Event()
        self.calls = 0

    def load(self) -> None:
        if self.how == "load":
            raise RuntimeError("model file missing")
        super().load()

    def rerank(self, query: str, ranked: Sequence[ScoredCandidate], now: datetime) -> list[ScoredCandidate]:
        self.calls += 1
        out = super().rerank(query, ranked, now)
        if self.how == "raise":
            raise ValueError("the model is confused")
        if self.how == "sleep":
            self.release.wait(self.seconds)
        elif self.how == "drop":
            out = out[:-1]
        elif self.how == "repeat":
            out = [*out[:-1], out[0]]
        elif self.how == "foreign":
            stranger = Candidate(memory=Memory(content="a memory it was not given"), matched_id=None)
            out = [*out[:-1], ScoredCandidate(stranger, 0.0, {self.name: 0.0})]
        elif self.how == "nan":
            out = [ScoredCandidate(out[0].candidate, float("nan"), out[0].parts), *out[1:]]
        elif self.how == "none":
            return None  # type: ignore[return-value]
        return out
