"""Paired LoCoMo comparison of the minilm embedder's fp32 and int8 precisions (issue 5's int8 rule).

Both precisions answer the same questions through the same code (``locomo.run``, turns, the default
ranker); the script prints each split's hit@5, the questions each precision wins, and a paired
bootstrap 95% interval of the difference (int8 - fp32), per split and pooled.

    python benchmarks/compare_precision.py --data ../shared/data/locomo10.json

Needs ``mcp-memory-minilm[int8]`` (onnx) to make the int8 model. Takes about three minutes here.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo

PRECISIONS = ("fp32", "int8")
BOOTSTRAP_ROUNDS = 10_000


def per_question_hits(
    precision: str, conversations: Sequence[locomo.Conversation], ranker: str
) -> dict[str, list[float]]:
    """hit@5 per question, by split, with MCP_MEMORY_MINILM_PRECISION=precision."""
    from mcp_memory_core import Settings, plugins

    os.environ["MCP_MEMORY_MINILM_PRECISION"] = precision  # read by the minilm factory
    pm = plugins.plugin_manager_from_settings()
    base = Settings()
    setups = [locomo.Setup(ranker, pm.ranker(ranker).factory(base), locomo.engine_retriever)]
    make_engine = locomo.engine_factory(base, pm)

    hits: dict[str, list[float]] = {}
    for split, indices in locomo.SPLITS.items():
        chosen = [conversations[i] for i in indices]
        results = locomo.run(chosen, make_engine, setups, "turns", log=lambda line: None)
        hits[split] = results[ranker]["all"].values["hit@5"]
    return hits


def paired_line(name: str, base: np.ndarray, other: np.ndarray, rng: np.random.Generator) -> str:
    diff = other - base
    boots = diff[rng.integers(0, len(diff), (BOOTSTRAP_ROUNDS, len(diff)))].mean(axis=1)
    low, high = np.percentile(boots, [2.5, 97.5]) * 100
    return (
        f"| {name} | {len(diff)} | {base.mean():.3f} | {other.mean():.3f} | {diff.mean() * 100:+.1f} | "
        f"{int((diff > 0).sum())} / {int((diff < 0).sum())} | {low:+.1f} to {high:+.1f} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/locomo10.json"
    )
    parser.add_argument("--ranker", default="hybrid")
    args = parser.parse_args(argv)
    if not args.data.exists():
        parser.error(f"{args.data} not found: pass --data /path/to/locomo10.json")
    conversations = locomo.load_conversations(args.data)
    hits = {p: per_question_hits(p, conversations, args.ranker) for p in PRECISIONS}
    rng = np.random.default_rng(0)
    print(f"LoCoMo turns hit@5, ranker {args.ranker}: int8 against fp32, same questions")
    print()
    print("| split | questions | fp32 | int8 | difference (pt) | int8 wins / loses | 95% interval (pt) |")
    print("|---|---|---|---|---|---|---|")
    for split in locomo.SPLITS:
        print(paired_line(split, np.array(hits["fp32"][split]), np.array(hits["int8"][split]), rng))
    pooled = {p: np.array([h for split in locomo.SPLITS for h in hits[p][split]]) for p in PRECISIONS}
    print(paired_line("pooled", pooled["fp32"], pooled["int8"], rng))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
