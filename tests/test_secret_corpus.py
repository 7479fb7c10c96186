"""The secret-detection corpora (benchmarks/data) hold what the benchmark says, and the detector keeps
its figures on them: every secret removed, no ordinary memory altered."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import make_secret_corpus as corpus
import secret_detection as bench


def test_the_corpora_are_the_generators_and_large_enough() -> None:
    secrets, ordinary = bench.load("secret_memories.jsonl"), bench.load("ordinary_memories.jsonl")
    assert len(secrets) >= 100 and len(ordinary) >= 200
    assert all(row["secret"] in row["text"] for row in secrets)
    corpus.rng.seed(20261126)  # the files are what the seeded generator writes
    assert corpus.secret_memories() == secrets and corpus.ordinary_memories() == ordinary


def test_every_secret_is_removed_and_no_ordinary_memory_altered() -> None:
    lines, _ = bench.measure()
    assert "altered: **0**" in "\n".join(lines)
    assert [line for line in lines if line.startswith("- ")] == []  # no miss, no alteration listed
    assert "| **all** | **124** | **124** | **100.0%** | 124/124 |" in lines
