"""``MiniLMEmbedder``: all-MiniLM-L6-v2 with onnxruntime + tokenizers, same pipeline as sentence-transformers.

Pipeline (identical to ``SentenceTransformer("all-MiniLM-L6-v2").encode(..., normalize_embeddings=True)``):
WordPiece tokenizer (truncation at 256 tokens = the model's ``max_seq_length``; padding to the longest
text of each batch) -> BERT (``model.onnx``, output ``last_hidden_state``) -> mean pooling over the
attention mask -> L2 normalisation. Padding changes no vector (masked tokens get no attention and no
weight in the pool), only the cost: texts are grouped into runs by token length (:func:`plan_batches`),
so a memory's short sentences are not padded to its whole text.

Nothing heavy happens at import or construction: onnxruntime and tokenizers are imported, the model files
are verified against ``manifest.json`` (sha256) and the session is created on ``load()`` or the first embed.

Precision ``int8`` (opt-in): the shipped fp32 model is quantized locally on first use with onnxruntime's
per-channel dynamic quantization (``quantize_dynamic(per_channel=True, weight_type=QInt8)``; needs the
``onnx`` package: ``mcp-memory-minilm[int8]``), cached in the user cache dir under a name carrying the fp32
sha256 prefix and the onnxruntime version, written atomically and verified against a sha256 recorded next to it.
Its ``model_id`` says ``onnx-int8`` so a store never mixes fp32 and int8 vectors.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from mcp_memory_core.errors import MemoryServerError
from mcp_memory_core.protocols import text_list
from mcp_memory_core.relevance import ALL_MINILM_L6_V2, RelevanceFloor

if TYPE_CHECKING:
    import onnxruntime  # type: ignore[import-untyped,import-not-found,unused-ignore]
    import tokenizers

log = logging.getLogger(__name__)

DEFAULT_MODEL_DIR = Path(__file__).resolve().parent / "model"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of the upstream model
DEFAULT_BATCH_SIZE = 32
# One onnxruntime run costs about as much as this many more tokens of input (measured here: a run is
# ~3 ms plus 0.17 ms a token on 2 threads, ~3.8 ms plus 0.30 ms on 1; docs/benchmarks.md, "Long
# memories"). It decides when shorter texts are worth a run of their own rather than padding to a
# longer text in its run.
RUN_COST_TOKENS = 16

Vector = npt.NDArray[np.float32]
Precision = Literal["fp32", "int8"]
PRECISIONS: tuple[str, ...] = get_args(Precision)
INT8_INSTALL_HINT = (
    "`uv pip install 'mcp-memory-minilm[int8]'` (or `pip install 'mcp-memory-minilm[int8]'`; "
    "with uvx: `uvx --from mcp-memory-stack --with 'mcp-memory-minilm[int8]' mcp-memory`)"
)


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


class QuantizationUnavailableError(MemoryServerError):
    """precision=int8 needs the ``onnx`` package to quantize the model, and it is not installed."""

    def __init__(self) -> None:
        super().__init__(
            "MCP_MEMORY_MINILM_PRECISION=int8 quantizes the all-MiniLM-L6-v2 model locally with "
            "onnxruntime.quantization, which needs the `onnx` package, and it is not installed. "
            f"Install the int8 extra: {INT8_INSTALL_HINT}, or use the default precision "
            "(unset MCP_MEMORY_MINILM_PRECISION or set it to fp32)."
        )


def default_cache_dir() -> Path:
    """``<user cache dir>/mcp-memory/minilm`` (platformdirs)."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mcp-memory")) / "minilm"


