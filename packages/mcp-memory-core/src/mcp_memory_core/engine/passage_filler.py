"""A long memory's sentences embedded after its store is acknowledged.

A memory of several sentences gets a vector for its whole text and one per sentence
(:mod:`..passages`). Before the acknowledgement only the whole text's vector is needed: the
near-duplicate check and the answer use it. With a store that keeps a durable backlog
(:class:`~..protocols.PassageBacklog`), ``store_memory`` and ``update_memory`` of such a memory embed
its whole text only, write it with a pending mark in the write's own transaction (both commit or
neither does) and answer; a background filler then embeds the sentences and adds them. Until it has,
the memory is found by its whole text (and its words) alone, so a search first finishes the backlog
(:meth:`PassageFiller.finish`): what a search finds never depends on whether the filler has caught up,
and a search right after a burst of long stores pays for their sentences once, as the stores would
have without a backlog.

Nothing acknowledged is lost: a crash leaves the mark on disk beside the memory, and the next
warm-up (the server's, after a restart) finishes the backlog. The filler never takes the model from
a caller: it embeds only when no caller's embedding has run or waited for ``passage_fill_idle``
seconds, a few sentences per call (``FILL_CHARS``), and looks again before each call. The backlog is
bounded (``passage_backlog`` memories): past it a store embeds its sentences at once, as without a
backlog, so a sustained stream of long memories never grows it without end. Bulk imports always
embed inline (they batch well already).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelMismatchError
from ..passages import split_passages
from ..protocols import PassageBacklog, Vector
from .basis import EngineBasis

log = logging.getLogger(__name__)

FILL_CHARS = 600  # characters of sentences per background embed call (at least one sentence): ~10 ms
RETRY_SECONDS = (1.0, 60.0)  # after an error the filler waits the first, doubling up to the second
ATTEMPTS = 5  # a memory whose sentences fail this often in a row keeps its whole text's vector only
FINISH_MEMORIES = 16  # marked memories a search embeds the sentences of in one call


@dataclass(frozen=True)
class Embedded:
    """A write's vectors as ``insert`` takes them, and whether its passages were left for later."""

    vectors: Vector
    owners: list[int] | None
    deferred: bool = False


@dataclass
class _Work:
    """The memory the filler is embedding: its passages and the rows embedded so far."""

    memory_id: str
    texts: list[str]
    rows: list[Vector] = field(default_factory=list)
    done: int = 0


