"""``CrossEncoderReranker``: a fastembed cross-encoder (``Xenova/ms-marco-MiniLM-L-6-v2``,
``BAAI/bge-reranker-base`` …) reads the query with each of the ranker's best candidates and
reorders them by its relevance score, loaded only from files already on this machine.

The score is the model's raw logit (higher is more relevant; its scale is the model's own), also
its part in ``explain``. Candidates the model scores alike keep the order they were given in.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from mcp_memory_core import ScoredCandidate
from mcp_memory_core.errors import MemoryServerError

from .models import CROSS_ENCODER, LocalModel

log = logging.getLogger(__name__)

NAME = "fastembed-cross-encoder"
DEFAULT_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"
DEFAULT_DEPTH = 20


class CrossEncoderReranker(LocalModel):
    """A fastembed cross-encoder as a reranker. Thread-safe; loads in ``load()``; never downloads.

    :param model: fastembed's name of the cross-encoder.
    :param path: a folder holding the model's files (the hub repository's), instead of the cache.
    :param cache_dir: fastembed's cache folder (default :func:`~.models.default_cache_dir`).
    :param depth: how many of the ranker's best candidates it reads (its cost per search).
    :param threads: onnxruntime intra-op threads (default ``min(2, os.cpu_count())``).
    """

    name = NAME
    kind = CROSS_ENCODER
    heavy = True  # a model: the server loads it in the background after the MCP handshake

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        path: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        depth: int = DEFAULT_DEPTH,
        threads: int | None = None,
    ) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth must be a whole number of at least 1; got {depth!r}")
        super().__init__(model, path=path, cache_dir=cache_dir, threads=threads)
        self.depth = depth

    def __repr__(self) -> str:
        state = "loaded" if self._model is not None else "not loaded"
        return f"CrossEncoderReranker({self.model_name!r}, depth={self.depth}, {state})"

    def load(self) -> None:
        """Open the model from the folder or the cache (idempotent, thread-safe, no network)."""
        self._load_once(self._logged)

    def _logged(self) -> Any:
        try:
            model = self._open()
        except MemoryServerError as exc:
            # The engine skips a reranker that failed to load, and its warning keeps only the
            # start of the reason: the whole sentence (the download command) goes to the log.
            log.error("%s", exc)
            raise
        log.info("Loaded the cross-encoder %s (%d threads)", self.description.name, self.threads)
        return model

    def rerank(self, query: str, ranked: Sequence[ScoredCandidate], now: datetime) -> list[ScoredCandidate]:
        if not ranked:
            return []
        self.load()
        texts = [s.candidate.memory.content for s in ranked]
        scores = [float(x) for x in self._model.rerank(query, texts, batch_size=len(texts))]
        order = sorted(range(len(ranked)), key=lambda i: (-scores[i], i))
        return [
            ScoredCandidate(ranked[i].candidate, scores[i], {**ranked[i].parts, NAME: scores[i]})
            for i in order
        ]
