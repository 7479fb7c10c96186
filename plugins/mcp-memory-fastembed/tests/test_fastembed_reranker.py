"""The cross-encoder reranker: real fastembed on a tiny cross-encoder built in the test, never the network."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pytest

from mcp_memory_core import Candidate, MemoryEngine, ScoredCandidate, Settings
from mcp_memory_core.plugins import PluginManager
from mcp_memory_fastembed import (
    CrossEncoderReranker,
    ModelFilesError,
    ModelNotDownloadedError,
    download_command,
)
from mcp_memory_fastembed import plugin as fastembed_plugin
from mcp_memory_fastembed.models import CROSS_ENCODER
from mcp_memory_testing import HashEmbedder, InMemoryStore, TickingClock, make_candidate
from mcp_memory_testing.ranker_suite import NOW


def ranked(*contents: str) -> list[ScoredCandidate]:
    """The ranker's order: as given, best first."""
    return [
        ScoredCandidate(make_candidate(text, 0.9 - i * 0.01), 0.9 - i * 0.01, {"similarity": 0.9 - i * 0.01})
        for i, text in enumerate(contents)
    ]


@pytest.fixture
def reranker(cross_encoder_folder: Path) -> CrossEncoderReranker:
    return CrossEncoderReranker(path=cross_encoder_folder, cache_dir=cross_encoder_folder / "cache")


def test_it_ranks_by_the_models_score(reranker: CrossEncoderReranker, no_network) -> None:
    given = ranked(
        "the cat slept on the sofa",
        "deploys go out on tuesdays after the standup",
        "the user prefers pytest over unittest for tests",
    )
    result = reranker.rerank("which test framework does the user like", given, NOW)
    # the tiny model's logit: the words query and text share, "the" weighing 0.1
    assert [(s.candidate.memory.content, round(s.score, 4)) for s in result] == [
        ("the user prefers pytest over unittest for tests", 1.1),
        ("the cat slept on the sofa", 0.2),
        ("deploys go out on tuesdays after the standup", 0.1),
    ]
    assert result[0].parts["fastembed-cross-encoder"] == result[0].score
    assert result[0].parts["similarity"] == pytest.approx(0.88)


def test_equal_scores_keep_the_order_they_were_given_in(reranker: CrossEncoderReranker) -> None:
    given = ranked("first memory", "second memory", "third memory")
    result = reranker.rerank("nothing shared here", given, NOW)
    assert [s.candidate.memory.content for s in result] == ["first memory", "second memory", "third memory"]
    assert {s.score for s in result} == {0.0}


def test_a_missing_model_is_one_sentence_with_the_command_that_downloads_it(
    tmp_path: Path, no_network
) -> None:
    reranker = CrossEncoderReranker("BAAI/bge-reranker-base", cache_dir=tmp_path)
    with pytest.raises(ModelNotDownloadedError) as caught:
        reranker.load()
    command = download_command(CROSS_ENCODER, "BAAI/bge-reranker-base", tmp_path)
    assert f"`{command}`" in str(caught.value)
    assert "from fastembed.rerank.cross_encoder import TextCrossEncoder; TextCrossEncoder(" in command
    assert "MCP_MEMORY_FASTEMBED_RERANKER_PATH" in str(caught.value)


def test_a_folder_lacking_files_names_them(tmp_path: Path) -> None:
    with pytest.raises(
        ModelFilesError, match=r"lacks onnx/model\.onnx, tokenizer\.json, tokenizer_config\.json"
    ):
        CrossEncoderReranker(path=tmp_path, cache_dir=tmp_path).load()


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="depth"):
        CrossEncoderReranker(depth=0)
    with pytest.raises(ValueError, match="threads"):
        CrossEncoderReranker(threads=0)


def test_the_plugin_registers_the_reranker_with_settings_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_RERANKER_MODEL", "BAAI/bge-reranker-base")
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_RERANKER_PATH", str(tmp_path / "bge"))
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_RERANKER_DEPTH", "7")
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_CACHE_DIR", str(tmp_path / "cache"))
    manager = PluginManager()
    manager.register(fastembed_plugin, name="fastembed")
    spec = manager.reranker("fastembed-cross-encoder")
    assert spec.settings_model is fastembed_plugin.CrossEncoderSettings
    reranker = spec.factory(Settings())
    assert isinstance(reranker, CrossEncoderReranker)
    assert (
        reranker.name,
        reranker.model_name,
        reranker.path,
        reranker.cache_dir,
        reranker.depth,
        reranker.heavy,
    ) == (
        "fastembed-cross-encoder",
        "BAAI/bge-reranker-base",
        tmp_path / "bge",
        tmp_path / "cache",
        7,
        True,
    )


class _Similarity:
    """The smallest ranker: vector similarity."""

    def rank(self, query: str, candidates: Sequence[Candidate], now: datetime) -> list[ScoredCandidate]:
        scored = [
            ScoredCandidate(c, c.vector_similarity or 0.0, {"similarity": c.vector_similarity or 0.0})
            for c in candidates
        ]
        return sorted(scored, key=lambda s: -s.score)


def _engine(store: InMemoryStore, *rerankers: object) -> MemoryEngine:
    return MemoryEngine(
        store, HashEmbedder(), _Similarity(), clock=TickingClock(), track_access=False, rerankers=rerankers
    )


def test_in_a_real_search_it_lifts_the_memory_the_query_is_about(reranker: CrossEncoderReranker) -> None:
    store = InMemoryStore()
    plain = _engine(store)
    for text in (
        "the cat slept on the sofa",
        "deploys go out on tuesdays after the standup",
        "the user prefers pytest over unittest for tests",
    ):
        plain.store_memory(text)
    query = "which test framework does the user like"
    found = _engine(store, reranker).search(query, limit=1)
    assert found.warnings == []
    assert found.hits[0].memory.content == "the user prefers pytest over unittest for tests"
    assert found.hits[0].parts["fastembed-cross-encoder"] > 0


def test_a_reranker_whose_model_is_missing_is_skipped_and_the_search_says_so(tmp_path: Path) -> None:
    store = InMemoryStore()
    _engine(store).store_memory("the user prefers pytest")
    missing = CrossEncoderReranker("Xenova/ms-marco-MiniLM-L-6-v2", cache_dir=tmp_path)
    found = _engine(store, missing).search("pytest", limit=1)
    assert found.hits[0].memory.content == "the user prefers pytest"
    assert len(found.warnings) == 1
    assert "reranker 'fastembed-cross-encoder' skipped: it failed to load" in found.warnings[0]
    assert "ModelNotDownloadedError" in found.warnings[0]


def test_the_whole_sentence_of_a_failed_load_reaches_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # a search's warning cuts a reason to 200 characters, which the download command does not fit in
    missing = CrossEncoderReranker("Xenova/ms-marco-MiniLM-L-6-v2", cache_dir=tmp_path)
    with caplog.at_level("ERROR", logger="mcp_memory_fastembed"), pytest.raises(ModelNotDownloadedError):
        missing.load()
    command = download_command(CROSS_ENCODER, "Xenova/ms-marco-MiniLM-L-6-v2", tmp_path)
    assert any(f"`{command}`" in record.getMessage() for record in caplog.records)
