"""Imports: whole memories (ids, timestamps, chains as given) checked before anything is written,
then written in batches, reusing an export's vectors where this engine's model made them."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..errors import ImportRecordError, InvalidInputError
from ..models import ImportOutcome, Memory, MemoryFilter, derived_id
from ..passages import split_passages
from ..protocols import BulkLoading, StoredVectors, Vector
from ..scope import Scope
from ..secret_scan import SecretRefusedError, describe, import_refusal
from ..validation import (
    nul_refusals,
    validate_content,
    validate_memory_times,
    validate_metadata,
    validate_thread,
    with_older_versions,
)
from .basis import EngineBasis

log = logging.getLogger(__name__)


class Imports:
    """``import_memories`` and ``check_import``; the facade documents each call."""

    def __init__(self, basis: EngineBasis) -> None:
        self._basis = basis

    def import_memories(
        self,
        memories: Iterable[Memory],
        batch_size: int,
        on_batch: Callable[[int], None] | None,
        scope: Scope,
        vectors: StoredVectors | None,
    ) -> ImportOutcome:
        store = self._basis.store
        self._basis.ready()
        memories, refused, redacted = self.screen(list(memories))
        self.check(memories, scope)
        memories, renamed = self._claim_ids(memories, scope)
        given = self._reusable(vectors)
        if redacted:  # a redacted memory's vectors were made from its secret: embed its new text
            given = {memory_id: rows for memory_id, rows in given.items() if memory_id not in redacted}
        if renamed:
            given = {renamed.get(memory_id, memory_id): rows for memory_id, rows in given.items()}
        inserted = skipped = reused = 0
        # Sized by what is new: re-running a finished import must not make the store rebuild anything.
        bulk = store.bulk_load(self._absent(memories)) if isinstance(store, BulkLoading) else None
        with bulk if bulk is not None else contextlib.nullcontext():
            for batch in _batched(memories, batch_size):
                existing = store.get([m.id for m in batch])
                fresh = [m for m in batch if m.id not in existing]
                if fresh:
                    array, owners, count = self._import_vectors(fresh, given)
                    with store.transaction():
                        store.insert(fresh, array, owners)
                    reused += count
                inserted += len(fresh)
                skipped += len(batch) - len(fresh)
                if on_batch is not None:
                    on_batch(len(batch))
        return ImportOutcome(
            inserted=inserted, skipped=skipped, reused=reused, refused=refused, redacted=redacted
        )

    def screen(self, memories: Sequence[Memory]) -> tuple[list[Memory], dict[str, str], dict[str, str]]:
        """The memories an import may write, their secrets handled by the secret policy (placeholders
        under ``redact``); the refused ones by id with why (a NUL; a secret under ``refuse``; a newer
        version refused); the redacted ones by id with what was redacted where."""
        refused = nul_refusals(memories)
        kept: list[Memory] = []
        redacted: dict[str, str] = {}
        for memory in memories:
            if memory.id in refused:
                continue
            try:
                screened = self._basis.secrets.screen(
                    memory.content, memory.metadata, memory.tags, memory.thread
                )
            except SecretRefusedError as exc:
                refused[memory.id] = import_refusal(exc.findings)
                continue
            if screened.findings:
                redacted[memory.id] = describe(screened.findings)
                update = {"content": screened.content, "metadata": screened.metadata or {}}
                memory = memory.model_copy(
                    update={**update, "tags": screened.tags, "thread": screened.thread}
                )
            kept.append(memory)
        refused = with_older_versions(memories, refused)
        return [m for m in kept if m.id not in refused], refused, redacted

    def _reusable(self, vectors: StoredVectors | None) -> Mapping[str, Vector]:
        """The rows of ``vectors`` if this engine's model made them, else none (they are embedded)."""
        if vectors is None or not vectors.rows:
            return {}
        embedder = self._basis.embedder
        mine = (embedder.model_id, embedder.dimensions)
        if (vectors.model_id, vectors.dimensions) != mine:
            log.info(
                "import: the vectors given are of %s (%d-d), not of %s (%d-d): embedding again",
                vectors.model_id,
                vectors.dimensions,
                *mine,
            )
            return {}
        return vectors.rows

    def _import_vectors(
        self, memories: Sequence[Memory], given: Mapping[str, Vector]
    ) -> tuple[Vector, list[int] | None, int]:
        """The rows to insert for ``memories`` and each row's memory index (None: one row each, as
        from ``embed``): given rows where they fit the memory's passages, embedded ones otherwise;
        and how many memories reused given rows."""
        fitting: list[Vector | None] = []
        for memory in memories:
            array = given.get(memory.id)
            fits = array is not None and len(array) == len(split_passages(memory.content))
            fitting.append(array if fits else None)
        missing = [index for index, array in enumerate(fitting) if array is None]
        if len(missing) == len(memories):  # nothing given fits: embed them all, as before vectors travelled
            vectors, owners = self._basis.embed([m.content for m in memories])
            return vectors, owners, 0
        if missing:
            embedded, owners = self._basis.embed([memories[i].content for i in missing])
            rows_of: list[list[int]] = [[] for _ in missing]
            for row, owner in enumerate(owners if owners is not None else range(len(missing))):
                rows_of[owner].append(row)
            for position, index in enumerate(missing):
                fitting[index] = embedded[rows_of[position]]
        ordered = [array for array in fitting if array is not None]  # every memory has its rows now
        owner_list = [index for index, array in enumerate(ordered) for _ in range(len(array))]
        return (
            np.concatenate(ordered).astype(np.float32, copy=False),
            owner_list,
            len(memories) - len(missing),
        )

    def _claim_ids(self, memories: list[Memory], scope: Scope) -> tuple[list[Memory], dict[str, str]]:
        """``memories`` with every id that is another user's memory replaced by one of the principal's
        own (``superseded_by`` inside the import follows), and the ids replaced (old → new)."""
        taken = self._foreign_ids([m.id for m in memories], scope)
        if not taken:
            return memories, {}
        in_use = {m.id for m in memories}
        renamed: dict[str, str] = {}
        for old in sorted(taken):
            new = old
            while new in in_use or new in taken:  # planted under a derived id too: derive again
                new = derived_id("import-owner", scope.principal, new)
                if new not in in_use:
                    taken |= self._foreign_ids([new], scope)
            renamed[old] = new
            in_use.add(new)

        def claimed(memory: Memory) -> Memory:
            if memory.id not in renamed and memory.superseded_by not in renamed:
                return memory
            link = memory.superseded_by and renamed.get(memory.superseded_by, memory.superseded_by)
            return memory.model_copy(update={"id": renamed.get(memory.id, memory.id), "superseded_by": link})

        return [claimed(m) for m in memories], renamed

    def _foreign_ids(self, memory_ids: Sequence[str], scope: Scope) -> set[str]:
        """The ids among ``memory_ids`` that the store holds as another user's memory (two counts per
        thousand ids; the memories are read only where the counts differ)."""
        store = self._basis.store
        foreign: set[str] = set()
        for start in range(0, len(memory_ids), 1000):
            ids = frozenset(memory_ids[start : start + 1000])
            every = MemoryFilter(ids=ids, namespace=None, include_deleted=True, include_superseded=True)
            own = scope.owning(None, ids=ids, include_deleted=True, include_superseded=True)
            if store.count(every) != store.count(own):
                found = store.get(sorted(ids))
                foreign |= {memory_id for memory_id, m in found.items() if m.owner != scope.principal}
        return foreign

    def _absent(self, memories: Sequence[Memory]) -> int:
        """How many of ``memories`` the store does not hold yet (what an import will insert)."""
        present = 0
        for batch in _batched(memories, 1000):
            ids = frozenset(m.id for m in batch)
            present += self._basis.store.count(
                MemoryFilter(ids=ids, namespace=None, include_deleted=True, include_superseded=True)
            )
        return len(memories) - present

    def check(self, memories: Sequence[Memory], scope: Scope) -> None:
        """Refuse the first memory (in input order) that ``import_memories`` may not write."""
        now = self._basis.clock()
        in_import = {m.id: m for m in memories}
        elsewhere = {
            m.superseded_by for m in memories if m.superseded_by and m.superseded_by not in in_import
        }
        stored = self._basis.store.get(sorted(elsewhere)) if elsewhere else {}
        links = {m.id: m.superseded_by for m in stored.values() if m.owner == scope.principal}
        loops = _loops({**links, **{m.id: m.superseded_by for m in memories}})
        seen: set[str] = set()
        limits = self._basis.limits
        for memory in memories:
            try:
                if memory.id in seen:
                    raise InvalidInputError("this id appears twice in the import.")
                seen.add(memory.id)
                validate_content(memory.content, limits.content_bytes)
                validate_metadata(memory.metadata, limits.metadata_bytes)
                if memory.owner != scope.principal:
                    raise InvalidInputError(
                        f"this memory belongs to {memory.owner!r}; only {scope.principal!r}'s own "
                        "memories can be imported here."
                    )
                scope.write_namespace(memory.namespace)
                validate_memory_times(memory, now)
                if memory.thread is not None:
                    validate_thread(memory.thread)
                if memory.superseded_by is not None:
                    newer = in_import.get(memory.superseded_by) or stored.get(memory.superseded_by)
                    _check_link(memory, newer)
                if memory.id in loops:
                    raise InvalidInputError(
                        f"superseded_by leads back to this memory ({' → '.join(loops[memory.id])}): "
                        "the newest version of a chain has no superseded_by."
                    )
            except InvalidInputError as exc:
                raise ImportRecordError(memory.id, str(exc)) from None


