"""The optional capabilities the MiniLM embedder offers: its tokenizer counts tokens, its floor is calibrated."""

from mcp_memory_core import Calibrated, TokenCounting
from mcp_memory_minilm import MiniLMEmbedder


def test_minilm_counts_tokens_and_carries_a_calibrated_relevance_floor() -> None:
    embedder = MiniLMEmbedder()  # cheap: the model is not loaded
    assert isinstance(embedder, TokenCounting) and isinstance(embedder, Calibrated)
    assert embedder.relevance_floor is not None
