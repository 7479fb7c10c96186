"""Model folders made here, so no test downloads anything.

- ``minilm_folder``: the all-MiniLM-L6-v2 files the minilm plugin ships (``model.onnx``,
  ``tokenizer.json``), linked into a folder laid out as fastembed's model folder of
  ``sentence-transformers/all-MiniLM-L6-v2``, plus the ``tokenizer_config.json`` fastembed reads.
- ``minilm_cache``: the same files in a fastembed cache folder, laid out as the Hugging Face hub
  cache a download leaves (``models--Qdrant--all-MiniLM-L6-v2-onnx/snapshots/<revision>/``).
- ``cross_encoder_folder``: a tiny cross-encoder built with onnx's helper API, and its tokenizer built
  with the tokenizers library. Its logit is a weighted count of the words the query and the text
  share (one-hot embedding lookup, one bag of words per segment, their product, a linear layer): a
  real model that ranks, small enough to build in a test.
- ``no_network``: opening a socket fails the test.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

from mcp_memory_minilm import DEFAULT_MODEL_DIR

MINILM_TOKENIZER_CONFIG = {"model_max_length": 256, "pad_token": "[PAD]"}
CROSS_ENCODER_WORDS = [
    "the",
    "user",
    "prefers",
    "pytest",
    "over",
    "unittest",
    "for",
    "tests",
    "deploys",
    "go",
    "out",
    "on",
    "tuesdays",
    "after",
    "standup",
    "which",
    "test",
    "framework",
    "does",
    "like",
    "cat",
    "slept",
    "sofa",
    "memory",
    "about",
    "topic",
    "number",
    "only",
    "keywords",
    "what",
    "when",
    "do",
    "we",
    "deploy",
]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]


def link_minilm_files(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("model.onnx", "tokenizer.json"):
        (folder / name).symlink_to(DEFAULT_MODEL_DIR / name)
    (folder / "tokenizer_config.json").write_text(json.dumps(MINILM_TOKENIZER_CONFIG))
    return folder


@pytest.fixture(scope="session")
def minilm_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return link_minilm_files(tmp_path_factory.mktemp("minilm") / "all-MiniLM-L6-v2")


@pytest.fixture(scope="session")
def minilm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("fastembed-cache")
    repo = cache / "models--Qdrant--all-MiniLM-L6-v2-onnx"
    revision = "0" * 40
    link_minilm_files(repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    return cache


def build_cross_encoder(folder: Path, model_file: str = "onnx/model.onnx") -> Path:
    """A cross-encoder fastembed loads as any other: ``model_file`` taking ``input_ids``,
    ``attention_mask`` and ``token_type_ids``, giving ``logits`` of shape (batch, 1)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate([*SPECIALS, *dict.fromkeys(CROSS_ENCODER_WORDS)])}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 64, "pad_token": "[PAD]"}))

    size = len(vocab)
    onehot = np.eye(size, dtype=np.float32)
    onehot[: len(SPECIALS)] = 0.0  # special tokens are no words
    weights = np.ones((size, 1), dtype=np.float32)
    weights[vocab["the"]] = 0.1  # a common word tells little
    ints = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    nodes = [
        helper.make_node("Gather", ["onehot", "input_ids"], ["words"]),  # (batch, sequence, vocab)
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["token_type_ids"], ["segment"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["mask", "segment"], ["text_w"]),
        helper.make_node("Sub", ["mask", "text_w"], ["query_w"]),
        helper.make_node("Unsqueeze", ["query_w", "axis2"], ["query_w3"]),
        helper.make_node("Unsqueeze", ["text_w", "axis2"], ["text_w3"]),
        helper.make_node("Mul", ["words", "query_w3"], ["query_words"]),
        helper.make_node("Mul", ["words", "text_w3"], ["text_words"]),
        helper.make_node("ReduceSum", ["query_words", "axis1"], ["query_bag"], keepdims=0),
        helper.make_node("ReduceSum", ["text_words", "axis1"], ["text_bag"], keepdims=0),
        helper.make_node("Mul", ["query_bag", "text_bag"], ["shared"]),
        helper.make_node("MatMul", ["shared", "weights"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        ints,
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            numpy_helper.from_array(onehot, "onehot"),
            numpy_helper.from_array(weights, "weights"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    (folder / model_file).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / model_file))
    return folder


@pytest.fixture(scope="session")
def cross_encoder_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a test opened a network connection")

    monkeypatch.setattr(socket, "socket", refused)
    monkeypatch.setattr(socket, "create_connection", refused)
