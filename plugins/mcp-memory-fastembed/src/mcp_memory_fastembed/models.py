"""Which fastembed model a setting names, where its files are, and loading it without the network.

fastembed downloads a model from the Hugging Face hub the first time it is asked for one. Here it
never does: the model is opened with ``local_files_only=True`` (from fastembed's cache folder) or
``specific_model_path`` (a folder of the model's files), and a model that is not there is one
sentence naming the command that downloads it once. Nothing here imports fastembed until a model's
description is needed: importing it takes about a second (it imports onnxruntime).
"""

from __future__ import annotations

import importlib.metadata
import os
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_memory_core.errors import MemoryServerError

#: The files besides the ONNX model that fastembed reads from a model folder (the other tokenizer
#: files are optional).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")


@dataclass(frozen=True)
class ModelKind:
    """An embedder's or a cross-encoder's models: the fastembed class that knows them and the
    settings that name one."""

    fastembed_class: str  # "TextEmbedding" or "TextCrossEncoder"
    model_setting: str
    path_setting: str

    def load_class(self) -> Any:
        if self.fastembed_class == "TextEmbedding":
            from fastembed import TextEmbedding

            return TextEmbedding
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        return TextCrossEncoder


EMBEDDING = ModelKind("TextEmbedding", "MCP_MEMORY_FASTEMBED_MODEL", "MCP_MEMORY_FASTEMBED_PATH")
CROSS_ENCODER = ModelKind(
    "TextCrossEncoder", "MCP_MEMORY_FASTEMBED_RERANKER_MODEL", "MCP_MEMORY_FASTEMBED_RERANKER_PATH"
)


@dataclass(frozen=True)
class ModelDescription:
    """What fastembed says of a model: its name, the hub repository and ONNX file it comes from
    (the file fixes the precision: Qdrant's ``…-onnx-Q`` repositories hold quantized weights),
    and for an embedding model its dimensions."""

    name: str
    source: str
    model_file: str
    additional_files: tuple[str, ...]
    dimensions: int | None

    @property
    def files(self) -> tuple[str, ...]:
        return (self.model_file, *self.additional_files, *TOKENIZER_FILES)


class UnknownModelError(MemoryServerError, ValueError):
    """The setting names a model fastembed does not know."""

    def __init__(self, kind: ModelKind, name: str, known: list[str]) -> None:
        super().__init__(
            f"{kind.model_setting}={name!r} is not the name of one model fastembed {fastembed_version()} knows; "
            f"set it to one of: {', '.join(sorted(known, key=str.lower))}."
        )


class ModelNotDownloadedError(MemoryServerError):
    """The model is not in the cache folder, and nothing is downloaded at run time."""

    def __init__(self, kind: ModelKind, model: ModelDescription, cache_dir: Path) -> None:
        super().__init__(
            f"The fastembed model {model.name} is not in {cache_dir} and mcp-memory never downloads "
            f"at run time: download it once with `{download_command(kind, model.name, cache_dir)}` "
            f"(or put the files of the hub repository {model.source} in a folder and set "
            f"{kind.path_setting} to it)."
        )


class ModelFilesError(MemoryServerError):
    """The model's folder lacks files, or holds files fastembed cannot load as that model."""


def fastembed_version() -> str:
    """The installed fastembed's version (from its metadata: no import)."""
    return importlib.metadata.version("fastembed")


def default_cache_dir() -> Path:
    """``FASTEMBED_CACHE_PATH`` if set (fastembed's own variable), else
    ``<user cache dir>/mcp-memory/fastembed`` (fastembed's own default is in the temp folder, which
    a reboot may empty)."""
    configured = os.environ.get("FASTEMBED_CACHE_PATH")
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mcp-memory")) / "fastembed"


def download_command(kind: ModelKind, name: str, cache_dir: Path) -> str:
    """The shell command that downloads ``name`` into ``cache_dir`` with the installed fastembed."""
    module = "fastembed" if kind is EMBEDDING else "fastembed.rerank.cross_encoder"
    code = f"from {module} import {kind.fastembed_class}; {kind.fastembed_class}({name!r}, cache_dir={str(cache_dir)!r})"
    # Double quotes read best and are safe when nothing in them is special to the shell.
    quoted = f'"{code}"' if not any(ch in code for ch in '"$`\\!') else shlex.quote(code)
    return f"uv run --no-project --with fastembed=={fastembed_version()} python -c {quoted}"


