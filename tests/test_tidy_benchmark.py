"""The tidy benchmark: its labelled store is sound, and its arithmetic (merge pairs, precision,
recall, junk, the dev choice) is right."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import tidy_precision as bench

ROWS = bench.load(bench.DEFAULT_SET)


def test_the_set_is_labelled_split_and_grouped():
    labels = {"same", "update", "different", "short_fact", "junk"}
    assert {r.label for r in ROWS} == labels and {r.split for r in ROWS} == {"dev", "test"}
    groups: dict[str, list[bench.Row]] = {}
    for row in ROWS:
        groups.setdefault(row.group, []).append(row)
        assert row.id.startswith(row.split) and row.group.startswith(row.split)
    for members in groups.values():
        assert len({r.label for r in members}) == 1
        size = {"same": (2, 3), "update": (2, 2)}.get(members[0].label, (1, 1))
        assert size[0] <= len(members) <= size[1], members
    for split in ("dev", "test"):
        texts = [" ".join(r.content.casefold().split()) for r in ROWS if r.split == split]
        assert len(set(texts)) == len(texts)  # store_memory would refuse an exact repeat
        assert sum(r.split == split and r.label == "junk" for r in ROWS) >= 25
        assert sum(r.split == split and r.label == "short_fact" for r in ROWS) >= 25


def test_merge_and_junk_arithmetic():
    rows = [
        bench.Row("a1", "dev", "g1", "same", "x"),
        bench.Row("a2", "dev", "g1", "same", "x'"),
        bench.Row("b1", "dev", "g2", "update", "y"),
        bench.Row("b2", "dev", "g2", "update", "y'"),
        bench.Row("c", "dev", "c", "different", "z"),
        bench.Row("j", "dev", "j", "junk", "ok"),
        bench.Row("f", "dev", "f", "short_fact", "Use uv"),
    ]
    pairs = frozenset(frozenset(p) for p in (("a1", "a2"), ("b1", "b2"), ("a1", "c")))
    run = bench.Run(0.9, pairs, frozenset({"j", "f"}), 2)
    scores = bench.merge_scores(rows, run)
    assert (scores.proposed, scores.correct, scores.same) == (3, 2, 1)
    assert scores.precision == 2 / 3 and scores.precision_same == 1 / 3 and scores.recall == 1.0
    precision, recall, wrong, missed = bench.junk_scores(rows, run)
    assert (precision, recall, wrong, missed) == (0.5, 1.0, ["Use uv"], [])


def test_the_dev_choice_is_the_lowest_threshold_precise_there_and_above():
    rows = [bench.Row(i, "dev", "g", "same", i) for i in ("a", "b")] + [
        bench.Row("c", "dev", "c", "different", "c")
    ]
    good = frozenset({frozenset(("a", "b"))})
    bad = good | {frozenset(("a", "c"))}
    runs = [
        bench.Run(0.80, good, frozenset(), 1),
        bench.Run(0.85, bad, frozenset(), 1),
        bench.Run(0.90, good, frozenset(), 1),
    ]
    assert bench.choose(rows, runs) == 0.90
