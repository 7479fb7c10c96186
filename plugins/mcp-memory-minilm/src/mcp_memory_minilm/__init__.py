"""all-MiniLM-L6-v2 on onnxruntime for mcp-memory (model files shipped in ``mcp_memory_minilm/model``).

Importing this package is cheap: onnxruntime and tokenizers are imported on the first embed or ``load()``.
"""

from __future__ import annotations

from .embedder import DEFAULT_MODEL_DIR, MiniLMEmbedder, ModelFilesCorruptError, QuantizationUnavailableError

__all__ = ["DEFAULT_MODEL_DIR", "MiniLMEmbedder", "ModelFilesCorruptError", "QuantizationUnavailableError"]
__version__ = "0.1.0"
