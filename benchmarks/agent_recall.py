"""What an agent gets from search: the real server spawned over stdio, memories stored and questions
asked through the MCP tools at the server's defaults (or stage by stage, ``--stages``), scored beside
plain MiniLM cosine and SQLite FTS5 bm25 over the same memories.

    uv run python benchmarks/agent_recall.py --set paraphrase --split dev
    uv run python benchmarks/agent_recall.py --set locomo --split dev --conversations 0,1
    uv run python benchmarks/agent_recall.py --set locomo --conversations 0 --stages all

Two sets, each store a fresh server with a fresh database (``MCP_MEMORY_DB_PATH`` in a temp dir):

- ``paraphrase`` (four invented worlds, benchmarks/data/paraphrase_facts.jsonl,
  paraphrase_facts_b.jsonl, paraphrase_facts_c.jsonl and paraphrase_facts_d.jsonl, see
  benchmarks/data/README.md): short facts
  as a coding agent stores them, each question paraphrasing one fact. Each world is its own store: a
  split's server holds that world's facts of the split plus its distractors (facts without
  questions). Reported per world and for all worlds together. Off-topic questions written for fact stores
  (benchmarks/data/offtopic_facts.txt, dev: the first 40, test: the last 40) are asked of every
  world's store and count the noise.
- ``locomo`` (../shared/data/locomo10.json): each conversation its own server; every turn stored as an
  agent stores a conversation: content "Speaker: text", occurred_at the session's date, thread one per
  session ("conv-26/session_3"), no image captions. Category 1-4 questions; evidence = dia_ids. Dev:
  conversations 0-4, test: 5-9.

Every question is asked with ``limit=5``, with no limit (the server's default, paraphrase only) and
with ``limit=50``; each call's answer is scored on its own (results first, then the ids ``omitted``
names when the result size cut the list). The server records accesses as it always does, so a later
call can see an earlier one's access counts: that is what an agent gets too.

store_memory may answer "duplicate" (the same content is stored: its id comes back) or "superseded"
(a near-duplicate was replaced: the new id comes back, the old one is named). A memory id stands for
every fact or turn stored under it: a duplicate adds its key to the existing id, a superseding memory
takes over the keys of the one it replaced. A result is a hit when any of its keys is relevant.

``--stages`` (comma-separated, default ``shipped``; ``all`` = every one) runs each store once per
ranking stage, each through a fresh server started with the stage's settings in its environment
(benchmarks/ranking_stages.py). The stages are cumulative, in this order: ``vector`` (the hybrid
ranker with keyword, neighbour, neighbour-keyword, thread and date weights 0, no relevance floor),
``keyword`` (+ the keyword channel at its default weight), ``context`` (+ the conversation lifts at
their defaults), ``shipped`` (the defaults, + the relevance floor). A stage's rows are labelled
``server [vector], limit=5``; the shipped stage's keep their unmarked labels (``server, limit=5``);
``--out`` writes every stage's rows into the same sections. After its last question each server is
asked once more with ``explain``: a server whose score parts or floor show it did not get the stage's
settings stops the run. The baselines are computed once per store, over the last stage's.

Metrics (per question, then averaged): hit@k (a relevant memory in the first k of the answer), MRR
(1 / rank of the first relevant memory in the answer, else 0), session hit@5 (LoCoMo: some evidence
session among the sessions of the first five turns returned), empty (the answer has no results: the
relevance floor held everything back).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import locomo  # noqa: E402
from e2e_helpers import module_command, server_env, stdio_session  # noqa: E402
from ranking_stages import STAGES, Stage, UnknownStage, choose  # noqa: E402
from report import write_section  # noqa: E402

FACTS = HERE / "data" / "paraphrase_facts.jsonl"
WORLDS = (  # each its own store
    FACTS,
    HERE / "data" / "paraphrase_facts_b.jsonl",
    HERE / "data" / "paraphrase_facts_c.jsonl",
    HERE / "data" / "paraphrase_facts_d.jsonl",
)
OFFTOPIC_FACTS = HERE / "data" / "offtopic_facts.txt"  # nothing in any world answers these
DEPTH = 50  # the baselines rank this many; the widest call asks for this many
DB_NAME = "agent.db"
SHIPPED = STAGES["shipped"]


# -- what is stored and asked -------------------------------------------------------------------
@dataclass(frozen=True)
class Item:
    key: str  # a fact id or a LoCoMo dia_id
    content: str
    occurred_at: str | None = None
    thread: str | None = None


@dataclass(frozen=True)
class Ask:
    text: str
    relevant: frozenset[str]  # keys
    bucket: str = ""  # LoCoMo category


@dataclass
class Unit:
    """One fresh server: what it stores and what it is asked."""

    name: str
    items: list[Item]
    asks: list[Ask]
    offtopic: list[str] = field(default_factory=list)


def load_facts(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def paraphrase_unit(
    facts: Sequence[dict[str, Any]], split: str, offtopic: Sequence[str] = (), world: str = "paraphrase"
) -> Unit:
    """The split's facts and the distractors (facts without questions) in one store."""
    chosen = [f for f in facts if f["split"] == split or not f["questions"]]
    items = [Item(f["id"], f["content"]) for f in chosen]
    asks = [Ask(q, frozenset({f["id"]})) for f in chosen if f["split"] == split for q in f["questions"]]
    return Unit(f"{world} {split}", items, asks, list(offtopic))


