"""Measure ``mcp-memory tidy``'s proposals on a labelled store: are the merges it proposes right, and
is what it calls junk junk?

The set (``benchmarks/data/tidy_set.jsonl``, described in ``benchmarks/data/README.md``) is one
memory a line, each in a ``group``: memories of one group labelled ``same`` restate one fact
(paraphrases, rewordings), the two of an ``update`` group give an old and a new value of one
attribute (the old stored first), every ``different`` memory (near-but-different facts, unrelated
ones) and every ``short_fact`` ("Maya is vegetarian", "Use uv") is a group of its own, and ``junk``
lines are greetings, thanks, acknowledgements, one-word turns and content-free lines.

Each split is stored, in file order, into a fresh store built by the server's own assembly (the
sqlite-vec store, the MiniLM embedder as shipped), then ``MemoryEngine.tidy_proposals`` runs as
``mcp-memory tidy`` runs it. A proposed merge pair is two memories of one proposed cluster (every pair
of it: clusters are transitive). Correct: the two are of one ``same`` group, or of one ``update``
group (folding keeps the newer as the current version, as ``update_memory`` would have); "same only"
counts only the first. Junk: the memories proposed as junk against the ``junk`` labels.

    python benchmarks/tidy_precision.py --out docs/benchmarks.md

Tidy's threshold is the duplicate threshold (``MCP_MEMORY_DUPLICATE_THRESHOLD``); the dev half is swept
(0.80 to 0.95), and the test half is reported at the default and at the lowest dev threshold whose
merge precision is ≥ 0.95 there and at every threshold above. The same merge rule is then run on the
hand-written pairs of the near-duplicate calibration (``dedup_pairs.jsonl``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from report import write_section

HERE = Path(__file__).resolve().parent
DEFAULT_SET = HERE / "data" / "tidy_set.jsonl"
DEFAULT_PAIRS = HERE / "data" / "dedup_pairs.jsonl"
SWEEP = [round(0.80 + 0.01 * i, 2) for i in range(16)]  # 0.80 … 0.95
MERGE_PRECISION = 0.95


@dataclass(frozen=True)
class Row:
    id: str
    split: str
    group: str
    label: str
    content: str


@dataclass(frozen=True)
class Run:
    """One split's proposals at one threshold: merge pairs (row ids) and the rows proposed as junk."""

    threshold: float
    pairs: frozenset[frozenset[str]]
    junk: frozenset[str]
    clusters: int


