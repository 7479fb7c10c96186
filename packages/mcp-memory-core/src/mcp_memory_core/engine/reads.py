"""Reads: one memory with its chain, pages of current memories, counts, namespaces, statistics,
and what an export reads (one's own memories and their vectors)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

from ..errors import InvalidInputError, MemoryNotFoundError
from ..filters import NO_FILTERS, Filters
from ..list_order import NEWEST, ListOrder, SortKey, sort_key, validate_order
from ..models import Memory, MemoryFilter, MemoryView, Page
from ..protocols import StoredVectors, TagCounting, Vector, VectorReading
from ..scope import ALL_NAMESPACES, Scope
from ..validation import (
    MAX_LIST_LIMIT,
    decode_cursor,
    encode_cursor,
    utf8_size,
    validate_flag,
    validate_id,
    validate_limit,
)
from .basis import EngineBasis
from .chains import Chains
from .maintenance import Maintenance

LIST_CHUNK = 100  # rows list_memories reads at a time while filling a page
# A start of an id, short of a whole one: 8 to 35 of its characters (hex digits and hyphens).
ID_PREFIX = re.compile(r"[0-9a-f][0-9a-f-]{7,34}")


class Reads:
    """Every read but search; the facade documents each call."""

    def __init__(self, basis: EngineBasis, chains: Chains, maintenance: Maintenance) -> None:
        self._basis = basis
        self._chains = chains
        self._maintenance = maintenance

    def get(self, memory_id: str, history: bool, scope: Scope) -> MemoryView:
        basis, chains = self._basis, self._chains
        history = validate_flag(history, "history")
        basis.ready()
        memory_id = self._full_id(memory_id, scope)
        memory = basis.readable(memory_id, scope)
        chain = chains.chain_of(memory, scope) if history else None
        readable = frozenset(m.id for m in chain or ())
        seen = [chains.as_seen(m, scope, readable) for m in chain] if chain is not None else None
        return MemoryView(
            memory=chains.as_seen(memory, scope, readable),
            head_id=chains.head_id(memory, scope),
            status=self._status(memory),
            history=seen,
        )

    def _full_id(self, memory_id: str, scope: Scope) -> str:
        """The id itself, or the one id of a memory this scope may read that starts with
        ``memory_id`` (8 characters or more): what others may not read is never counted, so a
        prefix reveals nothing of it. The store matches the prefix (``id_prefix``), so only the
        memories it names are read."""
        prefix = str(memory_id).strip().lower()
        try:
            return validate_id(memory_id)
        except InvalidInputError:
            if re.fullmatch(r"[0-9a-f][0-9a-f-]{0,6}", prefix):
                raise InvalidInputError(
                    f"{prefix!r} is too short to find a memory by: give at least 8 characters of its id."
                ) from None
            if not ID_PREFIX.fullmatch(prefix):
                raise  # the one sentence saying it is not an id
        where = dataclasses.replace(
            scope.reading(None, include_deleted=True, include_superseded=True), id_prefix=prefix
        )
        found = [m.id for m in self.each(where) if scope.can_read(m)]
        if len(found) > 1:
            raise InvalidInputError(
                f"The id prefix {prefix!r} matches {len(found)} memories: give more characters of the id."
            )
        if not found:
            raise MemoryNotFoundError(prefix)
        return found[0]

    def _status(self, memory: Memory) -> str:
        expiry = self._basis.ttl.expires_at(memory)
        if memory.is_deleted:
            return "expired" if expiry is not None and memory.deleted_at == expiry else "deleted"
        if expiry is not None and expiry <= self._basis.clock():
            return "expired"
        if memory.superseded_by is not None:
            return "superseded"
        return "current"

    def page(
        self,
        limit: int,
        cursor: str | None,
        filters: Filters,
        namespace: str | None,
        scope: Scope,
        measure: Callable[[Memory], int] | None,
        page_limit: int | None,
        order: str = NEWEST,
    ) -> Page:
        basis = self._basis
        limit = validate_limit(limit, MAX_LIST_LIMIT)
        sort = validate_order(order)
        after = decode_cursor(cursor, sort) if cursor else None
        namespaces = scope.read_namespaces(namespace)
        basis.ready()
        self._maintenance.sweep()  # lists must not show what has expired: tombstone it first (cheap when none)
        where = basis.scoped(filters.where(None, include_superseded=False), scope, namespaces)
        cap = basis.limits.page_bytes if page_limit is None else page_limit
        page, more, capped = self._fill_page(where, limit, after, measure or _json_bytes, cap, sort)
        return Page(
            memories=page,
            next_cursor=encode_cursor(page[-1], sort) if more and page else None,
            total=basis.store.count(where),
            capped=capped,
        )

    def _fill_page(
        self,
        where: MemoryFilter,
        limit: int,
        after: SortKey | None,
        measure: Callable[[Memory], int],
        cap: int,
        order: ListOrder,
    ) -> tuple[list[Memory], bool, bool]:
        """Up to ``limit`` memories after ``after`` whose sizes add up to at most ``cap`` (at least one),
        read in chunks so a page of big memories does not read a thousand; then (more remain, cut by size)."""
        page: list[Memory] = []
        used = 0
        store = self._basis.store
        while True:
            wanted = min(limit - len(page), LIST_CHUNK) + 1  # one more than needed: are there more?
            # the default order is asked as before, so a store written before orders existed still lists
            rows = (
                store.list(where, wanted, after)
                if order == NEWEST
                else store.list(where, wanted, after, order)
            )
            for memory in rows:
                if len(page) == limit:
                    return page, True, False
                size = measure(memory)
                if page and used + size > cap:
                    return page, True, True
                page.append(memory)
                used += size
            if len(rows) < wanted:
                return page, False, False
            after = sort_key(page[-1], order)

    def tag_counts(self, namespace: str | None, scope: Scope) -> dict[str, int]:
        basis = self._basis
        namespaces = scope.read_namespaces(namespace)
        basis.ready()
        self._maintenance.sweep()  # as a list: nothing expired is counted
        where = basis.scoped(NO_FILTERS.where(None, include_superseded=False), scope, namespaces)
        if isinstance(basis.store, TagCounting):
            return dict(basis.store.tag_counts(where))
        counts: Counter[str] = Counter()
        for memory in self.each(where):
            counts.update(memory.tags)
        return dict(counts)

    def each(self, where: MemoryFilter) -> Iterator[Memory]:
        """Every memory matching ``where``, newest first, read ``LIST_CHUNK`` at a time."""
        after: SortKey | None = None
        while True:
            rows = self._basis.store.list(where, LIST_CHUNK, after)
            yield from rows
            if len(rows) < LIST_CHUNK:
                return
            after = sort_key(rows[-1], NEWEST)

    def count(self, namespace: str | None, scope: Scope) -> int:
        where = self._basis.read_filter(scope, namespace, include_superseded=False)
        self._basis.ready()
        return self._basis.store.count(where)

    def namespaces(self, scope: Scope) -> dict[str, int]:
        self._basis.ready()
        where = scope.reading(scope.readable, include_deleted=True, include_superseded=True)
        return self._basis.store.namespaces(where)

    def iter_memories(self, namespace: str | None, scope: Scope) -> Iterator[Memory]:
        namespaces = scope.read_namespaces(namespace)
        self._basis.ready()
        return (m for m in self._basis.store.iter_all() if _exportable(m, scope, namespaces))

    def memory_vectors(self, ids: Sequence[str], scope: Scope) -> StoredVectors:
        basis = self._basis
        basis.ready()
        store = basis.store
        if not store.capabilities.read_vectors or not isinstance(store, VectorReading):
            raise InvalidInputError(
                f"This store ({store.location}) cannot read its vectors back: export without vectors."
            )
        namespaces = scope.read_namespaces(ALL_NAMESPACES)
        mine = [m.id for m in store.get(ids).values() if _exportable(m, scope, namespaces)]
        found: dict[str, Vector] = dict(store.vectors(mine)) if mine else {}
        return StoredVectors(basis.embedder.model_id, basis.embedder.dimensions, found)

    def stats(self, scope: Scope) -> dict[str, Any]:
        basis = self._basis
        basis.ready()
        count = basis.store.count
        home = frozenset({scope.default_namespace})
        by_type = {
            str(t): count(scope.reading(home, include_superseded=False, types=frozenset({t})))
            for t in basis.ttl.ttl
        }
        return {
            "user": scope.principal,
            "teams": sorted(scope.teams),
            "namespace": scope.default_namespace,
            "home_namespaces": list(scope.home_namespaces),
            "namespaces": self.namespaces(scope),
            "current_in_namespace": count(scope.reading(home, include_superseded=False)),
            "by_type": by_type,
            "stored_versions_all_namespaces": count(
                scope.reading(scope.readable, include_deleted=True, include_superseded=True)
            ),
            "embedder": basis.embedder.model_id,
            "store": basis.store.location,
            "ranker": type(basis.ranker).__name__,
            "rerankers": [stage.name for stage in basis.rerank_stages],
            "ttl": {str(t): (d.total_seconds() if d is not None else None) for t, d in basis.ttl.ttl.items()},
        }


def _json_bytes(memory: Memory) -> int:
    return utf8_size(memory.model_dump_json())


def _exportable(memory: Memory, scope: Scope, namespaces: Collection[str] | None) -> bool:
    """One's own memories, in a readable namespace (of ``namespaces`` when given)."""
    return (
        memory.owner == scope.principal
        and scope.can_read(memory)
        and (namespaces is None or memory.namespace in namespaces)
    )