def paraphrase_units(paths: Sequence[Path], split: str, offtopic: Path = OFFTOPIC_FACTS) -> list[Unit]:
    """One store per world, each asked the split's half of the off-topic questions."""
    questions = locomo.offtopic_halves(offtopic)[split]
    return [paraphrase_unit(load_facts(path), split, questions, path.name) for path in paths]


def locomo_unit(convo: locomo.Conversation) -> Unit:
    items = [
        Item(
            str(m.metadata["dia_id"]),
            m.content,
            m.occurred_at.isoformat() if m.occurred_at else None,
            m.thread,
        )
        for m in convo.said
    ]
    asks = [Ask(q.text, q.evidence, locomo.CATEGORIES[q.category]) for q in convo.questions]
    return Unit(convo.sample_id, items, asks)


# -- ids to keys --------------------------------------------------------------------------------
@dataclass
class Receipts:
    """Which keys each memory id stands for, from store_memory's answers."""

    keys: dict[str, set[str]] = field(default_factory=dict)
    content: dict[str, str] = field(default_factory=dict)
    moved: dict[str, str] = field(default_factory=dict)  # superseded id -> the id that replaced it
    statuses: Counter[str] = field(default_factory=Counter)

    def record(self, item: Item, receipt: dict[str, Any]) -> None:
        memory_id, status = receipt["id"], receipt["status"]
        self.statuses[status] += 1
        keys = self.keys.setdefault(memory_id, set())
        keys.add(item.key)
        self.content.setdefault(memory_id, item.content)
        old = receipt.get("superseded")
        if status == "superseded" and old:
            keys |= self.keys.pop(old, set())
            self.content.pop(old, None)
            self.content[memory_id] = item.content
            self.moved[old] = memory_id

    def resolve(self, memory_id: str) -> frozenset[str]:
        seen = set()
        while memory_id in self.moved and memory_id not in seen:
            seen.add(memory_id)
            memory_id = self.moved[memory_id]
        return frozenset(self.keys.get(memory_id, ()))


# -- metrics ------------------------------------------------------------------------------------
Ranked = Sequence[frozenset[str]]  # the keys of each returned memory, best first


def first_hit(ranked: Ranked, relevant: frozenset[str]) -> int | None:
    return next((i for i, keys in enumerate(ranked) if keys & relevant), None)


def hit_at(ranked: Ranked, relevant: frozenset[str], k: int) -> float:
    rank = first_hit(ranked[:k], relevant)
    return float(rank is not None)


def reciprocal_rank(ranked: Ranked, relevant: frozenset[str]) -> float:
    rank = first_hit(ranked, relevant)
    return 0.0 if rank is None else 1.0 / (rank + 1)


