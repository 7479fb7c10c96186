"""fastembed models for mcp-memory: an embedder (``fastembed``) and a cross-encoder reranker
(``fastembed-cross-encoder``), loaded only from files downloaded once, never at run time.

Importing this package is cheap: fastembed (and onnxruntime) is imported on first use.
"""

from __future__ import annotations

from .embedder import PREFIXES, FastembedEmbedder
from .models import (
    ModelDescription,
    ModelFilesError,
    ModelNotDownloadedError,
    UnknownModelError,
    default_cache_dir,
    download_command,
)
from .reranker import CrossEncoderReranker

__all__ = [
    "PREFIXES",
    "CrossEncoderReranker",
    "FastembedEmbedder",
    "ModelDescription",
    "ModelFilesError",
    "ModelNotDownloadedError",
    "UnknownModelError",
    "default_cache_dir",
    "download_command",
]
__version__ = "0.1.0"
