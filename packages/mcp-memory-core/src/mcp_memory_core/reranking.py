"""The rerank stage of search: zero or more :class:`~.protocols.Reranker` plugins reorder the best
candidates, and none of them can fail a search.

Each reranker sees the ``depth`` best candidates the stage before it left (the ranker's order after
the relevance floor, or the reranker before it); the others keep their order, after them. Search
cuts to its ``limit`` only after the last reranker, so a reranker deeper than ``limit`` can lift a
candidate into the results, and one shallower than ``limit`` leaves the rest of them as ranked: a
reranker's cost per search is its depth, whatever the caller's limit.

A call runs in a daemon worker thread and search waits at most ``timeout`` seconds for it. A late
call cannot be stopped: its result is dropped whenever it comes, and until it has returned, searches
skip that reranker at once rather than pile up threads behind it. A reranker that raises, is late,
failed to load, or returns anything but a reordering of what it was given (a candidate dropped,
repeated or not given to it; a score or part that is not a finite number) is skipped: the order
stays as it was and the search gets one sentence in its warnings.

Only the order, the scores and the parts come from a reranker: the candidates in the result are the
engine's own, so a reranker cannot change what a memory says, and it only ever sees candidates the
engine resolved for the caller's Scope.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime

from .errors import InvalidInputError, PluginError
from .models import Candidate, ScoredCandidate
from .protocols import Reranker

log = logging.getLogger(__name__)

_MAX_REASON = 200  # characters of an exception's message a warning repeats


class _Skipped(Exception):
    """Why a reranker's answer is not used: what follows "reranker 'x' skipped: "."""


def _describe(exc: BaseException) -> str:
    """``ValueError: the message`` on one line, cut to a length a warning can carry."""
    message = " ".join(str(exc).split())
    if len(message) > _MAX_REASON:
        message = message[: _MAX_REASON - 1] + "…"
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