def session_hit(ranked: Ranked, evidence: frozenset[str], k: int = 5) -> float:
    """Some evidence session among the sessions of the first ``k`` turns returned."""
    sessions = {locomo.session_of(key) for keys in ranked[:k] for key in keys}
    return float(any(locomo.session_of(e) in sessions for e in evidence))


def question_scores(ranked: Ranked, ask: Ask, depth: int) -> dict[str, float]:
    """hit@k only for the k the answer could reach (``depth``: the limit asked)."""
    scores = {"hit@1": hit_at(ranked, ask.relevant, 1), "mrr": reciprocal_rank(ranked, ask.relevant)}
    for k in (5, 10):
        if depth >= k:
            scores[f"hit@{k}"] = hit_at(ranked, ask.relevant, k)
    scores["session hit@5"] = session_hit(ranked, ask.relevant)
    scores["empty"] = float(not ranked)
    return scores


@dataclass
class Row:
    """One retriever's per-question scores, overall and per bucket."""

    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def add(self, bucket: str, scores: dict[str, float]) -> None:
        for name, value in scores.items():
            self.values.setdefault(bucket, {}).setdefault(name, []).append(value)

    def mean(self, name: str, bucket: str = "all") -> float | None:
        found = self.values.get(bucket, {}).get(name)
        return statistics.fmean(found) if found else None

    def count(self, bucket: str = "all") -> int:
        return len(self.values.get(bucket, {}).get("hit@1", []))

    def extend(self, other: Row) -> None:
        for bucket, scores in other.values.items():
            for name, values in scores.items():
                self.values.setdefault(bucket, {}).setdefault(name, []).extend(values)


# -- through the server -------------------------------------------------------------------------
@dataclass
class Answers:
    """What the server answered: per row label, one ranked list per question."""

    ranked: dict[str, list[list[str]]] = field(default_factory=dict)
    offtopic_counts: list[int] = field(default_factory=list)
    receipts: Receipts = field(default_factory=Receipts)
    namespace: str = ""
    store_seconds: float = 0.0
    search_seconds: float = 0.0
    searches: int = 0
    cut: int = 0  # answers the result size cut (some ids only named in omitted)
    mismatch: str | None = None  # why the server did not rank with the stage's settings


@dataclass(frozen=True)
class StageRun:
    """One stage's fresh server over one unit."""

    stage: Stage
    answers: Answers


async def call(session: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, {k: v for k, v in arguments.items() if v is not None})
    text = " ".join(getattr(block, "text", "") for block in result.content)
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {text}")
    return dict(json.loads(text))


async def search_ids(session: Any, query: str, limit: int | None, answers: Answers) -> list[str]:
    started = time.perf_counter()
    data = await call(session, "search_memories", query=query, limit=limit)
    answers.search_seconds += time.perf_counter() - started
    answers.searches += 1
    omitted = list(data.get("omitted", []))
    answers.cut += bool(omitted or data.get("hint"))
    return [r["id"] for r in data["results"]] + omitted


async def through_server(
    unit: Unit, limits: Sequence[int | None], tmp: Path, stage: Stage = SHIPPED
) -> Answers:
    answers = Answers()
    env = server_env(tmp / DB_NAME, **stage.env)
    async with stdio_session(module_command(), env, tmp / "server.log") as session:
        started = time.perf_counter()
        for item in unit.items:
            receipt = await call(
                session,
                "store_memory",
                content=item.content,
                occurred_at=item.occurred_at,
                thread=item.thread,
            )
            answers.receipts.record(item, receipt)
            answers.namespace = receipt["namespace"]
        answers.store_seconds = time.perf_counter() - started
        for ask in unit.asks:
            for limit in limits:  # one question's calls follow each other, as an agent's would
                ranked = await search_ids(session, ask.text, limit, answers)
                answers.ranked.setdefault(server_label(limit, stage), []).append(ranked)
        for text in unit.offtopic:
            answers.offtopic_counts.append(len(await search_ids(session, text, 5, answers)))
        probes = [ask.text for ask in unit.asks[:1]] + unit.offtopic[:1]
        if probes:  # last, so that no scored answer sees its access
            probe = await call(session, "search_memories", query=probes[0], limit=DEPTH, explain=True)
            answers.mismatch = stage.mismatch(probe)
    return answers


