"""Work that arrives together is done together: one caller serves every caller waiting behind it.

The pattern under the embedding batches (:mod:`.embedding_batches`) and the store groups
(:mod:`.engine.store_groups`), "natural" batching without a timer:

- a caller that finds no work running runs its own at once (a lone caller never waits);
- a caller that arrives while work runs queues; when that work ends, the first queued caller runs the
  next batch for everyone queued by then (as :meth:`Gathering._take` chooses), and each gets its own
  result or error.

A subclass says what one batch is (:meth:`Gathering._take`) and does it (:meth:`Gathering._run`).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import MemoryServerError

R = TypeVar("R")


@dataclass(eq=False)
class Ticket(Generic[R]):
    """One caller's request, and what the batch that served it left for it."""

    request: R
    result: Any = None
    error: BaseException | None = None
    done: bool = False


class Gathering(ABC, Generic[R]):
    """Callers' requests served in shared batches, one batch at a time. Thread-safe."""

    interrupted = "The work was interrupted; try again."

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._pending: list[Ticket[R]] = []
        self._running = False

    def _serve(self, request: R) -> Any:
        """The result :meth:`_run` left for ``request`` (its error raised), once its batch is done."""
        ticket = Ticket(request)
        with self._changed:
            self._pending.append(ticket)
            if self._running:
                self._queued()
            while self._running and not ticket.done:
                self._changed.wait()
            if not ticket.done:  # nobody runs a batch: this caller runs the next one
                self._running = True
                batch = self._take(ticket)
                taken = set(map(id, batch))
                self._pending = [t for t in self._pending if id(t) not in taken]
        if not ticket.done:
            try:
                self._run_batch(batch)
            finally:
                with self._changed:
                    self._running = False
                    self._ended()
                    self._changed.notify_all()
        if ticket.error is not None:
            raise ticket.error
        return ticket.result

    def _run_batch(self, batch: list[Ticket[R]]) -> None:
        try:
            self._run(batch)
        except Exception as exc:
            for ticket in batch:
                if ticket.result is None and ticket.error is None:
                    ticket.error = exc
        finally:
            for ticket in batch:
                if ticket.result is None and ticket.error is None:  # interrupted: nobody waits forever
                    ticket.error = MemoryServerError(self.interrupted)
                ticket.done = True

    def _ended(self) -> None:
        """Called (under the lock) as a batch ends, before the next caller may lead."""

    def _queued(self) -> None:
        """Called (under the lock) when a caller starts waiting behind a running batch; tests hook it."""

    @abstractmethod
    def _take(self, leader: Ticket[R]) -> list[Ticket[R]]:
        """The tickets of the next batch, the leader's always among them (called under the lock)."""

    @abstractmethod
    def _run(self, batch: list[Ticket[R]]) -> None:
        """Do the batch: set each ticket's ``result`` (not None) or ``error``. An exception raised here
        becomes the error of every ticket without one."""
