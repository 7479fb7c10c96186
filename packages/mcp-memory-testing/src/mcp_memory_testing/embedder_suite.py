"""EmbedderConformance: what every embedder must do. Subclass it and provide an ``embedder`` fixture."""

from __future__ import annotations

import numpy as np
import pytest

from mcp_memory_core import Embedder, QueryBatching

from .guard import OverrideGuard

TEXTS = [
    "The user prefers pytest over unittest.",
    "Deploys go out on Tuesdays after the standup.",
    "Ünïcödé text, emoji 🙂 and CJK 記憶 are fine.",
    "x",
]


class EmbedderConformance(OverrideGuard):
    """Subclass and override the ``embedder`` fixture. Set ``semantic = False`` for embedders that do
    not capture meaning (hash-based fakes), which skips the paraphrase test."""

    semantic: bool = True

    @pytest.fixture
    def embedder(self) -> Embedder:
        raise NotImplementedError("Override the `embedder` fixture to return the embedder under test.")

    def test_implements_protocol(self, embedder: Embedder) -> None:
        """Troubleshooting: an embedder needs ``model_id``, ``dimensions``, ``load()``,
        ``embed_documents(texts)`` and ``embed_query(text)``."""
        assert isinstance(embedder, Embedder)
        assert isinstance(embedder.model_id, str) and embedder.model_id.strip()
        assert isinstance(embedder.dimensions, int) and embedder.dimensions > 0

    def test_documents_shape_dtype_norm(self, embedder: Embedder) -> None:
        """Troubleshooting: return a numpy float32 array of shape (len(texts), dimensions) with
        L2-normalized rows (divide by the norm after pooling)."""
        vectors = embedder.embed_documents(TEXTS)
        assert isinstance(vectors, np.ndarray)
        assert vectors.dtype == np.float32
        assert vectors.shape == (len(TEXTS), embedder.dimensions)
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)

    def test_empty_batch(self, embedder: Embedder) -> None:
        """Troubleshooting: ``embed_documents([])`` must return shape (0, dimensions), not raise."""
        assert embedder.embed_documents([]).shape == (0, embedder.dimensions)

    def test_query_shape_dtype_norm(self, embedder: Embedder) -> None:
        """Troubleshooting: ``embed_query`` returns ONE vector of shape (dimensions,), float32, unit norm."""
        vector = embedder.embed_query("what testing framework does the user like?")
        assert vector.shape == (embedder.dimensions,)
        assert vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4

    def test_batch_equals_single(self, embedder: Embedder) -> None:
        """Troubleshooting: a text's vector must not depend on its batch. Usually padding leaks into
        pooling: mask padded tokens out of the mean."""
        batch = embedder.embed_documents(TEXTS)
        for i, text in enumerate(TEXTS):
            np.testing.assert_allclose(batch[i], embedder.embed_documents([text])[0], atol=1e-5)

    def test_query_batch_equals_single(self, embedder: Embedder) -> None:
        """Troubleshooting: an embedder that offers ``embed_queries`` (several queries in one call, so
        concurrent searches share it) must give each row exactly what ``embed_query`` gives that text."""
        if not isinstance(embedder, QueryBatching):
            pytest.skip("the embedder does not offer embed_queries")
        batch = embedder.embed_queries(TEXTS)
        assert batch.shape == (len(TEXTS), embedder.dimensions) and batch.dtype == np.float32
        for i, text in enumerate(TEXTS):
            np.testing.assert_allclose(batch[i], embedder.embed_query(text), atol=1e-5)

    def test_deterministic_and_distinct(self, embedder: Embedder) -> None:
        """Troubleshooting: the same text must give the same vector, different texts different ones."""
        a = embedder.embed_documents(TEXTS[:2])
        b = embedder.embed_documents(TEXTS[:2])
        np.testing.assert_allclose(a, b, atol=1e-6)
        assert float(a[0] @ a[1]) < 0.999

    def test_load_is_idempotent(self, embedder: Embedder) -> None:
        """Troubleshooting: ``load()`` may be called more than once (warm-up, then first use); the second
        call must be a no-op."""
        embedder.load()
        embedder.load()
        assert embedder.embed_query("ok").shape == (embedder.dimensions,)

    def test_paraphrase_closer_than_unrelated(self, embedder: Embedder) -> None:
        """Troubleshooting: a paraphrase must be closer than an unrelated sentence. If this fails with a
        real model, check pooling (mean over the attention mask) and normalization."""
        if not self.semantic:
            pytest.skip("embedder declares semantic = False")
        query = embedder.embed_query("Which test framework should I use here?")
        docs = embedder.embed_documents(["The user prefers pytest for tests.", "The cat slept on the sofa."])
        assert float(docs[0] @ query) > float(docs[1] @ query)


EmbedderConformance._suite = EmbedderConformance
