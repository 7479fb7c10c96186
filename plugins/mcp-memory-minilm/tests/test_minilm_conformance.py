"""The minilm embedder passes the mcp-memory embedder conformance suite."""

from __future__ import annotations

import pytest

from mcp_memory_minilm import MiniLMEmbedder
from mcp_memory_testing import EmbedderConformance

_SHARED = MiniLMEmbedder()


@pytest.mark.model
class TestMiniLMConformance(EmbedderConformance):
    @pytest.fixture
    def embedder(self) -> MiniLMEmbedder:
        return _SHARED  # one onnxruntime session for the whole suite
