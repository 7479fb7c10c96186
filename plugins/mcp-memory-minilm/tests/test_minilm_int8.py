"""precision=int8: per-channel dynamic quantization of the shipped model, made locally and cached."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from mcp_memory_minilm import MiniLMEmbedder, QuantizationUnavailableError
from mcp_memory_minilm import embedder as embedder_module

pytestmark = pytest.mark.model

SENTENCES = [
    "The user prefers dark mode in every editor.",
    "Deploys go out on Tuesdays after the standup.",
    "Paris is the capital of France.",
    "Alice is allergic to peanuts and avoids Thai restaurants.",
    "Our API returns ISO 8601 timestamps in UTC.",
    "The build fails on Windows because of path separators.",
    "Bob migrated the billing service to PostgreSQL 16 last spring.",
    "Remind me to renew the TLS certificate before March.",
    "The team uses uv for packaging and ruff for linting.",
    "Caroline went to the LGBTQ support group on 7 May 2023.",
    "Melanie painted a sunrise over the lake last year.",
    "What did we decide about the release schedule?",
    "I love hiking in the mountains with my dog on weekends.",
    "The quarterly report is due next Friday; send the figures to Alice.",
    "Use tabs, not spaces, in the Makefile.",
    "Kubernetes pods restart when the liveness probe times out.",
    "My sister's birthday is on the 14th of July.",
    "The client wants the blue theme and a larger font.",
    "Zürich café — naïve unicode 日本語 🚀",
    "a",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("onnx", reason="precision=int8 needs mcp-memory-minilm[int8] (onnx)")
    return Path(tmp_path_factory.mktemp("minilm-cache"))


@pytest.fixture(scope="module")
def int8(cache_dir: Path) -> MiniLMEmbedder:
    e = MiniLMEmbedder(precision="int8", cache_dir=cache_dir)
    e.load()
    return e


@pytest.fixture(scope="module")
def fp32() -> MiniLMEmbedder:
    e = MiniLMEmbedder()
    e.load()
    return e


def test_int8_close_to_fp32(int8: MiniLMEmbedder, fp32: MiniLMEmbedder) -> None:
    a = int8.embed_documents(SENTENCES)
    b = fp32.embed_documents(SENTENCES)
    cosines = (a * b).sum(axis=1)
    assert float(cosines.mean()) >= 0.99, cosines
    assert float(cosines.min()) >= 0.97, cosines


def test_int8_keeps_the_ranking(int8: MiniLMEmbedder, fp32: MiniLMEmbedder) -> None:
    query = "which database did Bob move billing to?"
    a = int8.embed_documents(SENTENCES) @ int8.embed_query(query)
    b = fp32.embed_documents(SENTENCES) @ fp32.embed_query(query)
    assert int(np.argmax(a)) == int(np.argmax(b)) == 6


def test_int8_shape_dtype_norm(int8: MiniLMEmbedder) -> None:
    vecs = int8.embed_documents(SENTENCES)
    assert vecs.shape == (len(SENTENCES), 384)
    assert vecs.dtype == np.float32
    assert np.all(np.isfinite(vecs))
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    q = int8.embed_query("where do deploys happen?")
    assert q.shape == (384,) and q.dtype == np.float32
    assert int8.embed_documents([]).shape == (0, 384)


def test_model_id_differs(int8: MiniLMEmbedder, fp32: MiniLMEmbedder) -> None:
    assert int8.model_id != fp32.model_id
    sha12 = fp32.model_id.rsplit(":", 1)[1]
    assert int8.model_id == f"sentence-transformers/all-MiniLM-L6-v2:onnx-int8:{sha12}"
    assert fp32.model_id == f"sentence-transformers/all-MiniLM-L6-v2:onnx-fp32:{sha12}"
    # Known without loading anything.
    assert MiniLMEmbedder(precision="int8").model_id == int8.model_id
    assert "int8" in repr(int8)


def test_cache_layout(int8: MiniLMEmbedder, cache_dir: Path) -> None:
    path = int8.int8_model_path()
    assert path.parent == cache_dir
    import onnxruntime as ort  # type: ignore[import-untyped]

    sha = int8.model_id.rsplit(":", 1)[1]
    assert sha in path.name and f"ort{ort.__version__}" in path.name
    record = json.loads(path.with_name(path.name + ".sha256").read_text())
    assert record["onnxruntime_version"] == ort.__version__
    assert len(record["sha256"]) == 64
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".tmp-")]  # no temporary files left


def test_cache_reused(int8: MiniLMEmbedder, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = int8.int8_model_path()
    before = path.stat().st_mtime_ns

    def no_quantizing(*args: object) -> bytes:
        raise AssertionError("the cached int8 model should have been reused")

    monkeypatch.setattr(embedder_module, "_quantize_to_cache", no_quantizing)
    again = MiniLMEmbedder(precision="int8", cache_dir=cache_dir)
    again.load()
    np.testing.assert_array_equal(again.embed_query("hello there"), int8.embed_query("hello there"))
    assert path.stat().st_mtime_ns == before


def test_cache_hit_needs_no_onnx(
    int8: MiniLMEmbedder, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    again = MiniLMEmbedder(precision="int8", cache_dir=cache_dir)
    again.load()
    assert again.loaded


@pytest.mark.parametrize("damage", ["flip-bytes", "truncate", "no-record", "bad-record"])
def test_corrupt_cache_detected_and_rebuilt(
    int8: MiniLMEmbedder, tmp_path: Path, damage: str, capfd: pytest.CaptureFixture[str]
) -> None:
    good = int8.int8_model_path()
    path = tmp_path / good.name
    record = good.with_name(good.name + ".sha256")
    path.write_bytes(good.read_bytes())
    (tmp_path / record.name).write_text(record.read_text())
    sidecar = tmp_path / record.name
    if damage == "flip-bytes":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[:1000])
    elif damage == "no-record":
        sidecar.unlink()
    else:
        sidecar.write_text("{not json")

    calls = []
    real = embedder_module._quantize_to_cache

    def counting(*args: object) -> bytes:
        calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(embedder_module, "_quantize_to_cache", counting)
        rebuilt = MiniLMEmbedder(precision="int8", cache_dir=tmp_path)
        rebuilt.load()
    assert len(calls) == 1
    assert path.read_bytes() == good.read_bytes()  # quantization is deterministic
    assert json.loads(sidecar.read_text())["sha256"] == json.loads(record.read_text())["sha256"]
    np.testing.assert_array_equal(rebuilt.embed_query("hello there"), int8.embed_query("hello there"))
    assert capfd.readouterr().out == ""  # stdout belongs to the MCP protocol


def test_missing_onnx_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        "importlib.util.find_spec",
        lambda name, *a: None if name == "onnx" else real(name, *a),
    )
    e = MiniLMEmbedder(precision="int8", cache_dir=tmp_path / "empty")
    with pytest.raises(QuantizationUnavailableError) as info:
        e.load()
    message = str(info.value)
    assert "mcp-memory-minilm[int8]" in message and "onnx" in message and "fp32" in message
    assert not e.loaded


def test_invalid_precision() -> None:
    with pytest.raises(ValueError, match="precision"):
        MiniLMEmbedder(precision="int4")  # type: ignore[arg-type]


def test_settings_precision(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pydantic import ValidationError

    from mcp_memory_core import Settings
    from mcp_memory_minilm.plugin import MiniLMSettings, mcp_memory_embedders

    spec = next(iter(mcp_memory_embedders()))
    assert getattr(spec.factory(Settings()), "precision", None) == "fp32"
    monkeypatch.setenv("MCP_MEMORY_MINILM_PRECISION", "int8")
    monkeypatch.setenv("MCP_MEMORY_MINILM_CACHE_DIR", str(tmp_path))
    e = spec.factory(Settings())
    assert isinstance(e, MiniLMEmbedder)
    assert e.precision == "int8" and e.cache_dir == tmp_path
    assert not e.loaded  # the factory stays cheap
    monkeypatch.setenv("MCP_MEMORY_MINILM_PRECISION", "fp16")
    with pytest.raises(ValidationError):
        MiniLMSettings()
