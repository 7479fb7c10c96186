"""Texts that arrive together are embedded together: one embed call for every caller waiting.

A model embeds a batch of texts several times faster per text than one text at a time (one
onnxruntime run and its fixed cost instead of many, and no two runs fighting over the same cores).
The server embeds from many request threads at once; :class:`EmbeddingBatcher` sits between the engine
and its embedder and turns their calls into shared batches, "naturally":

- a caller that finds no batch running runs its own at once (a lone caller never waits);
- a caller that arrives while a batch runs queues; when that batch ends, the first queued caller runs
  the next one for everyone queued by then (up to ``max_texts`` texts), and each gets its own rows.

Queries and documents are never mixed in one call (a model may embed them differently): a batch holds
the kind of the caller that runs it. Queries share a call only when the embedder offers
:class:`~.protocols.QueryBatching`; otherwise each is embedded at once by its own ``embed_query``.
An error of an embed call is raised to every caller of that batch; the next batch runs as usual.

Background work (a long memory's sentences, embedded after its store was acknowledged) runs only
when no caller embeds: :meth:`EmbeddingBatcher.embed_if_idle` embeds at once when nothing runs or
waits, and otherwise nothing; :meth:`EmbeddingBatcher.idle_for` says how long callers have been quiet.
A caller arriving during background work waits for that one call, as behind any batch.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from .errors import MemoryServerError
from .gathering import Gathering, Ticket
from .protocols import Embedder, QueryBatching, Vector, text_list

log = logging.getLogger(__name__)

Kind = Literal["documents", "queries"]
DEFAULT_MAX_TEXTS = 64  # the texts of one batch: 20 one-sentence stores, or 3 long memories of 17 passages


@dataclass(frozen=True, eq=False)
class _Request:
    kind: Kind
    texts: list[str]


class EmbeddingBatcher(Gathering[_Request]):
    """The embedder's ``embed_documents`` and ``embed_query``, shared by callers that arrive together.

    Thread-safe. ``max_texts`` bounds one batch (a single caller with more texts still runs alone).
    """

    interrupted = "Embedding was interrupted; try again."

    def __init__(
        self,
        embedder: Embedder,
        *,
        max_texts: int = DEFAULT_MAX_TEXTS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_texts < 1:
            raise ValueError(f"max_texts must be >= 1, got {max_texts}")
        super().__init__()
        self.embedder = embedder
        self.max_texts = max_texts
        self._background = False  # the running call is background work (embed_if_idle)
        self._direct = 0  # queries embedded at once, outside the queue, running now
        self._clock = clock
        self._quiet_since = clock()  # when the last caller's embedding ended
        # Checked once: an isinstance check on a protocol costs tens of µs.
        self._batch_queries = isinstance(embedder, QueryBatching)

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """An ``(len(texts), dimensions)`` array, as ``embedder.embed_documents(texts)`` returns it."""
        items = text_list(texts)
        if not items:
            return self.embedder.embed_documents([])
        vectors: Vector = self._serve(_Request("documents", items))
        return vectors

    def embed_query(self, text: str) -> Vector:
        """A ``(dimensions,)`` vector, as ``embedder.embed_query(text)`` returns it."""
        if not isinstance(text, str):
            raise TypeError(f"text is {type(text).__name__}, expected str")
        if not self._batch_queries:  # nothing to share: embedded at once, as before
            with self._changed:
                self._direct += 1
            try:
                vector: Vector = self.embedder.embed_query(text)
            finally:
                with self._changed:
                    self._direct -= 1
                    self._quiet_since = self._clock()
            return vector
        row: Vector = self._serve(_Request("queries", [text]))[0]
        return row

    # -- background work ---------------------------------------------------------------------------
    def idle_for(self) -> float | None:
        """Seconds since the last caller's embedding ended; None while one runs or waits."""
        with self._changed:
            if (self._running and not self._background) or self._pending or self._direct:
                return None
            return self._clock() - self._quiet_since

    def embed_if_idle(self, texts: Sequence[str]) -> Vector | None:
        """``embed_documents(texts)`` now if no caller's embedding runs or waits (callers arriving
        meanwhile wait for this call); else None, and nothing is embedded."""
        items = text_list(texts)
        with self._changed:
            if self._running or self._pending or self._direct:
                return None
            self._running = self._background = True
        try:
            vectors: Vector = self._counted(self.embedder.embed_documents(items), items)
        finally:
            with self._changed:
                self._running = self._background = False
                self._changed.notify_all()
        return vectors

    # -- the queue ---------------------------------------------------------------------------------
    def _ended(self) -> None:
        self._quiet_since = self._clock()

    def _take(self, leader: Ticket[_Request]) -> list[Ticket[_Request]]:
        """The queued requests of the leader's kind, in arrival order, within max_texts; the leader's
        own request always (alone if it holds more)."""
        batch, size, full = [], len(leader.request.texts), False
        for ticket in self._pending:
            if ticket is leader:
                batch.append(ticket)
            elif ticket.request.kind == leader.request.kind and not full:
                full = size + len(ticket.request.texts) > self.max_texts
                if not full:
                    batch.append(ticket)
                    size += len(ticket.request.texts)
        return batch

    # -- one batch ---------------------------------------------------------------------------------
    def _run(self, batch: list[Ticket[_Request]]) -> None:
        """Embed the batch and hand each request its rows."""
        vectors = self._embed(batch)
        start = 0
        for ticket in batch:
            ticket.result = vectors[start : start + len(ticket.request.texts)]
            start += len(ticket.request.texts)

    def _embed(self, batch: list[Ticket[_Request]]) -> Vector:
        texts = [text for ticket in batch for text in ticket.request.texts]
        kind = batch[0].request.kind
        log.debug("embedding %d %s of %d requests in one call", len(texts), kind, len(batch))
        if kind == "queries":  # only when the embedder offers QueryBatching (checked once, above)
            vectors = cast(QueryBatching, self.embedder).embed_queries(texts)
        else:
            vectors = self.embedder.embed_documents(texts)
        return self._counted(vectors, texts)

    def _counted(self, vectors: Vector, texts: Sequence[str]) -> Vector:
        """``vectors``, one a text, or an error saying the embedder returned another number."""
        if len(vectors) != len(texts):
            raise MemoryServerError(
                f"The embedder {self.embedder.model_id} returned {len(vectors)} vectors for "
                f"{len(texts)} texts; nothing was written. Check the embedder plugin."
            )
        return vectors