def load(path: Path) -> list[Row]:
    rows = [Row(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]
    if len({r.id for r in rows}) != len(rows):
        raise SystemExit(f"{path}: ids are not unique")
    return rows


def runs(rows: Sequence[Row], thresholds: Sequence[float]) -> list[Run]:
    """Store ``rows`` in a fresh engine, then tidy's proposals at each threshold."""
    from mcp_memory_core import Settings
    from mcp_memory_server.runtime.assembly import build_engine

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(db_path=Path(tmp) / "tidy.db", namespace="default", auto_context=False)
        engine = build_engine(settings)
        try:
            by_memory = {}
            for row in rows:
                outcome = engine.store_memory(row.content)
                if outcome.status != "stored":
                    raise SystemExit(f"{row.id}: not stored ({outcome.status})")
                by_memory[outcome.memory.id] = row.id
            found = []
            for threshold in thresholds:
                engine.duplicate_threshold = threshold
                proposals = engine.tidy_proposals().proposals
                merged = [p for p in proposals if p.kind in ("duplicates", "superseded")]
                pairs = frozenset(
                    frozenset((by_memory[a], by_memory[b]))
                    for p in merged
                    for a, b in itertools.combinations(p.ids, 2)
                )
                junk = frozenset(by_memory[i] for p in proposals if p.kind == "junk" for i in p.ids)
                found.append(Run(threshold, pairs, junk, len(merged)))
        finally:
            engine.close()
    return found


def true_pairs(rows: Sequence[Row], labels: frozenset[str]) -> frozenset[frozenset[str]]:
    groups: dict[str, list[str]] = {}
    for row in rows:
        if row.label in labels:
            groups.setdefault(row.group, []).append(row.id)
    return frozenset(frozenset(p) for ids in groups.values() for p in itertools.combinations(ids, 2))


@dataclass(frozen=True)
class Scores:
    proposed: int
    correct: int
    same: int
    wanted: int
    wanted_same: int

    @property
    def precision(self) -> float:
        return self.correct / self.proposed if self.proposed else 1.0

    @property
    def precision_same(self) -> float:
        return self.same / self.proposed if self.proposed else 1.0

    @property
    def recall(self) -> float:
        return self.correct / self.wanted if self.wanted else 1.0

    @property
    def recall_same(self) -> float:
        return self.same / self.wanted_same if self.wanted_same else 1.0


def merge_scores(rows: Sequence[Row], run: Run) -> Scores:
    same = true_pairs(rows, frozenset({"same"}))
    update = {p for p in true_pairs(rows, frozenset({"update"}))}
    right = same | update
    return Scores(len(run.pairs), len(run.pairs & right), len(run.pairs & same), len(right), len(same))


def junk_scores(rows: Sequence[Row], run: Run) -> tuple[float, float, list[str], list[str]]:
    """Precision, recall, the rows wrongly called junk, the junk rows missed."""
    junk = {r.id for r in rows if r.label == "junk"}
    text = {r.id: r.content for r in rows}
    wrong = sorted(text[i] for i in run.junk - junk)
    missed = sorted(text[i] for i in junk - run.junk)
    precision = len(run.junk & junk) / len(run.junk) if run.junk else 1.0
    return precision, len(run.junk & junk) / len(junk), wrong, missed


def choose(rows: Sequence[Row], dev: Sequence[Run]) -> float:
    """The lowest threshold whose merge precision is ≥ 0.95 there and at every threshold above."""
    chosen = dev[-1].threshold
    for run in reversed(dev):
        if merge_scores(rows, run).precision < MERGE_PRECISION:
            break
        chosen = run.threshold
    return chosen


def wrong_merges(rows: Sequence[Row], run: Run, limit: int = 10) -> list[str]:
    by_id = {r.id: r for r in rows}
    same, update = true_pairs(rows, frozenset({"same"})), true_pairs(rows, frozenset({"update"}))
    out = []
    for pair in sorted(run.pairs - same - update, key=sorted)[:limit]:
        a, b = (by_id[i] for i in sorted(pair))
        out.append(f"- {a.content!r} ~ {b.content!r} ({a.label} / {b.label})")
    return out


def sizes(part: Sequence[Row]) -> str:
    labels = ("same", "update", "different", "short_fact", "junk")
    return ", ".join(f"{sum(r.label == label for r in part)} {label}" for label in labels)


def sweep_table(rows: Sequence[Row], dev: Sequence[Run], marks: dict[float, str]) -> list[str]:
    lines = [
        "| threshold | merge pairs | precision (same or update) | precision (same only) | recall | recall (same only) |",
        "|---|---|---|---|---|---|",
    ]
    for run in dev:
        s = merge_scores(rows, run)
        mark = f" {marks[run.threshold]}" if run.threshold in marks else ""
        lines.append(
            f"| {run.threshold:.2f}{mark} | {s.proposed} | {s.precision:.3f} | {s.precision_same:.3f} | "
            f"{s.recall:.3f} | {s.recall_same:.3f} |"
        )
    return lines


def results_table(split_rows: dict[str, list[Row]], reported: Sequence[tuple[str, Run]]) -> list[str]:
    lines = [
        "| split | threshold | clusters | merge pairs | precision (same or update) | precision (same only) | recall | junk precision | junk recall |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for split, run in reported:
        s = merge_scores(split_rows[split], run)
        jp, jr, _, _ = junk_scores(split_rows[split], run)
        lines.append(
            f"| {split} | {run.threshold:.2f} | {run.clusters} | {s.proposed} | {s.precision:.3f} | "
            f"{s.precision_same:.3f} | {s.recall:.3f} | {jp:.3f} | {jr:.3f} |"
        )
    return lines


def pair_check(path: Path, threshold: float) -> list[str]:
    """The merge rule (cosine of whole texts ≥ ``threshold``, no minimal pair) on the hand-written
    pairs of the near-duplicate calibration: another labelled set, written before this one."""
    from mcp_memory_core import Settings
    from mcp_memory_core.tidying import minimal_pair
    from mcp_memory_server.runtime.assembly import build_engine

    pairs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    pairs = [p for p in pairs if p["id"].startswith("h")]
    with tempfile.TemporaryDirectory() as tmp:
        engine = build_engine(Settings(db_path=Path(tmp) / "pairs.db", auto_context=False))
        try:
            vectors = engine.embedder.embed_documents([t for p in pairs for t in (p["a"], p["b"])])
        finally:
            engine.close()
    lines = [
        "| split | pairs (same / update / different) | merged | precision (same or update) | precision (same only) | recall (same or update) |",
        "|---|---|---|---|---|---|",
    ]
    for split in ("dev", "test"):
        chosen = [(i, p) for i, p in enumerate(pairs) if p["split"] == split]
        merged = [
            p
            for i, p in chosen
            if float(vectors[2 * i] @ vectors[2 * i + 1]) >= threshold and not minimal_pair(p["a"], p["b"])
        ]
        right = sum(p["label"] != "different" for p in merged)
        same = sum(p["label"] == "same" for p in merged)
        wanted = sum(p["label"] != "different" for _, p in chosen)
        counted = " / ".join(
            str(sum(p["label"] == label for _, p in chosen)) for label in ("same", "update", "different")
        )
        precision = right / len(merged) if merged else 1.0
        lines.append(
            f"| {split} | {counted} | {len(merged)} | {precision:.3f} | "
            f"{same / len(merged) if merged else 1.0:.3f} | {right / wanted:.3f} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument(
        "--pairs",
        type=Path,
        default=DEFAULT_PAIRS,
        help="the calibration's pairs (hand-written ones are used)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the section into this markdown file")
    args = parser.parse_args(argv)

    from mcp_memory_core import Settings

    default = float(Settings.model_fields["duplicate_threshold"].default)
    rows = load(args.set)
    split_rows = {split: [r for r in rows if r.split == split] for split in ("dev", "test")}
    dev = runs(split_rows["dev"], sorted({*SWEEP, default}))
    lowest = choose(split_rows["dev"], dev)
    reported_thresholds = sorted({lowest, default})
    test = {run.threshold: run for run in runs(split_rows["test"], reported_thresholds)}
    at_default = merge_scores(split_rows["dev"], next(r for r in dev if r.threshold == default))
    reported = [("dev", r) for r in dev if r.threshold in reported_thresholds]
    reported += [("test", test[t]) for t in reported_thresholds]
    _, _, wrong_junk, missed_junk = junk_scores(split_rows["test"], test[default])
    command = " ".join(argv if argv is not None else sys.argv[1:])
    report = [
        "## Tidy: every table",
        "",
        f"Command: `python benchmarks/tidy_precision.py {command}`",
        "",
        f"The set: `benchmarks/data/tidy_set.jsonl` — dev {len(split_rows['dev'])} memories "
        f"({sizes(split_rows['dev'])}), test {len(split_rows['test'])} ({sizes(split_rows['test'])}). "
        "Each half stored into its own fresh store (sqlite-vec, MiniLM fp32 as shipped), then "
        "`tidy_proposals` as `mcp-memory tidy` runs it (near-duplicates: cosine ≥ the threshold, and no "
        "minimal pair).",
        "",
        f"Tidy's threshold is `MCP_MEMORY_DUPLICATE_THRESHOLD` ({default:.2f}); on dev its merge precision "
        f"(same or update) is {at_default.precision:.3f} (bar: {MERGE_PRECISION:.2f}). The lowest dev "
        f"threshold at or above which precision stays ≥ {MERGE_PRECISION:.2f} is {lowest:.2f} "
        "(reported on test too).",
        "",
        "### Dev sweep",
        "",
        *sweep_table(split_rows["dev"], dev, {default: "**(default)**", lowest: "(lowest at the bar)"}),
        "",
        "### Results",
        "",
        *results_table(split_rows, reported),
        "",
        f"Test merge pairs that are neither the same fact nor an update, at {default:.2f}:",
        "",
        *(wrong_merges(split_rows["test"], test[default]) or ["- none"]),
        "",
        f"Test lines called junk that are not: {', '.join(map(repr, wrong_junk)) or 'none'}. "
        f"Junk lines kept: {', '.join(map(repr, missed_junk)) or 'none'}.",
        "",
        f"### The merge rule on the calibration's hand-written pairs, at {default:.2f}",
        "",
        *pair_check(args.pairs, default),
    ]
    print("\n".join(report))
    if args.out:
        write_section(args.out, "\n".join(report), "tidy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
