"""``FastembedEmbedder``: any fastembed text-embedding model (bge, e5, multilingual MiniLM …) behind
the mcp-memory Embedder protocol, loaded only from files already on this machine.

fastembed 0.9 adds no prefix of its own (its ``query_embed`` is ``embed``), so the instructions some
models were trained with are added here, from :data:`PREFIXES` unless the settings give others:
e5's ``query: ``/``passage: ``, bge's query instruction, nomic's ``search_query: ``/``search_document: ``.
Vectors are L2-normalised here too, as some fastembed models (mean pooling without normalisation:
multilingual e5, paraphrase-multilingual) return them unnormalised.

Nothing heavy happens at import or construction; fastembed (and onnxruntime) is imported when
``model_id``/``dimensions`` are first read (its model list) and the model loads on ``load()`` or
the first embed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from mcp_memory_core.protocols import text_list
from mcp_memory_core.relevance import ALL_MINILM_L6_V2, RelevanceFloor

from .models import EMBEDDING, LocalModel, ModelFilesError, fastembed_version

log = logging.getLogger(__name__)

Vector = npt.NDArray[np.float32]

DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
DEFAULT_BATCH_SIZE = 32
# Its vectors equal the minilm plugin's, and so does the calibration of the relevance floor.
MINILM_NAMES = frozenset({"sentence-transformers/all-minilm-l6-v2", "all-minilm-l6-v2"})
_BGE_EN = "Represent this sentence for searching relevant passages: "
#: (query prefix, passage prefix) of the models trained with them, by lowercase fastembed name.
PREFIXES: dict[str, tuple[str, str]] = {
    "intfloat/multilingual-e5-large": ("query: ", "passage: "),
    **{
        f"baai/bge-{size}-en{version}": (_BGE_EN, "")
        for size in ("small", "base", "large")
        for version in ("", "-v1.5")
    },
    "baai/bge-small-zh-v1.5": ("为这个句子生成表示以用于检索相关文章：", ""),
    "mixedbread-ai/mxbai-embed-large-v1": (_BGE_EN, ""),
    **{f"snowflake/snowflake-arctic-embed-{size}": (_BGE_EN, "") for size in ("xs", "s", "m", "m-long", "l")},
    **{
        f"nomic-ai/nomic-embed-text-{version}": ("search_query: ", "search_document: ")
        for version in ("v1", "v1.5", "v1.5-q")
    },
    "google/embeddinggemma-300m": ("task: search result | query: ", "title: none | text: "),
    **{
        f"qwen/qwen3-embedding-0.6b{q}": (
            "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
            "",
        )
        for q in ("", "-q")
    },
}


class FastembedEmbedder(LocalModel):
    """A fastembed text-embedding model. Thread-safe; loads lazily; never downloads.

    :param model: fastembed's name of the model (``BAAI/bge-small-en-v1.5``,
        ``intfloat/multilingual-e5-large``, ``sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2``
        …; the part after ``/`` is enough when only one model has it).
    :param path: a folder holding the model's files (the hub repository's), instead of the cache.
    :param cache_dir: fastembed's cache folder (default :func:`~.models.default_cache_dir`).
    :param threads: onnxruntime intra-op threads (default ``min(2, os.cpu_count())``).
    :param query_prefix, passage_prefix: what precedes a query and a stored text (default: the
        model's own, from :data:`PREFIXES`, or none).
    """

    kind = EMBEDDING

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        path: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
    ) -> None:
        super().__init__(model, path=path, cache_dir=cache_dir, threads=threads)
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = batch_size
        self._prefix_settings = (query_prefix, passage_prefix)
        # Read when the engine is built, before the MCP handshake: decided from the name, no import.
        # Other models are not calibrated: search then has no floor unless the settings give one.
        self.relevance_floor: RelevanceFloor | None = (
            ALL_MINILM_L6_V2
            if model.strip().lower() in MINILM_NAMES and not (query_prefix or passage_prefix)
            else None
        )

    def __repr__(self) -> str:
        state = "loaded" if self._model is not None else "not loaded"
        where = f"path={str(self.path)!r}" if self.path else f"cache_dir={str(self.cache_dir)!r}"
        return f"FastembedEmbedder({self.model_name!r}, {where}, threads={self.threads}, {state})"

    # -- metadata -------------------------------------------------------------------------------------

    @property
    def prefixes(self) -> tuple[str, str]:
        """(query prefix, passage prefix): the model's own unless set."""
        known = PREFIXES.get(self.description.name.lower(), ("", ""))
        query, passage = self._prefix_settings
        return (known[0] if query is None else query, known[1] if passage is None else passage)

    @property
    def model_id(self) -> str:
        """``fastembed:<model>:<hub repository>/<onnx file>:fastembed-<version>``, and the passage
        prefix when there is one (it changes every stored vector): a store made with one of these
        refuses vectors of any other (another model, file, fastembed version or prefix)."""
        d = self.description
        model_id = f"fastembed:{d.name}:{d.source}/{d.model_file}:fastembed-{fastembed_version()}"
        passage = self.prefixes[1]
        return f"{model_id}:passage-prefix={passage!r}" if passage else model_id

    @property
    def dimensions(self) -> int:
        dim = self.description.dimensions
        if dim is None:  # every dense fastembed model declares one; a guard, not a case
            raise ModelFilesError(f"fastembed declares no dimensions for {self.description.name}.")
        return dim

    # -- loading --------------------------------------------------------------------------------------

    def load(self) -> None:
        """Open the model from the folder or the cache (idempotent, thread-safe, no network)."""
        self._load_once(self._checked)

    def _checked(self) -> Any:
        model = self._open()
        width = np.asarray(next(iter(model.embed(["ok"])))).shape[-1]
        if width != self.dimensions:
            raise ModelFilesError(
                f"The files loaded as {self.description.name} from "
                f"{self.path or self.cache_dir} give {width}-d vectors, not its {self.dimensions}: "
                f"they are another model's; put the files of {self.description.source} there."
            )
        log.info("Loaded %s (%d threads)", self.model_id, self.threads)
        return model

    def close(self) -> None:
        """Release the model (a later embed loads it again)."""
        with self._lock:
            self._model = None

    # -- embedding ------------------------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> Vector:
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        self.load()
        rows = list(self._model.embed(texts, batch_size=self.batch_size))
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dimensions)
        norms = np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        unit: Vector = (vectors / norms).astype(np.float32, copy=False)
        return unit

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """An ``(len(texts), dimensions)`` float32 array of L2-normalised rows (passage prefix added)."""
        passage = self.prefixes[1]
        return self._embed([passage + text for text in text_list(texts)])

    def embed_query(self, text: str) -> Vector:
        """A ``(dimensions,)`` float32 unit vector (query prefix added)."""
        if not isinstance(text, str):
            raise TypeError(f"text is {type(text).__name__}, expected str")
        vec: Vector = self._embed([self.prefixes[0] + text])[0]
        return vec

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """Several queries in one call (query prefix added): concurrent searches share it."""
        return self._embed([self.prefixes[0] + text for text in text_list(texts)])
