"""Quick figures for the minilm embedder: import time, load time, query latency, batch throughput.

Run: ``python plugins/mcp-memory-minilm/scripts/bench.py [--threads N]`` in an env with mcp-memory-minilm.
Prints to stdout; it is a maintainer tool, not part of the package.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def import_time() -> float:
    code = "import time; t=time.perf_counter(); import mcp_memory_minilm.plugin; print(time.perf_counter()-t)"
    runs = [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(5)]
    return statistics.median(runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()

    print(f"import mcp_memory_minilm.plugin (median of 5 fresh processes): {import_time() * 1000:.0f} ms")
    from mcp_memory_minilm import DEFAULT_MODEL_DIR, MiniLMEmbedder

    size = (DEFAULT_MODEL_DIR / "model.onnx").stat().st_size
    print(f"model.onnx: {size} bytes ({size / 1e6:.1f} MB)")
    e = MiniLMEmbedder(threads=args.threads)
    t = time.perf_counter()
    e.load()
    print(
        f"load() incl. onnxruntime import, sha256 check, session ({e.threads} threads): "
        f"{(time.perf_counter() - t) * 1000:.0f} ms"
    )
    e.embed_query("warm up")
    lat = []
    for i in range(50):
        t = time.perf_counter()
        e.embed_query(f"what did I say about the deployment schedule for project {i}?")
        lat.append(time.perf_counter() - t)
    print(
        f"embed_query median of 50: {statistics.median(lat) * 1000:.2f} ms (p90 "
        f"{sorted(lat)[44] * 1000:.2f} ms)"
    )
    texts = [f"Short memory number {i}: the user likes tea with {i % 7} sugars." for i in range(256)]
    e.embed_documents(texts[:32])
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        e.embed_documents(texts)
        runs.append(time.perf_counter() - t)
    best = min(runs)
    print(f"embed_documents 256 short texts: {best:.3f} s -> {256 / best:.0f} texts/s (best of 3)")


if __name__ == "__main__":
    main()
