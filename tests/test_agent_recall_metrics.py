"""The agent-recall benchmark scores what the server returned, not an artefact of its bookkeeping:
duplicates and superseded memories map back to every fact or turn stored under them, and the
metrics count a memory as relevant when any of its keys is."""

import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parent / "e2e"))
import agent_recall as ar
import locomo
import ranking_stages
from e2e_helpers import server_env

from mcp_memory_rankers import HybridSettings

HYBRID_DEFAULTS = {name: field.default for name, field in HybridSettings.model_fields.items()}


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
    assert [unit.name for unit in units] == [
        "paraphrase_facts.jsonl dev",
        "paraphrase_facts_b.jsonl dev",
        "paraphrase_facts_c.jsonl dev",
        "paraphrase_facts_d.jsonl dev",
    ]
    keys = [{item.key for item in unit.items} for unit in units]
    assert not keys[0] & keys[1]  # no memory of one world is stored with the other
    dev_offtopic = locomo.offtopic_halves(ar.OFFTOPIC_FACTS)["dev"]
    assert all(unit.offtopic == dev_offtopic for unit in units)
    assert "What is the capital of Australia?" not in dev_offtopic  # the LoCoMo file is not used here


def test_the_combined_row_counts_every_question_of_every_world() -> None:
    first, second = ar.Result(), ar.Result()
    first.rows["cosine"] = ar.Row()
    first.rows["cosine"].add("all", {"hit@1": 1.0, "empty": 0.0})
    first.offtopic_counts, first.stored = {"shipped": [0, 2]}, 3
    second.rows["cosine"] = ar.Row()
    for hit in (0.0, 0.0, 1.0):
        second.rows["cosine"].add("all", {"hit@1": hit, "empty": 0.0})
    second.offtopic_counts, second.stored = {"shipped": [1]}, 4
    both = ar.combined([first, second])
    assert both.rows["cosine"].count() == 4
    assert both.rows["cosine"].mean("hit@1") == pytest.approx(0.5)
    assert both.offtopic_counts == {"shipped": [0, 2, 1]} and both.stored == 7
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


