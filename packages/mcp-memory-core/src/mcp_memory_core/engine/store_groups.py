"""Stores that wait for each other are written together: one transaction for every store waiting.

Each store checks for duplicates and writes in a transaction, and a store's transactions exclude each
other; twenty clients storing at once used to queue for that lock and commit one by one. With
:class:`StoreGroups` (on stores that declare ``capabilities.group_commit``) a store that finds no group
being written writes alone at once, exactly as before (a lone store never waits); stores that arrive
meanwhile queue, and the first of them writes the next group for all queued by then
(:class:`~..gathering.Gathering`). A group is one transaction in two passes:

1. every store's duplicate check, before anything of the group is written (reads of the committed
   state, as each would have made alone: nothing else can commit while the transaction holds the lock);
2. the writes, in arrival order. A store whose answer could have depended on an earlier store of its
   group (the same content, or similar enough to be reported beside it), or that would replace a memory
   under the conflict policy 'supersede', is written after the group, alone, so it finds what it would
   have found one at a time.

Every store is acknowledged after the commit that wrote it. If the group's transaction fails (one
store's write refused, the commit itself), nothing of it was written and each of its stores is then
written alone: one store's failure is its own.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from ..gathering import Gathering, Ticket
from ..models import Memory, SimilarMemory, StoreOutcome
from ..protocols import Store
from ..scope import Scope
from ..vector_math import cosines
from .passage_filler import Embedded

log = logging.getLogger(__name__)

MAX_GROUP = 32  # stores a transaction writes at most

# What a store's duplicate check found: the memory it repeats (then nothing is written), and the
# memories at or above the dedup threshold, most similar first.
Found = tuple[Memory | None, list[SimilarMemory]]


def normalize_content(text: str) -> str:
    """What "the same content" means for duplicates: case-folded, whitespace collapsed."""
    return " ".join(text.casefold().split())


@dataclass(frozen=True, eq=False)
class NewMemory:
    """A store, validated, screened and embedded: what is left is to check it and write it."""

    fields: dict[str, Any]
    embedded: Embedded
    when: datetime | None
    scope: Scope


class StoreWriter(Protocol):
    """What the groups need of the engine's writes (``engine.writes.Writes``)."""

    @property
    def dedup_threshold(self) -> float: ...

    def write_alone(self, new: NewMemory) -> StoreOutcome: ...
    def check(self, new: NewMemory) -> Found: ...
    def write_checked(self, new: NewMemory, found: Found) -> StoreOutcome: ...
    def superseding(self, found: Found) -> SimilarMemory | None: ...


class StoreGroups(Gathering[NewMemory]):
    """``write(new)``: ``new`` stored (or found a duplicate), in a group with the stores waiting beside it."""

    interrupted = "The store was interrupted before it was written; try again."

    def __init__(self, writer: StoreWriter, store: Store, *, max_group: int = MAX_GROUP) -> None:
        super().__init__()
        self._writer = writer
        self._store = store
        self.max_group = max_group

    def write(self, new: NewMemory) -> StoreOutcome:
        outcome: StoreOutcome = self._serve(new)
        return outcome

    def _take(self, leader: Ticket[NewMemory]) -> list[Ticket[NewMemory]]:
        """The stores queued first, in the order they arrived (whichever of them woke to lead)."""
        batch = self._pending[: self.max_group]
        return batch if leader in batch else [*batch[:-1], leader]

    def _run(self, batch: list[Ticket[NewMemory]]) -> None:
        if len(batch) == 1:
            batch[0].result = self._writer.write_alone(batch[0].request)
            return
        try:
            alone = self._write_group(batch)
        except BaseException as exc:  # rolled back: no answer of the group stands
            for ticket in batch:
                ticket.result = None
            if not isinstance(exc, Exception):
                raise
            log.warning(
                "a group of %d stores failed (%s); writing each alone", len(batch), type(exc).__name__
            )
            alone = batch
        for ticket in alone:
            try:
                ticket.result = self._writer.write_alone(ticket.request)
            except Exception as exc:
                ticket.error = exc

    def _write_group(self, batch: list[Ticket[NewMemory]]) -> list[Ticket[NewMemory]]:
        """Write the group in one transaction; the tickets left to write alone after it."""
        writer, alone = self._writer, []
        with self._store.transaction():
            found = [writer.check(ticket.request) for ticket in batch]  # every read before any write
            written: list[NewMemory] = []
            for ticket, what in zip(batch, found, strict=True):
                new = ticket.request
                if writer.superseding(what) is not None or _answer_depends_on(
                    new, written, writer.dedup_threshold
                ):
                    alone.append(ticket)
                    continue
                ticket.result = writer.write_checked(new, what)
                if ticket.result.status == "stored":
                    written.append(new)
        log.debug("stored %d of a group of %d in one transaction", len(batch) - len(alone), len(batch))
        return alone


def _answer_depends_on(new: NewMemory, written: list[NewMemory], threshold: float) -> bool:
    """Whether one of ``written`` (earlier stores of the group) could change ``new``'s answer: the same
    content, or a whole-text similarity at or above the dedup threshold (whoever's memory it is)."""
    if not written:
        return False
    content = normalize_content(new.fields["content"])
    if any(normalize_content(w.fields["content"]) == content for w in written):
        return True
    earlier = np.stack([w.embedded.vectors[0] for w in written])
    return bool(np.any(cosines(earlier, new.embedded.vectors[0]) >= threshold))
