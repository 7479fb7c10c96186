"""The fastembed embedder and cross-encoder pass mcp-memory's embedder and reranker conformance suites,
on real models loaded through fastembed from folders made here."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_memory_fastembed import CrossEncoderReranker, FastembedEmbedder
from mcp_memory_testing import EmbedderConformance, RerankerConformance


@pytest.fixture(scope="module")
def shared_embedder(minilm_folder: Path) -> FastembedEmbedder:
    """One onnxruntime session for the whole suite."""
    return FastembedEmbedder(
        "sentence-transformers/all-MiniLM-L6-v2", path=minilm_folder, cache_dir=minilm_folder.parent / "cache"
    )


class TestFastembedEmbedderConformance(EmbedderConformance):
    @pytest.fixture
    def embedder(self, shared_embedder: FastembedEmbedder) -> FastembedEmbedder:  # type: ignore[override]
        return shared_embedder


class TestCrossEncoderRerankerConformance(RerankerConformance):
    # the tiny cross-encoder knows these words: it scores the suite's candidates apart
    query = "memory about topic number 1"

    @pytest.fixture
    def reranker(self, cross_encoder_folder: Path) -> CrossEncoderReranker:  # type: ignore[override]
        return CrossEncoderReranker(path=cross_encoder_folder, cache_dir=cross_encoder_folder / "cache")
