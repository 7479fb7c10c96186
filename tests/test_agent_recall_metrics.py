"""The agent-recall benchmark scores what the server returned, not an artefact of its bookkeeping:
duplicates and superseded memories map back to every fact or turn stored under them, and the
metrics count a memory as relevant when any of its keys is."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import agent_recall as ar
import locomo


def test_a_duplicate_stands_for_both_turns() -> None:
    receipts = ar.Receipts()
    receipts.record(ar.Item("D1:3", "Jon: Thanks!"), {"id": "m1", "status": "stored"})
    receipts.record(ar.Item("D7:9", "Jon: Thanks!"), {"id": "m1", "status": "duplicate"})
    assert receipts.resolve("m1") == {"D1:3", "D7:9"}
    assert receipts.statuses == {"stored": 1, "duplicate": 1}
    assert receipts.content == {"m1": "Jon: Thanks!"}  # the cosine baseline embeds it once


def test_a_superseding_memory_takes_over_the_keys_of_the_one_it_replaced() -> None:
    receipts = ar.Receipts()
    receipts.record(ar.Item("f1", "The API runs on port 8080"), {"id": "old", "status": "stored"})
    receipts.record(
        ar.Item("f2", "The API runs on port 8081"), {"id": "new", "status": "superseded", "superseded": "old"}
    )
    assert receipts.resolve("new") == {"f1", "f2"}
    assert receipts.resolve("old") == {"f1", "f2"}  # an id named for the old version still counts
    assert receipts.content == {"new": "The API runs on port 8081"}  # only the current memory is ranked


def test_hits_and_reciprocal_rank_count_any_relevant_key() -> None:
    ranked = [frozenset({"a"}), frozenset({"b", "c"}), frozenset({"d"})]
    assert ar.first_hit(ranked, frozenset({"c"})) == 1
    assert ar.hit_at(ranked, frozenset({"c"}), 1) == 0.0
    assert ar.hit_at(ranked, frozenset({"c"}), 2) == 1.0
    assert ar.reciprocal_rank(ranked, frozenset({"c"})) == pytest.approx(0.5)
    assert ar.reciprocal_rank(ranked, frozenset({"z"})) == 0.0


def test_session_hit_looks_at_the_sessions_of_the_first_five_turns_only() -> None:
    ranked = [frozenset({f"D{i}:1"}) for i in range(1, 8)]  # sessions D1 … D7, one turn each
    assert ar.session_hit(ranked, frozenset({"D5:30"})) == 1.0  # another turn of a returned session
    assert ar.session_hit(ranked, frozenset({"D6:1"})) == 0.0  # the sixth turn is past the five


def test_an_answer_is_scored_only_to_the_depth_it_was_asked_for() -> None:
    ask = ar.Ask("q", frozenset({"f9"}))
    short = ar.question_scores([frozenset({"f1"})], ask, depth=5)
    assert "hit@10" not in short and short["hit@5"] == 0.0 and short["empty"] == 0.0
    assert ar.question_scores([], ask, depth=10)["empty"] == 1.0


def test_a_split_holds_its_own_facts_and_every_distractor() -> None:
    facts = [
        {"id": "g001a", "content": "A", "split": "dev", "questions": ["qa"]},
        {"id": "g002a", "content": "B", "split": "test", "questions": ["qb"]},
        {"id": "x001", "content": "C", "split": "both", "questions": []},
    ]
    unit = ar.paraphrase_unit(facts, "dev")
    assert [item.key for item in unit.items] == ["g001a", "x001"]
    assert unit.asks == [ar.Ask("qa", frozenset({"g001a"}))]


def test_each_world_is_its_own_store_asked_the_fact_store_off_topic_questions() -> None:
    units = ar.paraphrase_units(ar.WORLDS, "dev")
    assert [unit.name for unit in units] == ["paraphrase_facts.jsonl dev", "paraphrase_facts_b.jsonl dev"]
    keys = [{item.key for item in unit.items} for unit in units]
    assert not keys[0] & keys[1]  # no memory of one world is stored with the other
    dev_offtopic = locomo.offtopic_halves(ar.OFFTOPIC_FACTS)["dev"]
    assert all(unit.offtopic == dev_offtopic for unit in units)
    assert "What is the capital of Australia?" not in dev_offtopic  # the LoCoMo file is not used here


def test_the_combined_row_counts_every_question_of_every_world() -> None:
    first, second = ar.Result(), ar.Result()
    first.rows["cosine"] = ar.Row()
    first.rows["cosine"].add("all", {"hit@1": 1.0, "empty": 0.0})
    first.offtopic_counts, first.stored = [0, 2], 3
    second.rows["cosine"] = ar.Row()
    for hit in (0.0, 0.0, 1.0):
        second.rows["cosine"].add("all", {"hit@1": hit, "empty": 0.0})
    second.offtopic_counts, second.stored = [1], 4
    both = ar.combined([first, second])
    assert both.rows["cosine"].count() == 4
    assert both.rows["cosine"].mean("hit@1") == pytest.approx(0.5)
    assert both.offtopic_counts == [0, 2, 1] and both.stored == 7
    assert first.rows["cosine"].count() == 1  # the per-world results are left as they were


@pytest.mark.parametrize("path", ar.WORLDS, ids=lambda path: path.name)
def test_the_shipped_paraphrase_worlds_follow_their_stated_rule(path: Path) -> None:
    """Odd-numbered groups are dev, even ones test; facts without questions are in both."""
    facts = ar.load_facts(path)
    assert len(facts) >= 200 and sum(len(f["questions"]) for f in facts) >= 160
    assert len({f["id"] for f in facts}) == len(facts)
    assert {f["split"] for f in facts} == {"dev", "test", "both"}
    for fact in facts:
        assert fact["content"].strip(), fact["id"]
        if not fact["questions"]:
            assert fact["split"] == "both", fact["id"]
        else:
            group = int(fact["id"][1:4])
            assert fact["split"] == ("dev" if group % 2 else "test"), fact["id"]


def test_no_fact_id_is_shared_between_worlds() -> None:
    ids = [fact["id"] for path in ar.WORLDS for fact in ar.load_facts(path)]
    assert len(ids) == len(set(ids))


def test_the_fact_store_off_topic_questions_are_two_halves_of_forty_distinct_lines() -> None:
    halves = locomo.offtopic_halves(ar.OFFTOPIC_FACTS)
    assert len(halves["dev"]) == len(halves["test"]) == 40
    lines = halves["dev"] + halves["test"]
    assert len({line.casefold() for line in lines}) == len(lines)
    asked = {q.casefold() for path in ar.WORLDS for fact in ar.load_facts(path) for q in fact["questions"]}
    assert not asked & {line.casefold() for line in lines}


def test_off_topic_files_split_into_a_dev_and_a_test_half(tmp_path: Path) -> None:
    path = tmp_path / "questions.txt"
    path.write_text("# a header line\nOne?\n\nTwo?\nThree?\nFour?\n")
    assert locomo.offtopic_halves(path) == {"dev": ["One?", "Two?"], "test": ["Three?", "Four?"]}


def test_a_missing_facts_file_is_one_sentence_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.jsonl"
    with pytest.raises(SystemExit) as exited:
        ar.main(["--set", "paraphrase", "--facts", str(missing)])
    assert exited.value.code == 2
    assert f"{missing} not found: pass --facts" in capsys.readouterr().err