def default_threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) on onnxruntime. Thread-safe; loads lazily.

    :param model_dir: directory holding ``model.onnx``, ``tokenizer.json`` and ``manifest.json``
        (default: the files shipped in this package).
    :param threads: onnxruntime intra-op threads (default ``min(2, os.cpu_count())``).
    :param batch_size: texts per onnxruntime run.
    :param precision: ``fp32`` (the shipped model, exact) or ``int8`` (per-channel dynamic quantization of
        it, made locally on first use and cached; ~2x faster, cosine ~0.99 to fp32).
    :param cache_dir: where the int8 model is cached (default: :func:`default_cache_dir`).
    """

    dimensions: int = DIMENSIONS
    # docs/benchmarks.md, "Relevance floor"; int8 vectors are within ~0.01 cosine of fp32's and share it.
    relevance_floor: RelevanceFloor = ALL_MINILM_L6_V2

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        threads: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        precision: Precision = "fp32",
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_dir = Path(model_dir) if model_dir is not None else DEFAULT_MODEL_DIR
        self.threads = threads if threads is not None else default_threads()
        self.batch_size = batch_size
        self.precision: Precision = precision
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._lock = threading.Lock()
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._counter: tokenizers.Tokenizer | None = None
        self._manifest: dict[str, Any] | None = None
        self._input_names: frozenset[str] = frozenset()
        self._pad_id = 0

    def __repr__(self) -> str:
        state = "loaded" if self._session is not None else "not loaded"
        return (
            f"MiniLMEmbedder(model_dir={str(self.model_dir)!r}, threads={self.threads}, "
            f"precision={self.precision!r}, {state})"
        )

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
        """``sentence-transformers/all-MiniLM-L6-v2:onnx-<precision>:<first 12 hex of model.onnx sha256>``.

        The hash is the shipped fp32 model's for both precisions (the int8 model is derived from it)."""
        return f"{MODEL_NAME}:onnx-{self.precision}:{self._fp32_sha256()[:12]}"

    def _fp32_sha256(self) -> str:
        return str(self._read_manifest()["files"]["model.onnx"]["sha256"])

    @property
    def cache_dir(self) -> Path:
        """Where the int8 model is cached."""
        return self._cache_dir if self._cache_dir is not None else default_cache_dir()

    def int8_model_path(self, ort_version: str | None = None) -> Path:
        """The cached int8 model: named by the fp32 sha256 prefix and the onnxruntime version that made it
        (its sha256 is recorded next to it, in ``<name>.sha256``)."""
        if ort_version is None:
            import onnxruntime as ort  # type: ignore[import-untyped,import-not-found,unused-ignore]

            ort_version = str(ort.__version__)
        return self.cache_dir / f"all-MiniLM-L6-v2-int8-{self._fp32_sha256()[:16]}-ort{ort_version}.onnx"

    @property
    def loaded(self) -> bool:
        return self._session is not None

    # -- loading --------------------------------------------------------------------------------------

    def _read_sized(self, name: str) -> bytes:
        """The bytes of a model file, checked against the manifest's size (the sha256 is checked apart)."""
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
        return data

    def _check_sha256(self, name: str, digest: str) -> None:
        expected = self._read_manifest()["files"][name]["sha256"]
        if digest != expected:
            raise ModelFilesCorruptError(
                self.model_dir, f"sha256 of {name} is {digest}, manifest.json expects {expected}"
            )

    def _verified_bytes(self, name: str) -> bytes:
        data = self._read_sized(name)
        self._check_sha256(name, hashlib.sha256(data).hexdigest())
        return data

    def _fp32_session_verified(self, make_session: Callable[[str | bytes], Any]) -> Any:
        """The fp32 session, created from the file's path while another thread streams the file
        through sha256 (hashlib and onnxruntime both release the GIL: the check costs no wall time on
        2 cores). Loading from the path rather than from bytes in memory keeps ~70 MB less resident
        (193 vs 262 MB after load). A session is only returned if the check passes; a damaged file is
        reported as such even if onnxruntime choked on it."""
        entry = self._read_manifest()["files"]["model.onnx"]
        path = self.model_dir / "model.onnx"
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise ModelFilesCorruptError(self.model_dir, "model.onnx is missing") from None
        if "size" in entry and size != int(entry["size"]):
            raise ModelFilesCorruptError(
                self.model_dir, f"model.onnx has {size} bytes, manifest.json expects {entry['size']}"
            )
        digest: list[str] = []

        def stream_hash() -> None:
            with path.open("rb") as handle:
                digest.append(hashlib.file_digest(handle, "sha256").hexdigest())

        hasher = threading.Thread(target=stream_hash, name="minilm-sha256", daemon=True)
        hasher.start()
        try:
            session = make_session(str(path))
        except Exception:
            hasher.join()
            if digest:
                self._check_sha256("model.onnx", digest[0])  # raises ModelFilesCorruptError on a mismatch
            raise
        hasher.join()
        if not digest:
            raise ModelFilesCorruptError(self.model_dir, "model.onnx could not be hashed")
        self._check_sha256("model.onnx", digest[0])
        return session

    def load(self) -> None:
        """Verify the model files and create the onnxruntime session (idempotent, thread-safe)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort  # type: ignore[import-untyped,import-not-found,unused-ignore]
            from tokenizers import Tokenizer

            tokenizer_bytes = self._verified_bytes("tokenizer.json")

            tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
            # Upstream tokenizer.json pads and truncates at 128; sentence-transformers truncates at
            # max_seq_length (256) and pads to the longest text of the batch. Do the same.
            max_len = int(self._read_manifest().get("max_seq_length", MAX_SEQ_LENGTH))
            tokenizer.enable_truncation(max_length=max_len)
            tokenizer.no_padding()  # _run pads each batch to its longest text
            pad_id = tokenizer.token_to_id("[PAD]")
            self._pad_id = 0 if pad_id is None else pad_id

            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            # Idle intra-op threads sleep instead of spinning: in the server, requests embed from
            # several threads at once and spinning threads took the cores from each other and from
            # the event loop (server CPU per HTTP store_memory 31.8 -> 19.8 ms; 20 clients through
            # two servers, p50 291 -> 120 ms), at +0.4 ms on a lone embed_query (docs/benchmarks.md).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3  # errors only (onnxruntime logs to stderr)
            # The arena keeps every buffer a batch ever needed: without it RSS after twenty 32-text
            # batches is 285 MB instead of 382 MB, at the same single-query latency (2.1 ms) and ~7%
            # lower batch throughput.
            options.enable_cpu_mem_arena = False

            def make_session(model: str | bytes) -> Any:
                return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

            if self.precision == "int8":
                session = make_session(self._int8_bytes(str(ort.__version__)))
            else:
                session = self._fp32_session_verified(make_session)

            self._input_names = frozenset(i.name for i in session.get_inputs())
            self._tokenizer = tokenizer
            self._session = session  # last: marks the embedder as loaded
            log.info("Loaded %s (onnxruntime %s, %d threads)", self.model_id, ort.__version__, self.threads)

    # -- int8 -----------------------------------------------------------------------------------------

    def _int8_bytes(self, ort_version: str) -> bytes:
        """The cached int8 model if it matches its recorded sha256; otherwise quantize the (verified) fp32
        model again and cache the result atomically. Called under ``self._lock``."""
        path = self.int8_model_path(ort_version)
        cached = _read_verified_cache(path, self._fp32_sha256())
        if cached is not None:
            log.debug("int8 model from cache %s", path)
            return cached
        if importlib.util.find_spec("onnx") is None:
            raise QuantizationUnavailableError()
        self._verified_bytes("model.onnx")  # never quantize a damaged fp32 model
        log.info("Quantizing all-MiniLM-L6-v2 to int8 (per-channel dynamic) into %s", path)
        return _quantize_to_cache(self.model_dir / "model.onnx", path, self._fp32_sha256(), ort_version)

    def close(self) -> None:
        """Release the session (a later embed loads it again)."""
        with self._lock:
            self._session = None
            self._tokenizer = None

    # -- embedding ------------------------------------------------------------------------------------

    def _run(self, encodings: Sequence[tokenizers.Encoding]) -> Vector:
        """Unit vectors of already tokenized texts, in one onnxruntime run padded to the longest."""
        session = self._session
        assert session is not None
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = e.attention_mask
            types[row, : len(e.ids)] = e.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = types
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
        items = text_list(texts)
        out = np.empty((len(items), DIMENSIONS), dtype=np.float32)
        if not items:
            return out
        self.load()
        tokenizer = self._tokenizer
        assert tokenizer is not None
        encodings = tokenizer.encode_batch(items)
        for idx in plan_batches([len(e.ids) for e in encodings], self.batch_size):
            out[idx] = self._run([encodings[i] for i in idx])
        return out

    def count_tokens(self, text: str) -> int:
        """How many WordPiece tokens ``text`` is, untruncated (token budgets for prompts). Needs the
        tokenizer only, not the model: counting does not wait for (or cause) the onnxruntime load
        (the SessionStart hook counts a budget without embedding anything: 270 ms saved)."""
        with self._lock:
            if self._counter is None:
                import tokenizers

                counter = tokenizers.Tokenizer.from_str(
                    self._verified_bytes("tokenizer.json").decode("utf-8")
                )
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

    def embed_queries(self, texts: Sequence[str]) -> Vector:
        """Several queries in one call (:class:`~mcp_memory_core.protocols.QueryBatching`): the model
        embeds a query as it embeds a document, so this is ``embed_documents``."""
        return self.embed_documents(texts)


# -- batching ---------------------------------------------------------------------------------------


def plan_batches(lengths: Sequence[int], max_rows: int, run_cost: int = RUN_COST_TOKENS) -> list[list[int]]:
    """Group texts (indices into ``lengths``, their token counts) into onnxruntime runs.

    A run costs ``run_cost`` plus its rows times its longest text, in tokens (every row is padded to
    the longest). The texts are sorted longest first and cut into consecutive runs of at most
    ``max_rows`` where the total is least (dynamic programming, O(n * max_rows)). A memory's whole text
    (~65 tokens) and its six sentences (~14 each) so take two runs instead of seven rows padded to 65;
    texts of about one length still share runs of ``max_rows``, as with fixed batches.
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    least = [0] * (len(order) + 1)  # least[j]: the cost of the first j texts of order
    cut = [0] * (len(order) + 1)  # where the last run of that plan starts
    for end in range(1, len(order) + 1):
        starts = range(max(0, end - max_rows), end)
        cut[end] = min(starts, key=lambda start: least[start] + (end - start) * lengths[order[start]])
        least[end] = least[cut[end]] + run_cost + (end - cut[end]) * lengths[order[cut[end]]]
    runs: list[list[int]] = []
    end = len(order)
    while end > 0:
        runs.append(order[cut[end] : end])
        end = cut[end]
    return runs[::-1]


