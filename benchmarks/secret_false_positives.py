"""How often the secret screen flags text that holds no secret, on text written for other purposes.

Scans every turn of LoCoMo (``--data``, default ../shared/data/locomo10.json), every string of the
paraphrase, tidy and near-duplicate sets in benchmarks/data, and every line of the repository's
markdown docs, with the default detector (no PII), and prints each text it would change, redacted.

    uv run python benchmarks/secret_false_positives.py
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

from mcp_memory_core.secret_scan import find_secrets, redact

ROOT = Path(__file__).resolve().parent.parent
SETS = (
    "paraphrase_facts.jsonl",
    "paraphrase_facts_b.jsonl",
    "paraphrase_facts_c.jsonl",
    "paraphrase_facts_d.jsonl",
    "tidy_set.jsonl",
    "dedup_pairs.jsonl",
)


def locomo_turns(path: Path) -> Iterator[str]:
    for conversation in json.loads(path.read_text(encoding="utf-8")):
        for key, session in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                yield from (turn.get("text", "") for turn in session)


def set_strings() -> Iterator[str]:
    for name in SETS:
        for line in (ROOT / "benchmarks" / "data" / name).read_text(encoding="utf-8").splitlines():
            yield from (v for v in json.loads(line).values() if isinstance(v, str) and len(v) > 15)


def doc_lines() -> Iterator[str]:
    for path in sorted([*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), *ROOT.glob("plugins/*/README.md")]):
        yield from (line for line in path.read_text(encoding="utf-8").splitlines() if len(line) > 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "locomo10.json")
    args = parser.parse_args()
    sources = {
        "LoCoMo turns": list(locomo_turns(args.data)),
        "data sets": list(set_strings()),
        "docs lines": list(doc_lines()),
    }
    for name, texts in sources.items():
        flagged = [(t, f) for t in texts if (f := find_secrets(t))]
        print(f"{name}: {len(texts)} texts, {len(flagged)} flagged")
        for text, findings in flagged:
            print(f"  {redact(text, findings)[:160]!r}")


if __name__ == "__main__":
    main()
