"""The fastembed embedder: real fastembed on the all-MiniLM-L6-v2 files the minilm plugin ships, from a
model folder and from a cache folder, never the network."""

from __future__ import annotations

import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mcp_memory_core import Settings
from mcp_memory_core.plugins import PluginManager
from mcp_memory_fastembed import (
    FastembedEmbedder,
    ModelFilesError,
    ModelNotDownloadedError,
    UnknownModelError,
    download_command,
)
from mcp_memory_fastembed import plugin as fastembed_plugin
from mcp_memory_fastembed.models import EMBEDDING
from mcp_memory_minilm import MiniLMEmbedder

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TEXTS = [
    "The user prefers dark mode in every editor.",
    "Deploys go out on Tuesdays after the standup.",
    "",
    "Zürich café — naïve unicode 日本語 🚀",
    "The quarterly report is due next Friday; remind Alice to send the figures. " * 8,
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def test_its_vectors_equal_the_minilm_plugins(
    minilm_folder: Path, minilm: MiniLMEmbedder, no_network
) -> None:
    embedder = FastembedEmbedder(MINILM, path=minilm_folder, cache_dir=minilm_folder.parent / "cache")
    ours = embedder.embed_documents(TEXTS)
    theirs = minilm.embed_documents(TEXTS)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.sum(ours * theirs, axis=1), 1.0, atol=1e-5)
    query = "when do deploys happen?"
    assert float(embedder.embed_query(query) @ minilm.embed_query(query)) == pytest.approx(1.0, abs=1e-5)


def test_a_model_downloaded_into_the_cache_folder_loads_without_the_network(
    minilm_cache: Path, minilm: MiniLMEmbedder, no_network
) -> None:
    embedder = FastembedEmbedder("all-MiniLM-L6-v2", cache_dir=minilm_cache)
    embedder.load()
    assert embedder.loaded
    vector = embedder.embed_query("pytest or unittest?")
    assert float(vector @ minilm.embed_query("pytest or unittest?")) == pytest.approx(1.0, abs=1e-5)


def test_a_missing_model_is_one_sentence_with_the_command_that_downloads_it(
    tmp_path: Path, no_network
) -> None:
    embedder = FastembedEmbedder("bge-small-en-v1.5", cache_dir=tmp_path)
    with pytest.raises(ModelNotDownloadedError) as caught:
        embedder.load()
    message = str(caught.value)
    command = download_command(EMBEDDING, "BAAI/bge-small-en-v1.5", tmp_path)
    assert f"`{command}`" in message
    assert "never downloads at run time" in message and "MCP_MEMORY_FASTEMBED_PATH" in message
    assert "Qdrant/bge-small-en-v1.5-onnx-Q" in message
    assert "\n" not in message and not embedder.loaded
    assert shlex.split(command)[:6] == [
        "uv",
        "run",
        "--no-project",
        "--with",
        shlex.split(command)[4],
        "python",
    ]
    code = shlex.split(command)[-1]
    assert (
        code
        == f"from fastembed import TextEmbedding; TextEmbedding('BAAI/bge-small-en-v1.5', cache_dir='{tmp_path}')"
    )


