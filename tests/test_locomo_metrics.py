"""The LoCoMo benchmark's metrics are right (a benchmark with a wrong metric is worse than none)."""

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import locomo


def test_perfect_ranking():
    m = locomo.question_metrics(["D1:1", "D1:2", "D2:1"], frozenset({"D1:1"}))
    assert m == {"hit@5": 1.0, "hit@10": 1.0, "recall@10": 1.0, "ndcg@10": 1.0, "mrr": 1.0}


def test_evidence_at_rank_six():
    ranked = [f"D1:{i}" for i in range(1, 11)]
    m = locomo.question_metrics(ranked, frozenset({"D1:6"}))
    assert m["hit@5"] == 0.0 and m["hit@10"] == 1.0
    assert m["mrr"] == pytest.approx(1 / 6)
    assert m["ndcg@10"] == pytest.approx(1 / math.log2(7))


def test_partial_recall_and_duplicates_earn_once():
    ranked = ["D1:1", "D1:1", "D3:4", "D9:9"]
    m = locomo.question_metrics(ranked, frozenset({"D1:1", "D2:2"}))
    assert m["recall@10"] == 0.5
    ideal = 1 + 1 / math.log2(3)
    assert m["ndcg@10"] == pytest.approx(1 / ideal)


def test_miss():
    m = locomo.question_metrics(["D5:1"] * 3, frozenset({"D1:1"}))
    assert m == {"hit@5": 0.0, "hit@10": 0.0, "recall@10": 0.0, "ndcg@10": 0.0, "mrr": 0.0}


def test_session_hit_counts_distinct_sessions():
    ranked = ["D1:1", "D1:2", "D2:1", "D2:5", "D3:1", "D4:1", "D5:1", "D6:1"]
    assert locomo.session_hit(ranked, frozenset({"D5:9"})) == 1.0  # 5th distinct session
    assert locomo.session_hit(ranked, frozenset({"D6:1"})) == 0.0  # 6th distinct session


def test_dates_parse():
    when = locomo.parse_session_date("1:56 pm on 8 May, 2023")
    assert (when.year, when.month, when.day, when.hour, when.minute) == (2023, 5, 8, 13, 56)


def test_loads_the_real_data_when_present():
    path = Path(__file__).resolve().parents[2] / "shared/data/locomo10.json"
    if not path.exists():
        pytest.skip(f"{path} not present")
    conversations = locomo.load_conversations(path)
    assert len(conversations) == 10
    assert sum(len(c.turns) for c in conversations) == 5882
    assert sum(len(c.questions) for c in conversations) == 1536


def test_evidence_normalization():
    assert locomo.normalize_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D"]) == [
        "D8:6",
        "D9:17",
        "D11:26",
        "D30:5",
    ]


def test_report_section_is_replaced_in_place(tmp_path):
    out = tmp_path / "benchmarks.md"
    out.write_text("# Benchmarks\n\nintro\n\n## Speed\n\nfigures\n")
    locomo.write_section(out, "first run", "locomo")
    locomo.write_section(out, "second run", "locomo")
    text = out.read_text()
    assert text.count("<!-- locomo:start -->") == 1 and "second run" in text and "first run" not in text
    assert text.startswith("# Benchmarks\n\nintro") and "## Speed\n\nfigures" in text