class PassageFiller:
    """Defers long memories' passages (:meth:`embed`, :meth:`mark`) and fills them in one daemon
    thread per engine (:meth:`wake`, :meth:`resume`, :meth:`stop`); :meth:`drain_step` is one step
    of that thread's work."""

    def __init__(self, basis: EngineBasis) -> None:
        self._basis = basis
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._work: _Work | None = None
        self._failures: tuple[str, int] = ("", 0)  # the memory that failed last, how often in a row
        self._retry = RETRY_SECONDS[0]
        self._steps = threading.Lock()  # one filling at a time: the thread's steps, a search's finish
        self._finish_failed = False  # a search's finish failed: searches leave it to the thread

    @property
    def backlog(self) -> PassageBacklog | None:
        store = self._basis.store
        return store if isinstance(store, PassageBacklog) else None

    # -- the write's side ------------------------------------------------------------------------
    def embed(self, content: str) -> Embedded:
        """The vectors a write of ``content`` needs before its acknowledgement: its whole text's alone
        when its passages can wait (deferral on, a backlog, several passages, the backlog not full),
        else every passage's, as without a backlog."""
        basis, backlog = self._basis, self.backlog
        if (
            basis.defer_passages
            and backlog is not None
            and len(split_passages(content)) > 1
            and backlog.count_pending_passages() < basis.passage_backlog
        ):
            return Embedded(basis.embeddings.embed_documents([content]), None, deferred=True)
        return Embedded(*basis.embed_shared([content]))

    def mark(self, memory_id: str, embedded: Embedded) -> None:
        """Inside the write's transaction, right after its ``insert``: a deferred memory's mark."""
        if embedded.deferred:
            backlog = self.backlog
            assert backlog is not None
            backlog.mark_passages_pending([memory_id])

    def written(self, embedded: Embedded) -> None:
        """After the write committed: a deferred memory wakes the filler."""
        if embedded.deferred:
            self.wake()

    # -- the search's side -----------------------------------------------------------------------
    def finish(self) -> None:
        """Before a search reads the store: embed and add the sentences of every marked memory (this
        process's or another's), in calls of ``FINISH_MEMORIES`` memories through the shared
        embedding batches. A failure is logged and the search goes on (those memories are found by
        their whole text and words); searches then leave the backlog to the filler thread, whose
        retries and give-up rule handle it, until it has completed a memory again."""
        backlog = self.backlog
        waiting = backlog.count_pending_passages() if backlog is not None and not self._finish_failed else 0
        if not waiting:
            return
        assert backlog is not None
        # Writers may mark more meanwhile: at most the backlog's bound more, then the search goes on.
        rounds = -(-(waiting + self._basis.passage_backlog) // FINISH_MEMORIES)
        with self._steps:
            self._work = None  # the thread's half-embedded memory, if any, is done here whole
            for _ in range(rounds):
                pending = backlog.pending_passages(FINISH_MEMORIES)
                if not pending or not self._finish_batch(backlog, pending):
                    return

    def _finish_batch(self, backlog: PassageBacklog, pending: list[tuple[str, str]]) -> bool:
        texts = [split_passages(content)[1:] for _, content in pending]
        flat = [text for own in texts for text in own]
        try:
            rows = self._basis.embeddings.embed_documents(flat) if flat else self._no_rows()
            start = 0
            for (memory_id, _), own in zip(pending, texts, strict=True):
                backlog.complete_passages(memory_id, rows[start : start + len(own)])
                start += len(own)
        except ModelMismatchError:
            raise
        except Exception as exc:
            self._finish_failed = True
            log.warning(
                "Adding the sentence vectors of %d waiting memories before a search failed (%s: %s); "
                "the background filler retries them",
                len(pending),
                type(exc).__name__,
                exc,
            )
            self.wake()
            return False
        return True

    # -- the filler thread -----------------------------------------------------------------------
    def resume(self) -> None:
        """Start the filler if the store holds marks (left by a crash, or by another process)."""
        backlog = self.backlog
        waiting = backlog.count_pending_passages() if backlog is not None else 0
        if waiting:
            log.info("%d stored memories still wait for their sentences' vectors", waiting)
            self.wake()

    def wake(self) -> None:
        """Tell the filler there is work, starting its thread on first use."""
        with self._lock:
            if self._stopping.is_set():
                return
            self._wake.set()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="mcp-memory-passage-filler", daemon=True
                )
                self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the filler (its marks stay on disk; the next warm-up finishes them) and wait for it."""
        with self._lock:
            self._stopping.set()
            self._wake.set()
            thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def restart(self) -> None:
        """Allow the filler to run again after :meth:`stop` (the engine was opened again)."""
        with self._lock:
            self._stopping.clear()
            self._work = None

    def drain_step(self) -> str:
        """One step of the filler: ``"empty"`` (no marks), ``"busy"`` (a caller's embedding runs or
        waits: nothing embedded), ``"embedded"`` (a few more sentences of the current memory) or
        ``"completed"`` (the memory's passages were added, or another process had done it)."""
        backlog = self.backlog
        if backlog is None:
            return "empty"
        work = self._work
        if work is None:
            pending = backlog.pending_passages(1)
            if not pending:
                return "empty"
            memory_id, content = pending[0]
            work = self._work = _Work(memory_id, split_passages(content)[1:])
        if work.done < len(work.texts):
            chunk = _chunk(work.texts, work.done)
            rows = self._basis.embeddings.embed_if_idle(chunk)
            if rows is None:
                return "busy"
            work.rows.append(rows)
            work.done += len(chunk)
            if work.done < len(work.texts):
                return "embedded"
        self._work = None
        rows = np.concatenate(work.rows) if work.rows else self._no_rows()
        if backlog.complete_passages(work.memory_id, rows):
            log.debug("added %d passage vectors to memory %s", len(rows), work.memory_id)
        return "completed"

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()
            pause = self._until_idle()
            if pause > 0:
                self._stopping.wait(pause)
                continue
            try:
                step = self.attempt()
            except ModelMismatchError as exc:
                log.warning("The passage filler stops: %s", exc)
                return
            if step == "failed":
                self._stopping.wait(self._retry)
                self._retry = min(self._retry * 2, RETRY_SECONDS[1])
                continue
            self._retry = RETRY_SECONDS[0]
            if step == "empty":
                self._wake.wait()  # set by the next deferral, or by stop()

    def attempt(self) -> str:
        """:meth:`drain_step`, its error logged (by id: never the content, it is the user's) as
        ``"failed"``. A memory that fails ``ATTEMPTS`` times in a row is given up: its mark is cleared
        and it keeps its whole text's vector (found by it and by its words), with a warning saying so."""
        try:
            with self._steps:
                step = self.drain_step()
        except ModelMismatchError:
            raise
        except Exception as exc:
            memory_id = self._work.memory_id if self._work is not None else "?"
            self._work = None
            previous, count = self._failures
            count = count + 1 if previous == memory_id else 1
            self._failures = (memory_id, count)
            log.warning(
                "Adding the sentence vectors of memory %s failed (%s: %s; attempt %d of %d)",
                memory_id,
                type(exc).__name__,
                exc,
                count,
                ATTEMPTS,
            )
            if count >= ATTEMPTS and memory_id != "?":
                self._give_up(memory_id)
            return "failed"
        if step in ("completed", "empty"):
            self._failures = ("", 0)
            self._finish_failed = False
        return step

    def _give_up(self, memory_id: str) -> None:
        backlog = self.backlog
        assert backlog is not None
        backlog.complete_passages(memory_id, self._no_rows())
        self._failures = ("", 0)
        log.warning(
            "Gave up adding the sentence vectors of memory %s after %d attempts: it is found by its "
            "whole text and its words, and updating it embeds them again",
            memory_id,
            ATTEMPTS,
        )

    def _no_rows(self) -> Vector:
        """No passage vectors: ``complete_passages`` then clears the mark and adds nothing."""
        return np.zeros((0, self._basis.embedder.dimensions), dtype=np.float32)

    def _until_idle(self) -> float:
        """Seconds to wait before callers have been quiet for ``passage_fill_idle`` (0: go now)."""
        wanted = self._basis.passage_fill_idle
        quiet = self._basis.embeddings.idle_for()
        if quiet is None:
            return max(wanted, 0.001)
        return max(0.0, wanted - quiet)


def _chunk(texts: list[str], start: int) -> list[str]:
    """The texts from ``start`` up to ``FILL_CHARS`` characters (at least one)."""
    end, size = start + 1, len(texts[start])
    while end < len(texts) and size + len(texts[end]) <= FILL_CHARS:
        size += len(texts[end])
        end += 1
    return texts[start:end]
