"""The memory engine: the one place that owns the rules about memories, for every store.

Rules owned here: input validation, supersession chains (update = new memory, old one points at it;
search on old wording returns the head), soft delete (tombstones never appear in search or lists),
chain-head resolution and de-duplication of search candidates, over-fetching so filtered or
chain-collapsed searches never come back short, paging cursors.
Stores only keep rows and vectors; rankers only order candidates.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from .errors import InvalidInputError, MemoryNotFoundError, MemoryStateError
from .models import (
    DEFAULT_NAMESPACE,
    Candidate,
    DeleteOutcome,
    ImportOutcome,
    Memory,
    MemoryFilter,
    MemoryView,
    Page,
    SearchHit,
    StoreOutcome,
    UpdateOutcome,
    utcnow,
)
from .protocols import Embedder, Ranker, Store

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 100_000
MAX_SEARCH_LIMIT = 100
MAX_LIST_LIMIT = 1000
MAX_KNN_K = 4096  # sqlite-vec's ceiling, and plenty for any store
MAX_CHAIN_LENGTH = 10_000


def validate_id(memory_id: str) -> str:
    try:
        return str(uuid.UUID(str(memory_id).strip()))
    except (ValueError, AttributeError, TypeError):
        raise InvalidInputError(f"{memory_id!r} is not a memory id (expected a UUID).") from None


def validate_content(content: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise InvalidInputError("content must be a non-empty string.")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInputError(
            f"content is {len(content):,} characters; the limit is {MAX_CONTENT_CHARS:,}. "
            "Split it into several memories."
        )
    return content


def validate_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInputError("metadata must be an object of key/value pairs.")
    if not all(isinstance(key, str) for key in metadata):
        raise InvalidInputError("metadata keys must be strings.")
    try:
        return dict(json.loads(json.dumps(dict(metadata), allow_nan=False)))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be JSON-serializable: {exc}") from None


def validate_limit(limit: int, maximum: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidInputError(f"limit must be an integer from 1 to {maximum}; got {limit!r}.")
    return limit


def encode_cursor(memory: Memory) -> str:
    raw = json.dumps([memory.created_at.isoformat(), memory.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, memory_id = json.loads(base64.urlsafe_b64decode(padded.encode()))
        return datetime.fromisoformat(created), validate_id(memory_id)
    except (ValueError, TypeError, binascii.Error, InvalidInputError):
        raise InvalidInputError(
            "cursor is not valid: pass the next_cursor of a previous list_memories result."
        ) from None


def _batched(items: Iterable[Memory], size: int) -> Iterator[list[Memory]]:
    batch: list[Memory] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class MemoryEngine:
    """Store, search, update, delete and list memories over any Store, Embedder and Ranker."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        ranker: Ranker,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.ranker = ranker
        self.namespace = namespace
        self.clock = clock
        self._opened = False

    # -- lifecycle -------------------------------------------------------------------------------
    def open(self) -> None:
        """Bind the store to the embedder's model (cheap: the model itself is not loaded)."""
        if not self._opened:
            self.store.open(self.embedder.model_id, self.embedder.dimensions)
            self._opened = True

    def warm(self) -> None:
        """Open the store and load the model, so the first real call is fast."""
        self.open()
        self.embedder.load()

    def close(self) -> None:
        self.store.close()
        self._opened = False

    # -- writes ----------------------------------------------------------------------------------
    def store_memory(self, content: str, metadata: Mapping[str, Any] | None = None) -> StoreOutcome:
        content = validate_content(content)
        meta = validate_metadata(metadata)
        self.open()
        vector = self.embedder.embed_documents([content])
        now = self.clock()
        memory = Memory(
            content=content, metadata=meta, created_at=now, updated_at=now, namespace=self.namespace
        )
        self.store.insert([memory], vector)
        return StoreOutcome(memory=memory, status="stored")

    def import_memories(
        self,
        memories: Iterable[Memory],
        *,
        batch_size: int = 64,
        on_batch: Callable[[int], None] | None = None,
    ) -> ImportOutcome:
        """Insert whole memories (ids, timestamps, chains as given), embedding in batches and writing
        one transaction per batch. Ids already present are skipped and counted, so a re-run is a no-op.
        ``on_batch`` is called with the number of memories handled after each batch (progress bars).
        """
        self.open()
        inserted = skipped = 0
        for batch in _batched(memories, batch_size):
            for memory in batch:
                validate_content(memory.content)
            existing = self.store.get([m.id for m in batch])
            fresh = [m for m in batch if m.id not in existing]
            if fresh:
                vectors = self.embedder.embed_documents([m.content for m in fresh])
                with self.store.transaction():
                    self.store.insert(fresh, vectors)
            inserted += len(fresh)
            skipped += len(batch) - len(fresh)
            if on_batch is not None:
                on_batch(len(batch))
        return ImportOutcome(inserted=inserted, skipped=skipped)

    def update_memory(
        self, memory_id: str, content: str, metadata: Mapping[str, Any] | None = None
    ) -> UpdateOutcome:
        """Create the new version and point the old head at it, in one transaction.

        Only the current head of a chain can be updated: updating an older version would fork the
        chain, so the error names the head to update instead. ``metadata=None`` keeps the old metadata.
        """
        memory_id = validate_id(memory_id)
        content = validate_content(content)
        self.open()
        old = self._require(memory_id)
        self._require_current(old, "update")
        meta = validate_metadata(metadata) if metadata is not None else dict(old.metadata)
        vector = self.embedder.embed_documents([content])
        with self.store.transaction():
            old = self._require(memory_id)  # re-read under the write lock: no two updates fork a chain
            self._require_current(old, "update")
            now = self.clock()
            new = old.model_copy(
                update={
                    "id": str(uuid.uuid4()),
                    "content": content,
                    "metadata": meta,
                    "created_at": now,
                    "updated_at": now,
                    "access_count": 0,
                    "last_accessed": None,
                }
            )
            self.store.insert([new], vector)
            self.store.update_fields(old.id, {"superseded_by": new.id, "updated_at": now})
        superseded = old.model_copy(update={"superseded_by": new.id, "updated_at": now})
        return UpdateOutcome(memory=new, superseded=superseded)

    def delete_memory(self, memory_id: str) -> DeleteOutcome:
        """Soft delete: set the tombstone; the row stays, the memory never appears in search again.

        Deleting the head removes the fact from search (older versions resolve to a deleted head).
        Deleting an older version removes only that version: its wording no longer matches, and the
        chain still resolves to its head.
        """
        memory_id = validate_id(memory_id)
        self.open()
        with self.store.transaction():
            memory = self._require(memory_id)
            if memory.is_deleted:
                return DeleteOutcome(memory=memory, status="already_deleted", head_id=self._head_id(memory))
            now = self.clock()
            self.store.update_fields(memory_id, {"deleted_at": now, "updated_at": now})
        deleted = memory.model_copy(update={"deleted_at": now, "updated_at": now})
        return DeleteOutcome(memory=deleted, status="deleted", head_id=self._head_id(deleted))

    # -- reads -----------------------------------------------------------------------------------
    def get_memory(self, memory_id: str) -> MemoryView:
        """The version asked for, as it is (never silently swapped), with the head of its chain."""
        memory_id = validate_id(memory_id)
        self.open()
        memory = self._require(memory_id)
        if memory.is_deleted:
            status = "deleted"
        elif memory.superseded_by is not None:
            status = "superseded"
        else:
            status = "current"
        return MemoryView(memory=memory, head_id=self._head_id(memory), status=status)

    def list_memories(self, limit: int = 50, cursor: str | None = None) -> Page:
        """Current memories (chain heads, no tombstones), newest first."""
        limit = validate_limit(limit, MAX_LIST_LIMIT)
        after = decode_cursor(cursor) if cursor else None
        self.open()
        where = MemoryFilter(namespace=self.namespace, include_superseded=False)
        rows = self.store.list(where, limit + 1, after)
        page, more = rows[:limit], len(rows) > limit
        return Page(
            memories=page,
            next_cursor=encode_cursor(page[-1]) if more and page else None,
            total=self.store.count(where),
        )

    def count(self) -> int:
        self.open()
        return self.store.count(MemoryFilter(namespace=self.namespace, include_superseded=False))

    def search_memories(self, query: str, limit: int = 10) -> list[SearchHit]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string.")
        limit = validate_limit(limit, MAX_SEARCH_LIMIT)
        self.open()
        vector = self.embedder.embed_query(query)
        where = MemoryFilter(namespace=self.namespace, include_superseded=True)
        k = min(max(4 * limit, 32), MAX_KNN_K)
        while True:
            pairs = self.store.knn(vector, k, where)
            candidates = self._candidates(pairs)
            # Several versions of one chain, or matches whose head was deleted, collapse into fewer
            # results than asked for: fetch deeper until we have enough or the store is exhausted.
            if len(candidates) >= limit or len(pairs) < k or k >= MAX_KNN_K:
                break
            k = min(k * 4, MAX_KNN_K)
        ranked = self.ranker.rank(query, candidates, self.clock())
        return [
            SearchHit(
                memory=scored.candidate.memory,
                score=scored.score,
                matched_id=scored.candidate.matched_id,
                similarity=scored.candidate.vector_similarity,
                parts=dict(scored.parts),
            )
            for scored in ranked[:limit]
        ]

    # -- chains ----------------------------------------------------------------------------------
    def _require(self, memory_id: str) -> Memory:
        found = self.store.get([memory_id]).get(memory_id)
        if found is None:
            raise MemoryNotFoundError(memory_id)
        return found

    def _require_current(self, memory: Memory, action: str) -> None:
        if memory.is_deleted:
            raise MemoryStateError(
                f"Memory {memory.id} is deleted; it cannot be {action}d. Store a new memory."
            )
        if memory.superseded_by is not None:
            head = self._head_id(memory)
            raise MemoryStateError(
                f"Memory {memory.id} was superseded; its current version is {head}. {action.capitalize()} "
                f"that one instead."
            )

    def _head_id(self, memory: Memory) -> str | None:
        heads = self.resolve_heads([memory])
        head = heads.get(memory.id)
        return head.id if head is not None else None

    def resolve_heads(self, memories: Sequence[Memory]) -> dict[str, Memory]:
        """Map each memory's id to the head of its chain (the memory itself if it is the head).

        Follows ``superseded_by`` in batches. A chain whose pointer leads to a missing row (a broken
        database) maps to the last memory reachable, and is logged.
        """
        known: dict[str, Memory] = {m.id: m for m in memories}
        for _ in range(MAX_CHAIN_LENGTH):
            missing = {
                m.superseded_by for m in known.values() if m.superseded_by and m.superseded_by not in known
            }
            if not missing:
                break
            fetched = self.store.get(sorted(missing))
            for lost in missing - fetched.keys():
                log.error("Broken supersession chain: memory %s is referenced but missing", lost)
            if not fetched:
                break
            known.update(fetched)
        heads: dict[str, Memory] = {}
        for memory in memories:
            current, seen = memory, {memory.id}
            while current.superseded_by and current.superseded_by in known:
                current = known[current.superseded_by]
                if current.id in seen:
                    log.error("Cycle in supersession chain at memory %s", current.id)
                    break
                seen.add(current.id)
            heads[memory.id] = current
        return heads

    def _candidates(self, pairs: Sequence[tuple[str, float]]) -> list[Candidate]:
        """Resolve KNN matches to live chain heads, one candidate per head (its best match wins)."""
        matched = self.store.get([memory_id for memory_id, _ in pairs])
        heads = self.resolve_heads(list(matched.values()))
        best: dict[str, Candidate] = {}
        for rank, (memory_id, similarity) in enumerate(pairs, start=1):
            if memory_id not in matched or not math.isfinite(similarity):
                continue
            head = heads[memory_id]
            if not head.is_current:
                continue  # the chain ends in a tombstone (or is broken): the fact is gone
            if head.id not in best:
                best[head.id] = Candidate(
                    memory=head, matched_id=memory_id, vector_similarity=float(similarity), vector_rank=rank
                )
        return list(best.values())