def tag(stage: Stage) -> str:
    """How a stage's rows and log lines are marked; the shipped stage's are unmarked."""
    return "" if stage.name == SHIPPED.name else f" [{stage.name}]"


def server_label(limit: int | None, stage: Stage = SHIPPED) -> str:
    return f"server{tag(stage)}, " + (f"limit={limit}" if limit is not None else "default limit (10)")


# -- baselines over the same memories -----------------------------------------------------------
def baselines(unit: Unit, answers: Answers, tmp: Path) -> dict[str, list[list[str]]]:
    """Plain cosine (the server's embedder, each memory's whole content) and FTS5 bm25 (the server's
    own index, read from its database once it has exited), top 50 each."""
    from mcp_memory_core import Settings, plugins
    from mcp_memory_server.runtime.assembly import build_engine

    settings = Settings().model_copy(
        update={"db_path": tmp / DB_NAME, "namespace": answers.namespace, "ttl_episodic": "never"}
    )
    engine = build_engine(settings, plugins.plugin_manager_from_settings())
    engine.track_access = False
    engine.open()
    try:
        ids = list(answers.receipts.content)
        matrix = engine.embedder.embed_documents([answers.receipts.content[i] for i in ids])
        cosine, fts = [], []
        for ask in unit.asks:
            sims = matrix @ engine.embedder.embed_query(ask.text)
            cosine.append([ids[i] for i in np.argsort(-sims, kind="stable")[:DEPTH]])
            fts.append([m.id for m in locomo.keyword_only_retriever(engine, ask.text, DEPTH)])
    finally:
        engine.close()
    return {"cosine (same MiniLM vectors)": cosine, "fts5 bm25": fts}


# -- running and reporting ----------------------------------------------------------------------
@dataclass
class Result:
    rows: dict[str, Row] = field(default_factory=dict)
    offtopic_counts: dict[str, list[int]] = field(default_factory=dict)  # per stage name
    stages: list[Stage] = field(default_factory=list)
    stored: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    store_seconds: float = 0.0
    search_seconds: float = 0.0
    searches: int = 0
    cut: int = 0
    unknown: int = 0  # returned ids no store_memory answer named (each counts as a miss)

    def absorb_runs(
        self, unit: Unit, runs: Sequence[StageRun], baselines: dict[str, list[list[str]]]
    ) -> None:
        """Each stage's rows in turn, then the baselines (ranked over the last run's store)."""
        for run in runs:
            self.absorb(unit, run.answers, run.answers.ranked)
        self.absorb(unit, runs[-1].answers, baselines)
        for run in runs:
            self.tally(unit, run)

    def absorb(self, unit: Unit, answers: Answers, ranked: dict[str, list[list[str]]]) -> None:
        for label, lists in ranked.items():
            depth = DEPTH if not label.startswith("server") else limit_of(label)
            row = self.rows.setdefault(label, Row())
            for ask, ids in zip(unit.asks, lists, strict=True):
                resolved = [answers.receipts.resolve(i) for i in ids]
                self.unknown += sum(not keys for keys in resolved)
                scores = question_scores(resolved, ask, depth)
                row.add("all", scores)
                if ask.bucket:
                    row.add(ask.bucket, scores)

    def tally(self, unit: Unit, run: StageRun) -> None:
        """What one server stored and answered, beside the scores."""
        answers = run.answers
        if run.stage not in self.stages:
            self.stages.append(run.stage)
        self.offtopic_counts.setdefault(run.stage.name, []).extend(answers.offtopic_counts)
        self.stored += len(unit.items)
        self.statuses += answers.receipts.statuses
        self.store_seconds += answers.store_seconds
        self.search_seconds += answers.search_seconds
        self.searches += answers.searches
        self.cut += answers.cut


