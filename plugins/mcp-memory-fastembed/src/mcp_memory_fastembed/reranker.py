"""``CrossEncoderReranker``: a fastembed cross-encoder (``Xenova/ms-marco-MiniLM-L-6-v2``,
``BAAI/bge-reranker-base`` …) reads the query with each of the ranker's best candidates and
reorders them by its relevance score, loaded only from files already on this machine.

The score is the model's raw logit (higher is more relevant; its scale is the model's own), also
its part in ``explain``. Candidates the model scores alike keep the order they were given in.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from mcp_memory_core import ScoredCandidate
from mcp_memory_core.errors import MemoryServerError

from .embedder import default_threads
from .models import CROSS_ENCODER, ModelDescription, default_cache_dir, describe, open_model

log = logging.getLogger(__name__)

NAME = "fastembed-cross-encoder"
DEFAULT_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"
DEFAULT_DEPTH = 20


class CrossEncoderReranker:
    """A fastembed cross-encoder as a reranker. Thread-safe; loads in ``load()``; never downloads.

    :param model: fastembed's name of the cross-encoder.
    :param path: a folder holding the model's files (the hub repository's), instead of the cache.
    :param cache_dir: fastembed's cache folder (default :func:`~.models.default_cache_dir`).
    :param depth: how many of the ranker's best candidates it reads (its cost per search).
    :param threads: onnxruntime intra-op threads (default ``min(2, os.cpu_count())``).
    """

    name = NAME
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
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.model_name = model
        self.path = Path(path).expanduser() if path is not None else None
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        self.depth = depth
        self.threads = threads if threads is not None else default_threads()
        self._lock = threading.Lock()
        self._description: ModelDescription | None = None
        self._model: Any = None

    def __repr__(self) -> str:
        state = "loaded" if self._model is not None else "not loaded"
        return f"CrossEncoderReranker({self.model_name!r}, depth={self.depth}, {state})"

    @property
    def description(self) -> ModelDescription:
        if self._description is None:
            self._description = describe(CROSS_ENCODER, self.model_name)
        return self._description

    def load(self) -> None:
        """Open the model from the folder or the cache (idempotent, thread-safe, no network)."""
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            try:
                self._model = open_model(
                    CROSS_ENCODER, self.description, self.cache_dir, self.path, self.threads
                )
            except MemoryServerError as exc:
                # The engine skips a reranker that failed to load, and its warning keeps only the
                # start of the reason: the whole sentence (the download command) goes to the log.
                log.error("%s", exc)
                raise
            log.info("Loaded the cross-encoder %s (%d threads)", self.description.name, self.threads)

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
