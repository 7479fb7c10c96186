"""Supersession chains: an update is a new memory, and the old one points at it (``superseded_by``).
Search on old wording returns the head; only the head can be changed."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..errors import MemoryStateError
from ..models import Memory, MemoryFilter
from ..scope import Scope
from ..validation import MAX_CHAIN_LENGTH
from .basis import EngineBasis

log = logging.getLogger(__name__)


class Chains:
    """Follow chains in the store: heads, whole chains, and what a scope sees of them."""

    def __init__(self, basis: EngineBasis) -> None:
        self._basis = basis

    def require_current(self, memory: Memory, action: str, scope: Scope) -> None:
        if memory.is_deleted:
            raise MemoryStateError(
                f"Memory {memory.id} is deleted; it cannot be {action}d. Store a new memory."
            )
        if memory.superseded_by is not None:
            head = self.head_id(memory, scope)
            raise MemoryStateError(
                f"Memory {memory.id} was superseded; its current version is {head}. {action.capitalize()} "
                f"that one instead."
            )

    def as_seen(self, memory: Memory, scope: Scope, readable: frozenset[str] = frozenset()) -> Memory:
        """``memory`` as ``scope`` sees it: ``superseded_by`` names the next later version this scope
        may read, or nothing (a version made private later is not revealed, not even its id).
        ``readable``: ids already known readable (the history read), which need no lookup."""
        successor, skipped = memory.superseded_by, {memory.id}
        while successor is not None and successor not in skipped:
            if successor in readable:
                break
            found = self._basis.store.get([successor]).get(successor)
            if found is None:  # a broken pointer names no one's memory: shown as stored
                return memory
            if scope.can_read(found):
                break
            skipped.add(successor)
            successor = found.superseded_by
        else:
            successor = None
        if successor == memory.superseded_by:
            return memory
        return memory.model_copy(update={"superseded_by": successor})

    def head_id(self, memory: Memory, scope: Scope) -> str | None:
        """The id of the head of ``memory``'s chain, if this scope may read it."""
        heads = self.resolve_heads([memory])
        head = heads.get(memory.id)
        return head.id if head is not None and scope.can_read(head) else None

    def chain_of(self, memory: Memory, scope: Scope) -> list[Memory]:
        """Every version of ``memory``'s chain this scope may read, oldest first, ending with its head."""
        store = self._basis.store
        chain = [memory]
        frontier = {memory.id}
        seen = {memory.id}
        while frontier:  # predecessors: memories whose superseded_by points into the frontier
            where = MemoryFilter(namespace=None, include_deleted=True, superseded_by_in=frozenset(frontier))
            before = [m for m in store.list(where, MAX_CHAIN_LENGTH) if m.id not in seen]
            seen.update(m.id for m in before)
            chain = before + chain
            frontier = {m.id for m in before}
        current = memory
        while current.superseded_by and current.superseded_by not in seen:
            found = store.get([current.superseded_by]).get(current.superseded_by)
            if found is None:
                break
            chain.append(found)
            seen.add(found.id)
            current = found
        return sorted((m for m in chain if scope.can_read(m)), key=lambda m: (m.created_at, m.id))

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
            fetched = self._basis.store.get(sorted(missing))
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
