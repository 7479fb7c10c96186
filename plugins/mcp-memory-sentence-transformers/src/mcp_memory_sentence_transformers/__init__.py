"""mcp-memory embedder for any sentence-transformers model. torch is imported only on ``load()``."""

from __future__ import annotations

from .embedder import SentenceTransformerEmbedder, resolve_model

__all__ = ["SentenceTransformerEmbedder", "resolve_model"]
__version__ = "0.1.0"