# -- int8 cache helpers ---------------------------------------------------------------------------------


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _read_verified_cache(path: Path, source_sha256: str) -> bytes | None:
    """The cached model's bytes if the file and its sidecar exist and agree; ``None`` (logged) otherwise."""
    try:
        record = json.loads(_sidecar(path).read_text(encoding="utf-8"))
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("int8 model cache %s is unreadable (%r); quantizing again", path, exc)
        return None
    if not isinstance(record, dict) or record.get("source_sha256") != source_sha256:
        log.warning("int8 model cache %s has a bad or foreign record; quantizing again", path)
        return None
    digest = hashlib.sha256(data).hexdigest()
    if digest != record.get("sha256"):
        log.warning(
            "int8 model cache %s is corrupt (sha256 %s, recorded %s); quantizing again",
            path,
            digest,
            record.get("sha256"),
        )
        return None
    return data


@contextlib.contextmanager
def _temp_path(directory: Path, suffix: str) -> Iterator[Path]:
    fd, name = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=suffix)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _atomic_write(path: Path, data: bytes) -> None:
    with _temp_path(path.parent, path.suffix) as tmp:
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


def _quantize_to_cache(source: Path, path: Path, source_sha256: str, ort_version: str) -> bytes:
    """Quantize ``source`` into ``path`` (tmp + rename), record its sha256 next to it, return its bytes.

    Several processes may do this at once: each writes its own temporary file and renames it over the
    same name; quantization is deterministic for one onnxruntime version, so the results are identical
    (and a mismatched pair would only be detected and rebuilt on the next load)."""
    from onnxruntime.quantization import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        QuantType,
        quantize_dynamic,
    )

    path.parent.mkdir(parents=True, exist_ok=True)
    with _temp_path(path.parent, ".onnx") as tmp:
        # onnxruntime logs a "consider pre-processing" warning on the root logger; it is not actionable.
        root = logging.getLogger()
        quiet = _DropPreprocessHint()
        root.addFilter(quiet)
        try:
            quantize_dynamic(source, tmp, per_channel=True, reduce_range=False, weight_type=QuantType.QInt8)
        finally:
            root.removeFilter(quiet)
        data = tmp.read_bytes()
        with tmp.open("rb+") as f:
            os.fsync(f.fileno())
        record = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "source_sha256": source_sha256,
            "onnxruntime_version": ort_version,
            "method": "onnxruntime.quantization.quantize_dynamic(per_channel=True, weight_type=QInt8)",
        }
        os.replace(tmp, path)
    _atomic_write(_sidecar(path), (json.dumps(record, indent=2) + "\n").encode("utf-8"))
    return data


class _DropPreprocessHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()
