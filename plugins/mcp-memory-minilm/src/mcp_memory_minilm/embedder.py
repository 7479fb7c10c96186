"""``MiniLMEmbedder``: all-MiniLM-L6-v2 with onnxruntime + tokenizers, same pipeline as sentence-transformers.

Pipeline (identical to ``SentenceTransformer("all-MiniLM-L6-v2").encode(..., normalize_embeddings=True)``):
WordPiece tokenizer (truncation at 256 tokens = the model's ``max_seq_length``; padding to the longest
text of each batch) -> BERT (``model.onnx``, output ``last_hidden_state``) -> mean pooling over the
attention mask -> L2 normalisation.

Nothing heavy happens at import or construction: onnxruntime and tokenizers are imported, the model files
are verified against ``manifest.json`` (sha256) and the session is created on ``load()`` or the first embed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from mcp_memory_core.errors import MemoryServerError

if TYPE_CHECKING:
    import onnxruntime  # type: ignore[import-untyped,import-not-found,unused-ignore]
    import tokenizers

log = logging.getLogger(__name__)

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "model"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of the upstream model
DEFAULT_BATCH_SIZE = 32

Vector = npt.NDArray[np.float32]


class ModelFilesCorruptError(MemoryServerError):
    """The model files shipped in the package are missing or do not match ``manifest.json``."""

    def __init__(self, model_dir: Path, problem: str) -> None:
        super().__init__(
            f"The all-MiniLM-L6-v2 model files in {model_dir} are damaged: {problem}. "
            "The mcp-memory-minilm package install is corrupt; reinstall it, e.g. "
            "`uv pip install --force-reinstall mcp-memory-minilm` "
            "(or `pip install --force-reinstall mcp-memory-minilm`)."
        )
        self.model_dir = model_dir


def default_threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) on onnxruntime. Thread-safe; loads lazily.

    :param model_dir: directory holding ``model.onnx``, ``tokenizer.json`` and ``manifest.json``
        (default: the files shipped in this package).
    :param threads: onnxruntime intra-op threads (default ``min(2, os.cpu_count())``).
    :param batch_size: texts per onnxruntime run.
    """

    dimensions: int = DIMENSIONS

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_dir = Path(model_dir) if model_dir is not None else DEFAULT_MODEL_DIR
        self.threads = threads if threads is not None else default_threads()
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._counter: tokenizers.Tokenizer | None = None
        self._manifest: dict[str, Any] | None = None
        self._input_names: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        state = "loaded" if self._session is not None else "not loaded"
        return f"MiniLMEmbedder(model_dir={str(self.model_dir)!r}, threads={self.threads}, {state})"

    # -- metadata -------------------------------------------------------------------------------------

    def _read_manifest(self) -> dict[str, Any]:
        if self._manifest is None:
            path = self.model_dir / "manifest.json"
            try:
                manifest = json.loads(path.read_text(encoding="utf-8"))
                manifest["files"]["model.onnx"]["sha256"]
                manifest["files"]["tokenizer.json"]["sha256"]
            except FileNotFoundError:
                raise ModelFilesCorruptError(self.model_dir, "manifest.json is missing") from None
            except (ValueError, KeyError, TypeError) as exc:
                raise ModelFilesCorruptError(
                    self.model_dir, f"manifest.json is unreadable ({exc!r})"
                ) from None
            self._manifest = manifest
        return self._manifest

    @property
    def model_id(self) -> str:
        """``sentence-transformers/all-MiniLM-L6-v2:onnx-fp32:<first 12 hex of model.onnx sha256>``."""
        sha = str(self._read_manifest()["files"]["model.onnx"]["sha256"])
        return f"{MODEL_NAME}:onnx-fp32:{sha[:12]}"

    @property
    def loaded(self) -> bool:
        return self._session is not None

    # -- loading --------------------------------------------------------------------------------------

    def _verified_bytes(self, name: str) -> bytes:
        entry = self._read_manifest()["files"][name]
        path = self.model_dir / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ModelFilesCorruptError(self.model_dir, f"{name} is missing") from None
        if "size" in entry and len(data) != int(entry["size"]):
            raise ModelFilesCorruptError(
                self.model_dir, f"{name} has {len(data)} bytes, manifest.json expects {entry['size']}"
            )
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            raise ModelFilesCorruptError(
                self.model_dir, f"sha256 of {name} is {digest}, manifest.json expects {entry['sha256']}"
            )
        return data

    def load(self) -> None:
        """Verify the model files and create the onnxruntime session (idempotent, thread-safe)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort  # type: ignore[import-untyped,import-not-found,unused-ignore]
            from tokenizers import Tokenizer

            model_bytes = self._verified_bytes("model.onnx")
            tokenizer_bytes = self._verified_bytes("tokenizer.json")

            tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
            # Upstream tokenizer.json pads and truncates at 128; sentence-transformers truncates at
            # max_seq_length (256) and pads to the longest text of the batch. Do the same.
            max_len = int(self._read_manifest().get("max_seq_length", MAX_SEQ_LENGTH))
            tokenizer.enable_truncation(max_length=max_len)
            pad_id = tokenizer.token_to_id("[PAD]")
            tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")

            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3  # errors only (onnxruntime logs to stderr)
            session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
            del model_bytes

            self._input_names = frozenset(i.name for i in session.get_inputs())
            self._tokenizer = tokenizer
            self._session = session  # last: marks the embedder as loaded
            log.info("Loaded %s (onnxruntime %s, %d threads)", self.model_id, ort.__version__, self.threads)

    def close(self) -> None:
        """Release the session (a later embed loads it again)."""
        with self._lock:
            self._session = None
            self._tokenizer = None

    # -- embedding ------------------------------------------------------------------------------------

    def _run(self, texts: list[str]) -> Vector:
        session, tokenizer = self._session, self._tokenizer
        assert session is not None and tokenizer is not None
        encodings = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden: npt.NDArray[np.float32] = session.run(["last_hidden_state"], feeds)[0]
        weights = mask.astype(np.float32)
        summed = np.einsum("bsd,bs->bd", hidden, weights)
        counts = np.clip(weights.sum(axis=1, keepdims=True), 1e-9, None)
        pooled = summed / counts
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        unit: Vector = (pooled / norms).astype(np.float32, copy=False)
        return unit

    def embed_documents(self, texts: Sequence[str]) -> Vector:
        """Return an ``(len(texts), 384)`` float32 array of L2-normalised rows."""
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of strings; use embed_query for one string")
        items = list(texts)
        for i, t in enumerate(items):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str")
        out = np.empty((len(items), DIMENSIONS), dtype=np.float32)
        if not items:
            return out
        self.load()
        # Sort by length (like sentence-transformers) so each batch pads little; restore order after.
        order = sorted(range(len(items)), key=lambda i: -len(items[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._run([items[i] for i in idx])
        return out

    def count_tokens(self, text: str) -> int:
        """How many WordPiece tokens ``text`` is, untruncated (token budgets for prompts)."""
        self.load()
        with self._lock:
            if self._counter is None:
                assert self._tokenizer is not None
                import tokenizers

                counter = tokenizers.Tokenizer.from_str(self._tokenizer.to_str())
                counter.no_truncation()
                counter.no_padding()
                self._counter = counter
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed_query(self, text: str) -> Vector:
        """Return a ``(384,)`` float32 unit vector."""
        if not isinstance(text, str):
            raise TypeError(f"text is {type(text).__name__}, expected str")
        vec: Vector = self.embed_documents([text])[0]
        return vec