class RerankStage:
    """One configured reranker as search runs it: loaded once, called under a time limit, checked.

    Raises :class:`~.errors.PluginError` at construction for an object that is not a reranker or
    declares an impossible ``depth``: a plugin bug is reported when the engine is built, not per search.
    """

    def __init__(self, reranker: Reranker, timeout: float) -> None:
        if not isinstance(reranker, Reranker):
            raise PluginError(
                f"{type(reranker).__name__} is not a reranker: it needs name, depth, heavy, load() and "
                "rerank(query, ranked, now)."
            )
        name, depth, heavy = reranker.name, reranker.depth, reranker.heavy
        if not isinstance(name, str) or not name:
            raise PluginError(f"{type(reranker).__name__} has no name: give it the name it registers under.")
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise PluginError(f"reranker {name!r} declares depth {depth!r}; it must be a whole number ≥ 1.")
        if not isinstance(heavy, bool):
            raise PluginError(f"reranker {name!r} declares heavy {heavy!r}; it must be True or False.")
        if not (_finite(timeout) and timeout > 0):
            raise InvalidInputError(
                f"the reranker time limit must be a positive number of seconds; got {timeout!r}."
            )
        self.reranker = reranker
        self.name = name
        self.depth = depth
        self.heavy = heavy
        self.timeout = float(timeout)
        self._load_lock = threading.Lock()
        self._loaded = False
        self._load_error: str | None = None
        self._late_lock = threading.Lock()
        self._late: set[threading.Thread] = set()  # calls past their time limit, still running

    def load(self) -> None:
        """Load the reranker, once (thread-safe). A failure is logged and remembered, never raised:
        searches then skip this reranker and say why (a model that failed to load stays failed
        until the server restarts)."""
        if self._loaded or self._load_error is not None:
            return
        with self._load_lock:
            if self._loaded or self._load_error is not None:
                return
            started = time.perf_counter()
            try:
                self.reranker.load()
            except Exception as exc:
                self._load_error = _describe(exc)
                log.error("Reranker %r could not load; searches skip it: %s", self.name, self._load_error)
                return
            self._loaded = True
            log.info("Reranker %r loaded in %.2f s", self.name, time.perf_counter() - started)

    def apply(
        self, query: str, ranked: Sequence[ScoredCandidate], now: datetime
    ) -> tuple[list[ScoredCandidate], str | None]:
        """``ranked`` with its best ``depth`` reordered by the reranker, and no warning; or
        ``ranked`` as it was and the one sentence that says why the reranker was skipped."""
        window = list(ranked[: self.depth])
        if not window:
            return list(ranked), None
        try:
            if self.heavy:
                self.load()  # normally done by warm(); otherwise this search pays for it, once
            reordered = self._checked(window, self._call(query, window, now))
        except _Skipped as why:
            warning = f"reranker {self.name!r} skipped: {why}"
            log.warning("Search: %s", warning)
            return list(ranked), warning
        return reordered + list(ranked[self.depth :]), None

    def _call(self, query: str, window: list[ScoredCandidate], now: datetime) -> object:
        """The reranker's answer, from a worker thread, within the time limit."""
        if self._load_error is not None:
            raise _Skipped(f"it failed to load: {self._load_error}")
        with self._late_lock:
            self._late = {worker for worker in self._late if worker.is_alive()}
            if self._late:
                raise _Skipped(
                    f"its call from an earlier search is still running, past the {self.timeout} s limit"
                )
        # Copies: the reranker may keep or change what it is given without touching the engine's.
        given = [ScoredCandidate(s.candidate, s.score, dict(s.parts)) for s in window]
        answer: list[object] = []
        failure: list[BaseException] = []
        done = threading.Event()
        started = time.perf_counter()

        def work() -> None:
            try:
                self.load()
                if self._load_error is None:
                    answer.append(self.reranker.rerank(query, given, now))
            except BaseException as exc:  # the search reports it; nothing escapes this thread
                failure.append(exc)
            finally:
                done.set()
                late = time.perf_counter() - started
                if late > self.timeout:
                    log.info(
                        "Reranker %r returned after %.1f s, past its %s s limit: its answer was dropped",
                        self.name,
                        late,
                        self.timeout,
                    )

        worker = threading.Thread(target=work, name=f"mcp-memory-rerank-{self.name}", daemon=True)
        worker.start()
        if not done.wait(self.timeout):
            with self._late_lock:
                self._late.add(worker)
            raise _Skipped(f"it took longer than {self.timeout} s")
        if self._load_error is not None:
            raise _Skipped(f"it failed to load: {self._load_error}")
        if failure:
            raise _Skipped(f"it raised {_describe(failure[0])}")
        return answer[0]

    def _checked(self, window: list[ScoredCandidate], answer: object) -> list[ScoredCandidate]:
        """The engine's own candidates in the reranker's order, with its scores and parts added to
        theirs; or _Skipped if ``answer`` is not a reordering of ``window``."""
        if not isinstance(answer, list | tuple):
            raise _Skipped(f"it returned {type(answer).__name__}, not a list of ScoredCandidate")
        ids: list[str] = []
        for item in answer:
            if not isinstance(item, ScoredCandidate) or not isinstance(item.candidate, Candidate):
                raise _Skipped(f"it returned a {type(item).__name__} where a ScoredCandidate belongs")
            ids.append(item.candidate.memory.id)
        ours = {s.candidate.memory.id: s for s in window}
        counts = Counter(ids)
        missing = len(ours.keys() - counts.keys())
        repeated = sum(1 for count in counts.values() if count > 1)
        foreign = len(counts.keys() - ours.keys())
        if missing or repeated or foreign:
            problems = [
                f"{missing} missing" if missing else "",
                f"{repeated} more than once" if repeated else "",
                f"{foreign} it was not given" if foreign else "",
            ]
            raise _Skipped(
                f"it did not return a reordering of the {len(window)} candidates it was given "
                f"({', '.join(p for p in problems if p)})"
            )
        out = []
        for memory_id, item in zip(ids, answer, strict=True):
            if not _finite(item.score):
                raise _Skipped(f"it gave a score of {item.score!r}, not a finite number")
            parts = item.parts
            if not isinstance(parts, Mapping) or not all(
                isinstance(key, str) and _finite(value) for key, value in parts.items()
            ):
                raise _Skipped("its parts are not names with finite numbers")
            mine = ours[memory_id]
            out.append(
                ScoredCandidate(
                    mine.candidate,
                    float(item.score),
                    {**mine.parts, **{key: float(value) for key, value in parts.items()}},
                )
            )
        return out