def test_a_folder_lacking_files_names_them(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{}")
    embedder = FastembedEmbedder(MINILM, path=tmp_path, cache_dir=tmp_path / "cache")
    with pytest.raises(ModelFilesError, match=r"lacks model\.onnx, tokenizer_config\.json of .*hf download"):
        embedder.load()
    with pytest.raises(ModelFilesError, match="is not a folder"):
        FastembedEmbedder(MINILM, path=tmp_path / "nowhere", cache_dir=tmp_path).load()


def test_another_models_files_under_a_name_are_refused(minilm_folder: Path, tmp_path: Path) -> None:
    embedder = FastembedEmbedder("BAAI/bge-small-zh-v1.5", path=tmp_path / "zh", cache_dir=tmp_path)
    # bge-small-zh's files are model_optimized.onnx and the tokenizer: give it MiniLM's (384-d, not 512)
    (tmp_path / "zh").mkdir()
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (tmp_path / "zh" / name).symlink_to(minilm_folder / name)
    (tmp_path / "zh" / "model_optimized.onnx").symlink_to(minilm_folder / "model.onnx")
    with pytest.raises(ModelFilesError, match="give 384-d vectors, not its 512"):
        embedder.load()
    assert not embedder.loaded


def test_an_unknown_model_lists_the_ones_fastembed_knows() -> None:
    with pytest.raises(
        UnknownModelError, match=r"MCP_MEMORY_FASTEMBED_MODEL='bge-tiny' is not the name of one model"
    ) as caught:
        _ = FastembedEmbedder("bge-tiny").model_id
    assert "BAAI/bge-base-en-v1.5" in str(caught.value) and "intfloat/multilingual-e5-large" in str(
        caught.value
    )


def test_model_id_carries_the_model_its_onnx_file_and_the_fastembed_version() -> None:
    from importlib.metadata import version

    small = FastembedEmbedder("bge-small-en-v1.5")
    assert small.model_id == (
        "fastembed:BAAI/bge-small-en-v1.5:Qdrant/bge-small-en-v1.5-onnx-Q/model_optimized.onnx:"
        f"fastembed-{version('fastembed')}"
    )
    assert small.dimensions == 384
    assert FastembedEmbedder("BAAI/bge-base-en-v1.5").dimensions == 768
    e5 = FastembedEmbedder("intfloat/multilingual-e5-large")
    assert (e5.dimensions, e5.model_id.endswith(":passage-prefix='passage: '")) == (1024, True)
    # another passage prefix changes every stored vector: another model_id
    assert FastembedEmbedder("intfloat/multilingual-e5-large", passage_prefix="").model_id != e5.model_id
    assert not small.loaded and not e5.loaded


def test_prefixes_are_the_models_own_unless_set() -> None:
    assert FastembedEmbedder("intfloat/multilingual-e5-large").prefixes == ("query: ", "passage: ")
    assert FastembedEmbedder("bge-base-en-v1.5").prefixes == (
        "Represent this sentence for searching relevant passages: ",
        "",
    )
    assert FastembedEmbedder("nomic-ai/nomic-embed-text-v1.5").prefixes == (
        "search_query: ",
        "search_document: ",
    )
    assert FastembedEmbedder("paraphrase-multilingual-MiniLM-L12-v2").prefixes == ("", "")
    assert FastembedEmbedder("bge-small-en-v1.5", query_prefix="q: ", passage_prefix="d: ").prefixes == (
        "q: ",
        "d: ",
    )


def test_the_prefixes_reach_the_model(minilm_folder: Path, minilm: MiniLMEmbedder) -> None:
    embedder = FastembedEmbedder(
        MINILM,
        path=minilm_folder,
        cache_dir=minilm_folder.parent / "cache",
        query_prefix="query: ",
        passage_prefix="passage: ",
    )
    documents = embedder.embed_documents(["pytest is preferred"])
    query = embedder.embed_query("which framework?")
    np.testing.assert_allclose(documents, minilm.embed_documents(["passage: pytest is preferred"]), atol=1e-5)
    np.testing.assert_allclose(query, minilm.embed_query("query: which framework?"), atol=1e-5)


def test_only_all_minilm_l6_v2_brings_the_minilm_relevance_floor() -> None:
    from mcp_memory_core.relevance import ALL_MINILM_L6_V2

    assert FastembedEmbedder(MINILM).relevance_floor is ALL_MINILM_L6_V2
    assert FastembedEmbedder("all-MiniLM-L6-v2").relevance_floor is ALL_MINILM_L6_V2
    assert FastembedEmbedder(MINILM, query_prefix="query: ").relevance_floor is None
    assert FastembedEmbedder("bge-small-en-v1.5").relevance_floor is None


def test_empty_input_loads_nothing(tmp_path: Path) -> None:
    embedder = FastembedEmbedder(MINILM, cache_dir=tmp_path)
    assert embedder.embed_documents([]).shape == (0, 384)
    assert not embedder.loaded
    with pytest.raises(TypeError):
        embedder.embed_documents("not a list")


def test_importing_the_plugin_and_building_the_embedder_import_no_fastembed() -> None:
    code = textwrap.dedent(
        """
        import sys
        from mcp_memory_fastembed import plugin
        from mcp_memory_core import Settings
        embedder = plugin._embedder(Settings())
        reranker = plugin._reranker(Settings())
        heavy = sorted(m for m in ("fastembed", "onnxruntime", "huggingface_hub") if m in sys.modules)
        print(heavy)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_plugin_registers_the_embedder_with_settings_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_MODEL", "intfloat/multilingual-e5-large")
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_PATH", str(tmp_path / "e5"))
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_THREADS", "1")
    monkeypatch.setenv("MCP_MEMORY_FASTEMBED_QUERY_PREFIX", "query: ")
    manager = PluginManager()
    manager.register(fastembed_plugin, name="fastembed")
    spec = manager.embedder("fastembed")
    assert spec.settings_model is fastembed_plugin.FastembedSettings
    embedder = spec.factory(Settings())
    assert isinstance(embedder, FastembedEmbedder)
    assert (embedder.model_name, embedder.path, embedder.cache_dir, embedder.threads) == (
        "intfloat/multilingual-e5-large",
        tmp_path / "e5",
        tmp_path / "cache",
        1,
    )
    assert embedder.prefixes == ("query: ", "passage: ")


def test_the_cache_folder_defaults_to_fastembeds_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path))
    assert FastembedEmbedder().cache_dir == tmp_path
    monkeypatch.delenv("FASTEMBED_CACHE_PATH")
    assert FastembedEmbedder().cache_dir.parts[-2:] == ("mcp-memory", "fastembed")


def test_an_engine_stores_and_finds_memories_with_it(minilm_folder: Path, no_network) -> None:
    from mcp_memory_core import MemoryEngine
    from mcp_memory_testing import InMemoryStore, SimilarityRanker, TickingClock

    embedder = FastembedEmbedder(MINILM, path=minilm_folder, cache_dir=minilm_folder.parent / "cache")
    store = InMemoryStore()
    engine = MemoryEngine(store, embedder, SimilarityRanker(), clock=TickingClock(), track_access=False)
    engine.store_memory("The staging database listens on port 5432")
    engine.store_memory("The user prefers pytest over unittest")
    found = engine.search("which port does staging use?", limit=1)
    assert found.hits[0].memory.content == "The staging database listens on port 5432"
    assert engine.stats()["embedder"] == embedder.model_id
