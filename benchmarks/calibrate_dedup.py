"""Calibrate store_memory's near-duplicate thresholds on labelled pairs of memories.

Each pair (``benchmarks/data/dedup_pairs.jsonl``, described in ``benchmarks/data/README.md``) is a
memory ``a`` already stored and a memory ``b`` being stored, labelled ``same`` (b restates a),
``update`` (b gives a new value for what a says) or ``different``. A memory server should list a as
similar to b for ``same`` and ``update`` (and replace it under conflict policy ``supersede``), and not
for ``different``. ``same`` is what the result may call a probable duplicate.

Similarities come from the product's own path: a fresh engine built by the server's assembly (the
sqlite-vec store, the MiniLM embedder as shipped), ``a`` stored in a namespace of its own, then ``b``
stored with every threshold at -1, so ``store_memory`` lists ``a`` in ``similar`` with the cosine the
engine compares to its thresholds (b's whole-text vector against a's best passage).

    python benchmarks/calibrate_dedup.py --locomo ../shared/data/locomo10.json --out docs/benchmarks.md

Thresholds are chosen on the dev half only; the test half is reported at the chosen values.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from report import write_section

HERE = Path(__file__).resolve().parent
DEFAULT_PAIRS = HERE / "data" / "dedup_pairs.jsonl"
DEFAULT_LOCOMO = HERE.parents[1] / "shared" / "data" / "locomo10.json"
LABELS = ("same", "update", "different")
SIMILAR = frozenset({"same", "update"})  # what store_memory should list (and supersede may replace)
SAME = frozenset({"same"})
SWEEP = [round(0.50 + 0.01 * i, 2) for i in range(50)]  # 0.50 … 0.99
DUPLICATE_PRECISION = 0.95  # a "duplicate" (replaced under supersede) must restate or update it this often


@dataclass(frozen=True)
class Pair:
    id: str
    split: str
    label: str
    kind: str
    source: str
    a: str
    b: str


@dataclass(frozen=True)
class Scored:
    pair: Pair
    similarity: float


# -- data --------------------------------------------------------------------------------------
def locomo_facts(path: Path) -> dict[str, str]:
    """Every LoCoMo observation by reference: ``conv-26/session_3/Caroline/0`` → its text."""
    facts: dict[str, str] = {}
    for conversation in json.loads(path.read_text()):
        for key, by_speaker in conversation["observation"].items():
            session = key.removesuffix("_observation")
            for speaker, entries in by_speaker.items():
                for index, (text, _dia_id) in enumerate(entries):
                    facts[f"{conversation['sample_id']}/{session}/{speaker}/{index}"] = text
    return facts


def _resolve(row: dict[str, object], side: str, facts: dict[str, str] | None) -> str | None:
    text = row.get(side)
    if isinstance(text, str):
        return text
    ref = str(row[f"{side}_ref"])
    if facts is None:
        return None
    found = facts.get(ref)
    if found is None or hashlib.sha256(found.encode()).hexdigest()[:12] != row[f"{side}_sha256"]:
        raise SystemExit(
            f"{row['id']}: {ref} is not the text the label was given to (another locomo10.json?)"
        )
    return found


def load_pairs(path: Path, locomo: Path | None) -> tuple[list[Pair], int]:
    """The labelled pairs, LoCoMo ones resolved from ``locomo`` (skipped, and counted, without it)."""
    facts = locomo_facts(locomo) if locomo is not None else None
    pairs, skipped = [], 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        a, b = _resolve(row, "a", facts), _resolve(row, "b", facts)
        if a is None or b is None:
            skipped += 1
            continue
        if row["label"] not in LABELS or row["split"] not in ("dev", "test"):
            raise SystemExit(f"{row['id']}: bad label or split")
        pairs.append(Pair(row["id"], row["split"], row["label"], row["kind"], row["source"], a, b))
    return pairs, skipped


# -- similarities through the engine -----------------------------------------------------------------
def engine_similarities(pairs: Sequence[Pair]) -> list[Scored]:
    """Store a, then b, in a namespace per pair of one fresh engine; read a's similarity from b's result."""
    from mcp_memory_core import Settings
    from mcp_memory_server.runtime.assembly import build_engine

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(db_path=Path(tmp) / "dedup.db", namespace="default", auto_context=False)
        engine = build_engine(settings)
        engine.dedup_threshold = -1.0  # list every neighbour: the sweep applies the thresholds
        engine.duplicate_threshold = -1.0
        engine.conflict_policy = "report"
        scored = []
        try:
            for pair in pairs:
                namespace = f"pair-{pair.id}"
                stored = engine.store_memory(pair.a, namespace=namespace).memory
                outcome = engine.store_memory(pair.b, namespace=namespace)
                if outcome.status == "duplicate":  # the same normalized text: never in the set, but say so
                    raise SystemExit(f"{pair.id}: a and b are the same text")
                similarity = next(s.similarity for s in outcome.similar if s.memory.id == stored.id)
                scored.append(Scored(pair, similarity))
        finally:
            engine.close()
    return scored


# -- metrics -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Counts:
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def counts(scored: Iterable[Scored], threshold: float, positive: frozenset[str]) -> Counts:
    tp = fp = fn = 0
    for s in scored:
        flagged, wanted = s.similarity >= threshold, s.pair.label in positive
        tp += flagged and wanted
        fp += flagged and not wanted
        fn += wanted and not flagged
    return Counts(tp, fp, fn)


def choose_similar(dev: Sequence[Scored]) -> float:
    """The dev threshold with the best F1 of "listed as similar" (same + update); ties: the higher."""
    return max(SWEEP, key=lambda t: (round(counts(dev, t, SIMILAR).f1, 6), t))


def choose_duplicate(dev: Sequence[Scored], floor: float) -> float:
    """The lowest threshold (≥ ``floor``) at which a memory called ``duplicate`` (and replaced under
    conflict policy supersede) restates or updates the new one ≥ 95% of the time on dev, counting only
    thresholds where precision stays so at every threshold above (a precision that dips again is noise).
    Not "same only": cosine cannot tell a restatement from a new value (see the sweep's last columns)."""
    candidates = [t for t in SWEEP if t >= floor]
    chosen = candidates[-1]
    for t in reversed(candidates):
        c = counts(dev, t, SIMILAR)
        if c.tp + c.fp and c.precision < DUPLICATE_PRECISION:
            break
        chosen = t
    return chosen


# -- report --------------------------------------------------------------------------------------------
def _fmt(c: Counts) -> str:
    return f"{c.precision:.3f} | {c.recall:.3f} | {c.f1:.3f} | {c.tp} / {c.fp} / {c.fn}"


def sweep_table(dev: Sequence[Scored], marks: dict[float, str]) -> list[str]:
    lines = [
        "| threshold | same + update: precision | recall | F1 | TP / FP / FN | same only: precision | recall |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in SWEEP:
        if t < 0.60 or (t > 0.95 and t not in marks and t != 0.99):
            continue
        similar, same = counts(dev, t, SIMILAR), counts(dev, t, SAME)
        mark = f" **{marks[t]}**" if t in marks else ""
        lines.append(f"| {t:.2f}{mark} | {_fmt(similar)} | {same.precision:.3f} | {same.recall:.3f} |")
    return lines


def distribution_table(scored: Sequence[Scored]) -> list[str]:
    lines = [
        "| label | kind | dev n | test n | min | p25 | median | p75 | max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple[str, str], list[Scored]] = {}
    for s in scored:
        groups.setdefault((s.pair.label, s.pair.kind), []).append(s)
    for label in LABELS:
        for (lab, kind), members in sorted(groups.items()):
            if lab != label:
                continue
            values = sorted(s.similarity for s in members)
            q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
            n_dev = sum(s.pair.split == "dev" for s in members)
            lines.append(
                f"| {label} | {kind} | {n_dev} | {len(members) - n_dev} | {values[0]:.3f} | {q[0]:.3f} | "
                f"{q[1]:.3f} | {q[2]:.3f} | {values[-1]:.3f} |"
            )
    return lines


def result_table(splits: dict[str, Sequence[Scored]], similar_t: float, duplicate_t: float) -> list[str]:
    lines = [
        "| split | pairs (same / update / different) | rule | precision | recall | F1 | TP / FP / FN |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, scored in splits.items():
        sizes = " / ".join(str(sum(s.pair.label == label for s in scored)) for label in LABELS)
        rows = [
            (f"listed in similar, ≥ {similar_t:.2f}: same + update", similar_t, SIMILAR),
            (f"relation duplicate (supersede), ≥ {duplicate_t:.2f}: same + update", duplicate_t, SIMILAR),
            (f"relation duplicate, ≥ {duplicate_t:.2f}: same only", duplicate_t, SAME),
            ("old default, listed ≥ 0.95 (and superseded): same + update", 0.95, SIMILAR),
        ]
        for rule, t, positive in rows:
            lines.append(f"| {name} | {sizes} | {rule} | {_fmt(counts(scored, t, positive))} |")
    return lines


def breakdown_table(splits: dict[str, Sequence[Scored]], similar_t: float, duplicate_t: float) -> list[str]:
    """Per split, source and label: how many pairs are listed (≥ similar) and called duplicates."""
    lines = [
        f"| split | source | label | pairs | listed (≥ {similar_t:.2f}) | duplicate (≥ {duplicate_t:.2f}) |",
        "|---|---|---|---|---|---|",
    ]
    for name, scored in splits.items():
        for source, prefix in (("handwritten", "h"), ("LoCoMo", "l")):
            for label in LABELS:
                group = [s for s in scored if s.pair.label == label and s.pair.id.startswith(prefix)]
                if not group:
                    continue
                listed = sum(s.similarity >= similar_t for s in group)
                duplicate = sum(s.similarity >= duplicate_t for s in group)
                lines.append(
                    f"| {name} | {source} | {label} | {len(group)} | {listed} ({listed / len(group):.0%}) | "
                    f"{duplicate} ({duplicate / len(group):.0%}) |"
                )
    return lines


def misses(scored: Sequence[Scored], similar_t: float, limit: int = 8) -> list[str]:
    """The dev pairs on the wrong side of the similar threshold, farthest first (for reading)."""
    wrong = [s for s in scored if (s.similarity >= similar_t) != (s.pair.label in SIMILAR)]
    wrong.sort(key=lambda s: -abs(s.similarity - similar_t))
    out = []
    for s in wrong[:limit]:
        a = s.pair.a if s.pair.id.startswith("h") else f"(LoCoMo {s.pair.id})"
        b = s.pair.b if s.pair.id.startswith("h") else ""
        out.append(f"- {s.pair.id} {s.pair.label}/{s.pair.kind} {s.similarity:.3f}: {a!r} → {b!r}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument(
        "--locomo", type=Path, default=DEFAULT_LOCOMO, help="locomo10.json (its pairs are skipped without it)"
    )
    parser.add_argument("--out", type=Path, default=None, help="write the tables into this markdown file")
    args = parser.parse_args(argv)

    locomo = args.locomo if args.locomo.exists() else None
    if locomo is None:
        print(f"note: {args.locomo} not found: LoCoMo pairs skipped", file=sys.stderr)
    pairs, skipped = load_pairs(args.pairs, locomo)
    scored = engine_similarities(pairs)
    dev = [s for s in scored if s.pair.split == "dev"]
    test = [s for s in scored if s.pair.split == "test"]
    similar_t = choose_similar(dev)
    duplicate_t = choose_duplicate(dev, similar_t)

    from mcp_memory_core import Settings

    defaults = Settings.model_fields
    current = (defaults["dedup_threshold"].default, defaults["duplicate_threshold"].default)
    report = [
        "## Near-duplicate thresholds: every table",
        "",
        f"Command: `python benchmarks/calibrate_dedup.py {' '.join(argv if argv is not None else sys.argv[1:])}`"
        f" — {len(pairs)} pairs ({len(dev)} dev, {len(test)} test)"
        + (f", {skipped} LoCoMo pairs skipped (no locomo10.json)" if skipped else "")
        + ".",
        "",
        f"Chosen on dev: listed in `similar` ≥ **{similar_t:.2f}** (best F1 of same + update), relation "
        f"`duplicate` ≥ **{duplicate_t:.2f}** (lowest threshold whose same + update precision is ≥ "
        f"{DUPLICATE_PRECISION:.2f} there and at every threshold above). "
        f"Current defaults: `dedup_threshold` {current[0]}, `duplicate_threshold` {current[1]}.",
        "",
        "### Sweep on the dev half",
        "",
        *sweep_table(dev, {similar_t: "similar", duplicate_t: "duplicate"}),
        "",
        "### At the chosen thresholds",
        "",
        *result_table({"dev": dev, "test": test}, similar_t, duplicate_t),
        "",
        *breakdown_table({"dev": dev, "test": test}, similar_t, duplicate_t),
        "",
        "### Cosine by kind (b's whole text against a's best passage, as the engine compares them)",
        "",
        *distribution_table(scored),
        "",
        "Dev pairs on the wrong side of the similar threshold, farthest first:",
        "",
        *misses(dev, similar_t),
        "",
    ]
    print("\n".join(report))
    if args.out:
        write_section(args.out, "\n".join(report), "dedup")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