def combined(results: Sequence[Result]) -> Result:
    """Every question, off-topic count and stored memory of several results, as one."""
    total = Result()
    for result in results:
        for label, row in result.rows.items():
            total.rows.setdefault(label, Row()).extend(row)
        for name, counts in result.offtopic_counts.items():
            total.offtopic_counts.setdefault(name, []).extend(counts)
        total.stages += [stage for stage in result.stages if stage not in total.stages]
        total.stored += result.stored
        total.statuses += result.statuses
        total.store_seconds += result.store_seconds
        total.search_seconds += result.search_seconds
        total.searches += result.searches
        total.cut += result.cut
        total.unknown += result.unknown
    return total


def limit_of(label: str) -> int:
    return int(label.split("=")[1]) if "=" in label else 10


def run_units(
    units: Sequence[Unit],
    limits: Sequence[int | None],
    log: Callable[[str], None],
    misses: bool = False,
    stages: Sequence[Stage] = (SHIPPED,),
) -> Result:
    """Each unit through a fresh server per stage; the baselines over the last stage's store."""
    result = Result()
    *earlier, last = stages
    for unit in units:
        runs = []
        for stage in earlier:
            with tempfile.TemporaryDirectory() as name:
                runs.append(run_stage(unit, stage, limits, Path(name), log, misses))
        with tempfile.TemporaryDirectory() as name:
            runs.append(run_stage(unit, last, limits, Path(name), log, misses))
            started = time.perf_counter()
            ranked = baselines(unit, runs[-1].answers, Path(name))
            log(f"{unit.name}: baselines in {time.perf_counter() - started:.1f}s")
        result.absorb_runs(unit, runs, ranked)
    return result


def run_stage(
    unit: Unit,
    stage: Stage,
    limits: Sequence[int | None],
    tmp: Path,
    log: Callable[[str], None],
    misses: bool,
) -> StageRun:
    """One fresh server over ``unit`` with the stage's settings; one that did not rank with them stops
    the run."""
    run = StageRun(stage, asyncio.run(through_server(unit, limits, tmp, stage)))
    answers, name = run.answers, f"{unit.name}{tag(stage)}"
    if answers.mismatch:
        raise SystemExit(f"{name}: {answers.mismatch}.")
    log(
        f"{name}: stored {len(unit.items)} in {answers.store_seconds:.1f}s "
        f"({dict(answers.receipts.statuses)}), {answers.searches} searches in "
        f"{answers.search_seconds:.1f}s"
    )
    if misses:
        log_misses(unit, run, log)
    return run


def log_misses(unit: Unit, run: StageRun, log: Callable[[str], None]) -> None:
    """Each question whose answer at limit=5 holds nothing relevant: what was expected, what came first."""
    said = {item.key: item.content for item in unit.items}
    answers = run.answers
    for ask, ids in zip(unit.asks, answers.ranked[server_label(5, run.stage)], strict=True):
        ranked = [answers.receipts.resolve(i) for i in ids]
        if hit_at(ranked, ask.relevant, 5):
            continue
        first = answers.receipts.content.get(ids[0], "?") if ids else "(no results)"
        expected = " / ".join(said[key] for key in sorted(ask.relevant))
        log(f"MISS{tag(run.stage)} {ask.text!r}\n  expected: {expected[:200]}\n  first:    {first[:200]}")


def cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def table(result: Result, columns: Sequence[str]) -> str:
    header = "| retriever | questions | " + " | ".join(columns) + " |"
    lines = [header, "|" + "---|" * (len(columns) + 2)]
    for label, row in result.rows.items():
        lines.append(f"| {label} | {row.count()} | " + " | ".join(cell(row.mean(c)) for c in columns) + " |")
    return "\n".join(lines)


def category_table(result: Result) -> str:
    names = list(locomo.CATEGORIES.values())
    lines = [
        "| retriever | " + " | ".join(f"{n} hit@5" for n in names) + " |",
        "|" + "---|" * (len(names) + 1),
    ]
    for label, row in result.rows.items():
        lines.append(f"| {label} | " + " | ".join(cell(row.mean("hit@5", n)) for n in names) + " |")
    return "\n".join(lines)