def describe(kind: ModelKind, name: str) -> ModelDescription:
    """fastembed's description of the model ``name`` (its exact name in any case, or the part after
    the ``/`` when only one model has it: ``bge-small-en-v1.5``); UnknownModelError otherwise."""
    entries: list[dict[str, Any]] = kind.load_class().list_supported_models()
    wanted = name.strip().lower()
    found = [e for e in entries if str(e["model"]).lower() == wanted]
    if not found and "/" not in wanted:
        found = [e for e in entries if str(e["model"]).lower().rsplit("/", 1)[-1] == wanted]
    if len(found) != 1:
        raise UnknownModelError(kind, name, [str(e["model"]) for e in entries])
    entry = found[0]
    sources = entry.get("sources") or {}
    dim = entry.get("dim")
    return ModelDescription(
        name=str(entry["model"]),
        source=str(sources.get("hf") or sources.get("url") or ""),
        model_file=str(entry["model_file"]),
        additional_files=tuple(str(f) for f in entry.get("additional_files") or ()),
        dimensions=int(dim) if dim is not None else None,
    )


def check_folder(kind: ModelKind, model: ModelDescription, folder: Path) -> None:
    """ModelFilesError unless ``folder`` holds every file fastembed reads for ``model``."""
    if not folder.is_dir():
        raise ModelFilesError(
            f"{kind.path_setting}={str(folder)!r} is not a folder: point it at a folder holding the "
            f"files of {model.source} ({', '.join(model.files)}), or unset it to use the cache folder."
        )
    missing = [name for name in model.files if not (folder / name).is_file()]
    if missing:
        raise ModelFilesError(
            f"The folder {folder} ({kind.path_setting}) lacks {', '.join(missing)} of {model.name}: "
            f"put the files of the hub repository {model.source} there, e.g. "
            f"`hf download {model.source} --local-dir {shlex.quote(str(folder))}`."
        )


def open_model(
    kind: ModelKind, model: ModelDescription, cache_dir: Path, folder: Path | None, threads: int
) -> Any:
    """The fastembed model, its ONNX session created, from ``folder`` or the cache: never the network."""
    from loguru import logger

    # fastembed logs every place it looked in vain on stderr; the error raised below says it all.
    logger.disable("fastembed")
    options: dict[str, Any] = {"local_files_only": True}
    if folder is not None:
        check_folder(kind, model, folder)
        options["specific_model_path"] = str(folder)
    cls = kind.load_class()
    try:
        # lazy_load: find the files first, so "not downloaded" is told apart from a file that fails to load.
        instance = cls(model.name, cache_dir=str(cache_dir), threads=threads, lazy_load=True, **options)
    except ValueError as exc:
        if folder is None and "Could not load model" in str(exc):
            raise ModelNotDownloadedError(kind, model, cache_dir) from None
        raise ModelFilesError(f"fastembed could not find the files of {model.name}: {exc}") from exc
    try:
        instance.model.load_onnx_model()
    except Exception as exc:
        where = folder if folder is not None else cache_dir
        raise ModelFilesError(
            f"The files of {model.name} in {where} could not be loaded ({type(exc).__name__}: {exc}); "
            f"download them again with `{download_command(kind, model.name, cache_dir)}`"
            + (f" or replace the folder's files with those of {model.source}." if folder else ".")
        ) from exc
    return instance


def default_threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))


class LocalModel:
    """A fastembed model of ``kind`` opened once, on first use, from files on this machine: what
    the embedder and the cross-encoder share (the name, where the files are, the threads, the
    description read from fastembed's list, and a load that runs once however many threads ask)."""

    kind: ModelKind

    def __init__(
        self,
        model: str,
        *,
        path: str | os.PathLike[str] | None,
        cache_dir: str | os.PathLike[str] | None,
        threads: int | None,
    ) -> None:
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.model_name = model
        self.path = Path(path).expanduser() if path is not None else None
        self.cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
        self.threads = threads if threads is not None else default_threads()
        self._lock = threading.Lock()
        self._description: ModelDescription | None = None
        self._model: Any = None

    @property
    def description(self) -> ModelDescription:
        """fastembed's description of the model (imports fastembed; UnknownModelError for a bad name)."""
        if self._description is None:
            self._description = describe(self.kind, self.model_name)
        return self._description

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _open(self) -> Any:
        """The model, opened from the folder or the cache (no network)."""
        return open_model(self.kind, self.description, self.cache_dir, self.path, self.threads)

    def _load_once(self, opened: Callable[[], Any]) -> None:
        """Set the model to ``opened()`` unless it is set (idempotent, thread-safe); it is set last,
        so a model that fails a check in ``opened`` never counts as loaded."""
        if self._model is not None:
            return
        with self._lock:
            if self._model is None:
                self._model = opened()
