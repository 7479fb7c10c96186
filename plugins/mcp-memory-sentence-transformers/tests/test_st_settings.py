"""The plugin's settings: its model is ``MCP_MEMORY_MODEL`` (read by the plugin, not the core), the rest
prefixed ``MCP_MEMORY_SENTENCE_TRANSFORMERS_``. Needs no torch: nothing here loads a model."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp_memory_sentence_transformers", reason="the plugin is not installed here")

from mcp_memory_core.settings import Settings
from mcp_memory_sentence_transformers.plugin import SentenceTransformersSettings, mcp_memory_embedders


def built(monkeypatch: pytest.MonkeyPatch, **variables: str) -> object:
    for name in ("MCP_MEMORY_MODEL", "MCP_MEMORY_SENTENCE_TRANSFORMERS_DEVICE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    (spec,) = list(mcp_memory_embedders())
    return spec.factory(Settings())


def test_the_model_is_mcp_memory_model(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = built(
        monkeypatch, MCP_MEMORY_MODEL="BAAI/bge-small-en-v1.5", MCP_MEMORY_SENTENCE_TRANSFORMERS_DEVICE="mps"
    )
    assert repr(embedder) == "SentenceTransformerEmbedder('BAAI/bge-small-en-v1.5', device='mps')"


def test_the_default_model_is_all_minilm_l6_v2(monkeypatch: pytest.MonkeyPatch) -> None:
    assert repr(built(monkeypatch)) == "SentenceTransformerEmbedder('all-MiniLM-L6-v2', device='cpu')"


def test_the_settings_model_declares_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the doctor lists (and knows as read by a plugin) comes from the spec's settings model."""
    monkeypatch.setenv("MCP_MEMORY_MODEL", "all-mpnet-base-v2")
    monkeypatch.setenv(
        "MCP_MEMORY_SENTENCE_TRANSFORMERS_MODEL", "not-read"
    )  # a name the doctor does not list
    assert SentenceTransformersSettings.model_fields["model"].validation_alias == "MCP_MEMORY_MODEL"
    assert SentenceTransformersSettings().model == "all-mpnet-base-v2"