def stage_settings(stage: ranking_stages.Stage, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The hybrid ranker's and the engine's settings as a server started with the stage's env reads them."""
    from mcp_memory_core import Settings
    from mcp_memory_rankers import HybridSettings

    for name in [n for n in os.environ if n.startswith("MCP_MEMORY_")]:
        monkeypatch.delenv(name)
    env = server_env(Path("agent.db"), **stage.env)
    for name, value in env.items():
        if name.startswith("MCP_MEMORY_"):
            monkeypatch.setenv(name, value)
    return HybridSettings(), Settings()


def test_the_vector_stage_turns_off_every_channel_but_the_vector_and_the_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hybrid, settings = stage_settings(ranking_stages.STAGES["vector"], monkeypatch)
    assert settings.ranker == "hybrid" and settings.relevance_floor is False
    assert hybrid.vector_weight == HYBRID_DEFAULTS["vector_weight"]
    for name in (
        "keyword_weight",
        "neighbour_weight",
        "neighbour_keyword_weight",
        "thread_weight",
        "date_weight",
    ):
        assert getattr(hybrid, name) == 0.0, name


def test_the_keyword_stage_adds_the_keyword_channel_at_its_default_weight_and_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hybrid, settings = stage_settings(ranking_stages.STAGES["keyword"], monkeypatch)
    assert settings.relevance_floor is False
    assert hybrid.keyword_weight == HYBRID_DEFAULTS["keyword_weight"] > 0
    assert hybrid.semantic_gate is True
    for name in ("neighbour_weight", "neighbour_keyword_weight", "thread_weight", "date_weight"):
        assert getattr(hybrid, name) == 0.0, name


def test_the_context_stage_is_the_defaults_without_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    hybrid, settings = stage_settings(ranking_stages.STAGES["context"], monkeypatch)
    assert settings.relevance_floor is False
    assert hybrid.model_dump() == HYBRID_DEFAULTS


def test_the_shipped_stage_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ranking_stages.STAGES["shipped"].env == {}
    hybrid, settings = stage_settings(ranking_stages.STAGES["shipped"], monkeypatch)
    assert settings.relevance_floor is True and hybrid.model_dump() == HYBRID_DEFAULTS


@pytest.mark.parametrize(
    ("given", "chosen"),
    [
        ("shipped", ["shipped"]),
        ("all", ["vector", "keyword", "context", "shipped"]),
        ("shipped, vector", ["vector", "shipped"]),  # always run in the cumulative order
        ("keyword,keyword", ["keyword"]),
    ],
)
def test_stages_are_chosen_by_name_in_their_cumulative_order(given: str, chosen: list[str]) -> None:
    assert [stage.name for stage in ranking_stages.choose(given)] == chosen


def test_an_unknown_stage_is_one_sentence_naming_the_stages(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        ar.main(["--stages", "vector,bm25"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert (
        "unknown stage 'bm25': pass --stages with names among vector, keyword, context, shipped, or all"
        in err
    )


def test_a_stage_whose_turned_off_parts_are_not_zero_did_not_get_its_settings() -> None:
    vector = ranking_stages.STAGES["vector"]
    answer = {"results": [{"id": "m1", "score_parts": {"vector": 0.5, "keyword": 0.0, "thread": 0.0}}]}
    assert vector.mismatch(answer) is None
    answer["results"][0]["score_parts"]["keyword"] = 0.12
    assert vector.mismatch(answer) == (
        "the server ranked with keyword 0.12 where the vector stage turns it off: its settings did not reach it"
    )
    assert vector.mismatch({**answer, "results": [], "floor": {"min_similarity": 0.3}}) == (
        "the server applied the relevance floor the vector stage turns off: its settings did not reach it"
    )
    shipped = ranking_stages.STAGES["shipped"]
    assert shipped.mismatch({"results": [], "floor": {"min_similarity": 0.3}}) is None
    assert shipped.mismatch({"results": []}) == (
        "the server applied no relevance floor where the shipped stage has one: its settings did not reach it"
    )


def test_each_stage_has_its_own_rows_and_the_shipped_rows_keep_their_labels() -> None:
    assert ar.server_label(5) == "server, limit=5"
    assert ar.server_label(None) == "server, default limit (10)"
    assert ar.server_label(5, ranking_stages.STAGES["vector"]) == "server [vector], limit=5"
    assert ar.server_label(None, ranking_stages.STAGES["context"]) == "server [context], default limit (10)"
    assert ar.limit_of("server [keyword], limit=50") == 50


def test_the_tables_grow_a_row_per_stage_and_limit_before_the_baselines() -> None:
    unit = ar.Unit("u", [ar.Item("f1", "A"), ar.Item("f2", "B")], [ar.Ask("q", frozenset({"f1"}))])
    runs = []
    for stage, ranked in (
        (ranking_stages.STAGES["vector"], ["b", "a"]),
        (ranking_stages.STAGES["shipped"], ["a"]),
    ):
        answers = ar.Answers()
        answers.receipts.record(unit.items[0], {"id": "a", "status": "stored"})
        answers.receipts.record(unit.items[1], {"id": "b", "status": "stored"})
        answers.ranked = {ar.server_label(5, stage): [ranked]}
        answers.offtopic_counts = [5] if stage.name == "vector" else [0]
        runs.append(ar.StageRun(stage, answers))
    result = ar.Result()
    result.absorb_runs(unit, runs, {"cosine": [["a", "b"]]})
    assert list(result.rows) == ["server [vector], limit=5", "server, limit=5", "cosine"]
    assert [result.rows[label].mean("hit@1") for label in result.rows] == [0.0, 1.0, 1.0]
    lines = ar.table(result, ["hit@1", "mrr"]).splitlines()
    assert lines[2] == "| server [vector], limit=5 | 1 | 0.000 | 0.500 |"
    assert lines[3] == "| server, limit=5 | 1 | 1.000 | 1.000 |"
    assert result.offtopic_counts == {"vector": [5], "shipped": [0]}
    text = ar.footer(result)
    assert (
        "Off-topic questions [vector] (1, limit=5): mean 5.00 results, 1 answered with at least one." in text
    )
    assert "Off-topic questions (1, limit=5): mean 0.00 results, 0 answered with at least one." in text