def _batched(items: Iterable[Memory], size: int) -> Iterator[list[Memory]]:
    batch: list[Memory] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _loops(links: Mapping[str, str | None]) -> dict[str, list[str]]:
    """Each id on a loop of ``links`` (id → the id it is superseded by) → the loop from it back to it.
    Every id is walked once."""
    loops: dict[str, list[str]] = {}
    walked: set[str] = set()
    for start in links:
        path: list[str] = []
        at: dict[str, int] = {}
        node: str | None = start
        while node is not None and node in links and node not in walked and node not in at:
            at[node] = len(path)
            path.append(node)
            node = links[node]
        if node is not None and node in at:
            loop = path[at[node] :]
            for index, member in enumerate(loop):
                loops[member] = [*loop[index:], *loop[:index], member]
        walked.update(path)
    return loops


def _check_link(memory: Memory, newer: Memory | None) -> None:
    """An imported version points at a newer version of its own chain: same owner, same namespace.
    Another user's memory is reported exactly like a missing one."""
    if newer is None or newer.owner != memory.owner:
        raise InvalidInputError(
            f"superseded_by names memory {memory.superseded_by}, which is neither in this import nor one "
            "of your memories: export the whole chain (every version) and import it together."
        )
    if newer.namespace != memory.namespace:
        raise InvalidInputError(
            f"superseded_by names memory {newer.id} in namespace {newer.namespace!r}, but this memory is "
            f"in {memory.namespace!r}: a chain of versions never crosses namespaces."
        )