def footer(result: Result) -> str:
    per_store = 1000 * result.store_seconds / max(result.stored, 1)
    per_search = 1000 * result.search_seconds / max(result.searches, 1)
    several = len(result.stages) > 1
    text = (
        f"One fresh server per store and stage ({', '.join(s.name for s in result.stages)}). "
        if several
        else ""
    ) + (
        f"Stored {result.stored} memories through store_memory in {result.store_seconds:.0f}s "
        f"({per_store:.0f} ms each; answers {dict(result.statuses)}); {result.searches} search_memories "
        f"calls in {result.search_seconds:.0f}s ({per_search:.0f} ms each); {result.cut} answers cut by "
        f"the result size; {result.unknown} returned ids that no store_memory answer named."
    )
    for name, counts in result.offtopic_counts.items():
        if counts:
            text += (
                f" Off-topic questions{tag(STAGES[name])} ({len(counts)}, limit=5): mean "
                f"{statistics.fmean(counts):.2f} results, {sum(c > 0 for c in counts)} answered with at least one."
            )
    return text


READING = (
    "A fresh server per store (`python -m mcp_memory_server` over stdio, server defaults, an empty "
    "database), memories stored with `store_memory`, each question asked with `search_memories` at each "
    "limit in turn. A `server, limit=N` row scores that call's answer: hit@k within its first k results, "
    "MRR within the answer (at limit=5, a miss past rank 5 counts 0), empty = no results (the relevance "
    "floor held everything back). The baselines rank the same stored memories in-process: cosine of the "
    "server's MiniLM vectors of each whole memory, and the server's own FTS5 index by bm25, top 50, no floor."
)


def reading(stages: Sequence[Stage]) -> str:
    """How to read the tables; with stages, what each one ranks with."""
    if [stage.name for stage in stages] == [SHIPPED.name]:
        return READING
    return (
        f"{READING} Each store is run once per stage, each time through a fresh server started with the "
        "stage's settings; a `server [stage], limit=N` row scores that server's answers. Stages, each "
        f"adding to the one before: {'; '.join(stage.reading() for stage in stages)}. The baselines are "
        "computed over the last stage's store."
    )


PARAPHRASE_COLUMNS = ["hit@1", "hit@5", "hit@10", "mrr", "empty"]
LOCOMO_COLUMNS = ["hit@1", "hit@5", "session hit@5", "mrr", "empty"]


def paraphrase_report(
    split: str,
    paths: Sequence[Path],
    log: Callable[[str], None],
    misses: bool,
    stages: Sequence[Stage] = (SHIPPED,),
) -> list[str]:
    """A table per world (each its own store) and, for several worlds, one over all their questions."""
    units = paraphrase_units(paths, split)
    limits = [5, None, DEPTH]
    results = [run_units([unit], limits, log, misses and split == "dev", stages) for unit in units]
    blocks: list[str] = []
    for path, unit, result in zip(paths, units, results, strict=True):
        title = f"{path.name} ({len(unit.items)} facts stored, {len(unit.asks)} questions)"
        blocks += paraphrase_block(f"### Paraphrase set, {split} split, {title}", result)
    if len(units) > 1:
        stored, asked = sum(len(u.items) for u in units), sum(len(u.asks) for u in units)
        title = f"{len(units)} worlds together ({stored} facts in {len(units)} stores, {asked} questions)"
        blocks += paraphrase_block(f"### Paraphrase set, {split} split, {title}", combined(results))
    return blocks


def paraphrase_block(title: str, result: Result) -> list[str]:
    return [title, "", table(result, PARAPHRASE_COLUMNS), "", footer(result), ""]


def locomo_report(
    label: str,
    indices: Sequence[int],
    path: Path,
    log: Callable[[str], None],
    stages: Sequence[Stage] = (SHIPPED,),
) -> list[str]:
    conversations = locomo.load_conversations(path)
    units = [locomo_unit(conversations[i]) for i in indices]
    result = run_units(units, [5, DEPTH], log, stages=stages)
    return [
        f"### LoCoMo turns, {label} ({', '.join(u.name for u in units)})",
        "",
        table(result, LOCOMO_COLUMNS),
        "",
        "hit@5 by category:",
        "",
        category_table(result),
        "",
        footer(result),
        "",
    ]


def default_locomo() -> Path:
    """../shared/data/locomo10.json beside the checkout (or beside the worktrees' directory)."""
    candidates = [up / "shared" / "data" / "locomo10.json" for up in (ROOT.parent, ROOT.parent.parent)]
    return next((path for path in candidates if path.exists()), candidates[0])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=["paraphrase", "locomo", "both"], default="both", dest="which")
    parser.add_argument("--split", choices=["dev", "test", "both"], default="dev")
    parser.add_argument(
        "--conversations", default="", help="LoCoMo conversation indices, e.g. 0,1 (instead of --split's)"
    )
    parser.add_argument("--data", type=Path, default=default_locomo(), help="locomo10.json")
    parser.add_argument(
        "--facts",
        type=Path,
        action="append",
        help="a paraphrase world's facts (.jsonl), each its own store; repeat for several "
        "(default: the four shipped worlds)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the tables into this markdown file")
    parser.add_argument(
        "--misses",
        action="store_true",
        help="log each dev paraphrase question the server misses at limit=5 (never the test split's)",
    )
    parser.add_argument(
        "--stages",
        default=SHIPPED.name,
        help=f"ranking stages to run, each its own server per store: comma-separated among "
        f"{', '.join(STAGES)}, or all (default: {SHIPPED.name})",
    )
    args = parser.parse_args(argv)
    try:
        stages = choose(args.stages)
    except UnknownStage as exc:
        parser.error(str(exc))
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    try:
        picked = [int(i) for i in args.conversations.split(",") if i.strip()]
    except ValueError:
        parser.error("--conversations takes indices 0-9 separated by commas, e.g. 0,1")
    if any(not 0 <= i <= 9 for i in picked):
        parser.error("--conversations takes indices 0-9 separated by commas, e.g. 0,1")
    worlds = args.facts or list(WORLDS)
    for path in worlds:
        if args.which in ("paraphrase", "both") and not path.exists():
            parser.error(f"{path} not found: pass --facts with a paraphrase world's .jsonl file")
    if args.which in ("locomo", "both") and not args.data.exists():
        parser.error(f"{args.data} not found: pass --data /path/to/locomo10.json")

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    command = f"`python benchmarks/agent_recall.py {' '.join(argv if argv is not None else sys.argv[1:])}`"
    if args.which in ("paraphrase", "both"):
        started = time.perf_counter()
        blocks = [
            line for split in splits for line in paraphrase_report(split, worlds, log, args.misses, stages)
        ]
        emit(args.out, "agent_recall_paraphrase", "paraphrase set", command, blocks, started, stages)
    if args.which in ("locomo", "both"):
        started = time.perf_counter()
        groups = (
            [("chosen conversations", picked)]
            if picked
            else [(f"{split} split", list(locomo.SPLITS[split])) for split in splits]
        )
        blocks = [line for label, idx in groups for line in locomo_report(label, idx, args.data, log, stages)]
        emit(args.out, "agent_recall_locomo", "LoCoMo", command, blocks, started, stages)
    return 0


def code_version() -> str:
    """The checkout's commit, and whether the engine, plugins or benchmarks differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "diff", "--quiet", "HEAD", "--", "packages", "plugins", "benchmarks"], cwd=ROOT
        ).returncode
    except (OSError, subprocess.CalledProcessError):
        return "an unknown commit"
    return f"commit {head}" + (" with uncommitted changes" if changed else "")


def emit(
    out: Path | None,
    section: str,
    title: str,
    command: str,
    blocks: list[str],
    started: float,
    stages: Sequence[Stage] = (SHIPPED,),
) -> None:
    body = [
        f"## What an agent gets: {title} through the MCP server",
        "",
        f"Command: {command} (wall time {time.perf_counter() - started:.0f}s), code at {code_version()}.",
        "",
        reading(stages),
        "",
        *blocks,
    ]
    print("\n".join(body))
    if out is not None:
        write_section(out, "\n".join(body).rstrip(), section)


if __name__ == "__main__":
    raise SystemExit(main())
