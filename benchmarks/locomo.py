"""LoCoMo retrieval benchmark: does search find the turns (or facts) that answer each question?

Each conversation becomes its own store, at two granularities: ``turns`` (every dialogue turn is a
memory, dated with its session's date) and ``observations`` (the dataset's short extracted facts, each
tied to its source turn). The category 1-4 questions go through the engine's real search path; a hit
is a retrieved memory whose source turn is in the question's evidence.

    python benchmarks/locomo.py --data ../shared/data/locomo10.json --out docs/benchmarks.md

Metrics (per question, then averaged): hit@5 / hit@10 (some evidence in the top k), recall@10 (the
fraction of the evidence found in the top 10), nDCG@10 (binary relevance), MRR (1 / rank of the first
evidence in the top 10, else 0), and session hit@5 (some evidence session among the first 5 distinct
sessions of the ranked turns). Dev split: conversations 0-4; test split: 5-9 (never tuned on).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from report import write_section

from mcp_memory_core import Memory, MemoryEngine, MemoryFilter

if TYPE_CHECKING:
    from mcp_memory_core import Settings
    from mcp_memory_core.plugins import PluginManager

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SPLITS = {"dev": range(0, 5), "test": range(5, 10)}
DEPTH = 10  # metrics are computed on the top 10
SESSION_DEPTH = 50  # ranked turns rolled up to sessions
TURN_LEVEL = ("said", "turns")  # one memory per dialogue turn


# -- data --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]  # dia_ids, e.g. "D1:3"


@dataclass
class Conversation:
    sample_id: str
    said: list[Memory]
    turns: list[Memory]
    observations: list[Memory]
    sessions: list[Memory]
    questions: list[Question]

    def memories(self, granularity: str) -> list[Memory]:
        return {
            "said": self.said,
            "turns": self.turns,
            "observations": self.observations,
            "sessions": self.sessions,
        }[granularity]


# When an agent stores a conversation through MCP, it stores it now, not on the day it was held.
STORED_AT = datetime(2026, 11, 1, tzinfo=UTC)


def parse_session_date(text: str) -> datetime:
    """LoCoMo dates look like '1:56 pm on 8 May, 2023'."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def normalize_evidence(raw: Iterable[str]) -> list[str]:
    """Evidence ids come a few times as 'D8:6; D9:17', 'D9:1 D4:4', 'D:11:26' or 'D30:05'."""
    out = []
    for entry in raw:
        for token in re.split(r"[;,\s]+", str(entry)):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", token.strip())
            if match:
                out.append(f"D{match.group(1)}:{match.group(2)}")
    return out


def session_of(dia_id: str) -> str:
    return dia_id.split(":", 1)[0]


def load_conversations(path: Path) -> list[Conversation]:
    raw = json.loads(path.read_text())
    conversations = []
    for sample in raw:
        convo = sample["conversation"]
        turns: list[Memory] = []
        said: list[Memory] = []
        dia_ids: set[str] = set()
        session_dates: dict[str, datetime] = {}
        sessions: list[Memory] = []
        for key in sorted(
            (k for k in convo if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k.split("_")[1])
        ):
            when = parse_session_date(convo[f"{key}_date_time"])
            session_dates[key] = when
            for index, turn in enumerate(convo[key]):
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                created = when + timedelta(seconds=index)
                turns.append(
                    Memory(
                        content=text,
                        created_at=created,
                        updated_at=created,
                        type="episodic",
                        metadata={"dia_id": turn["dia_id"], "date": when.date().isoformat()},
                    )
                )
                # What an agent stores through MCP (the held-out check's protocol): what was said, no
                # image caption, the session's date as occurred_at, one thread per session, stored now.
                stored = STORED_AT + timedelta(seconds=len(said))
                said.append(
                    Memory(
                        content=f"{turn['speaker']}: {turn['text']}",
                        created_at=stored,
                        updated_at=stored,
                        occurred_at=when,
                        thread=f"{sample['sample_id']}/{key}",
                        metadata={"dia_id": turn["dia_id"]},
                    )
                )
                dia_ids.add(turn["dia_id"])
            number = key.split("_")[1]
            sessions.append(
                Memory(
                    content="\n".join(
                        m.content for m in turns if session_of(str(m.metadata["dia_id"])) == f"D{number}"
                    ),
                    created_at=when,
                    updated_at=when,
                    type="episodic",
                    metadata={"dia_id": f"D{number}", "date": when.date().isoformat()},
                )
            )
        observations: list[Memory] = []
        for key, by_speaker in sample.get("observation", {}).items():
            session_key = key.removesuffix("_observation")
            when = session_dates.get(session_key, datetime(2023, 1, 1, tzinfo=UTC))
            for facts in by_speaker.values():
                for fact, dia_id in facts:
                    ids = dia_id if isinstance(dia_id, list) else [dia_id]
                    observations.append(
                        Memory(
                            content=fact,
                            created_at=when,
                            updated_at=when,
                            metadata={"dia_id": str(ids[0]), "date": when.date().isoformat()},
                        )
                    )
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = frozenset(e for e in normalize_evidence(qa.get("evidence", [])) if e in dia_ids)
            if evidence:  # a few evidence ids match no turn: skip those questions
                questions.append(Question(qa["question"], qa["category"], evidence))
        conversations.append(
            Conversation(sample["sample_id"], said, turns, observations, sessions, questions)
        )
    return conversations


# -- metrics -----------------------------------------------------------------------------------
@dataclass
class Scores:
    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.values.setdefault(name, []).append(value)

    def mean(self, name: str) -> float:
        return statistics.fmean(self.values[name]) if self.values.get(name) else float("nan")

    def count(self) -> int:
        return len(self.values.get("hit@5", []))


def question_metrics(ranked: Sequence[str], evidence: frozenset[str]) -> dict[str, float]:
    """Metrics of one ranked list of dia_ids (duplicates allowed: observations share turns)."""
    top = list(ranked[:DEPTH])
    relevant = [dia in evidence for dia in top]
    first = next((i for i, r in enumerate(relevant) if r), None)
    found = {dia for dia in top if dia in evidence}
    dcg = sum(1.0 / math.log2(i + 2) for i, dia in enumerate(_first_occurrences(top)) if dia in evidence)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(evidence), DEPTH)))
    return {
        "hit@5": float(any(relevant[:5])),
        "hit@10": float(any(relevant)),
        "recall@10": len(found) / len(evidence),
        "ndcg@10": dcg / ideal,
        "mrr": 1.0 / (first + 1) if first is not None else 0.0,
    }


def _first_occurrences(items: Iterable[str]) -> list[str]:
    """Keep the first occurrence of each item, blanking repeats so they earn no gain twice."""
    seen: set[str] = set()
    out = []
    for item in items:
        out.append(item if item not in seen else "")
        seen.add(item)
    return out


def session_hit(ranked: Sequence[str], evidence: frozenset[str], k: int = 5) -> float:
    sessions: list[str] = []
    for dia in ranked:
        session = session_of(dia)
        if session not in sessions:
            sessions.append(session)
        if len(sessions) == k:
            break
    return float(any(session_of(e) in sessions for e in evidence))


# -- retrievers --------------------------------------------------------------------------------
Retriever = Callable[[MemoryEngine, str, int], list[Memory]]


def engine_retriever(engine: MemoryEngine, query: str, k: int) -> list[Memory]:
    return [hit.memory for hit in engine.search_memories(query, limit=k)]


def keyword_only_retriever(engine: MemoryEngine, query: str, k: int) -> list[Memory]:
    where = MemoryFilter(namespace=engine.namespace)
    pairs = engine.store.keyword_search(query, k, where)
    found = engine.store.get([memory_id for memory_id, _ in pairs])
    return [found[memory_id] for memory_id, _ in pairs if memory_id in found]


@dataclass(frozen=True)
class Setup:
    """One row of the results: a name, the ranker to plug into the engine (None = keep), a retriever."""

    name: str
    ranker: object | None
    retriever: Retriever
    floor: bool = True  # the engine's relevance floor (as the server assembles it) stays on


def run(
    conversations: Sequence[Conversation],
    make_engine: Callable[[Path], MemoryEngine],
    setups: Sequence[Setup],
    granularity: str,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
    offtopic: Sequence[str] = (),
) -> dict[str, dict[str, Scores]]:
    """Returns {setup name: {"all" | category name | "session": Scores}}."""
    results: dict[str, dict[str, Scores]] = {s.name: {} for s in setups}
    for convo in conversations:
        memories = convo.memories(granularity)
        with tempfile.TemporaryDirectory() as tmp:
            engine = make_engine(Path(tmp))
            # Questions are asked the day after the conversation's last session, as a user would.
            asked_at = max(m.created_at for m in memories) + timedelta(days=1)
            engine.clock = lambda at=asked_at: at
            started = time.perf_counter()
            engine.import_memories(memories, batch_size=128)
            log(
                f"{convo.sample_id} {granularity}: {len(memories)} memories in {time.perf_counter() - started:.1f}s"
            )
            default_ranker, default_floor = engine.ranker, engine.relevance_floor
            for setup in setups:
                engine.ranker = setup.ranker if setup.ranker is not None else default_ranker  # type: ignore[assignment]
                engine.relevance_floor = default_floor if setup.floor else None
                for text in offtopic:  # nothing here answers these: every result is noise
                    found = len(setup.retriever(engine, text, 5))
                    noise = results[setup.name].setdefault("offtopic", Scores())
                    noise.add("any", float(found > 0))
                    noise.add("count", float(found))
                depth = SESSION_DEPTH if granularity in TURN_LEVEL else DEPTH
                for question in convo.questions:
                    ranked = [
                        str(m.metadata["dia_id"]) for m in setup.retriever(engine, question.text, depth)
                    ]
                    evidence = question.evidence
                    if granularity == "sessions":
                        evidence = frozenset(session_of(e) for e in evidence)
                    metrics = question_metrics(ranked, evidence)
                    for bucket in ("all", CATEGORIES[question.category]):
                        scores = results[setup.name].setdefault(bucket, Scores())
                        for name, value in metrics.items():
                            scores.add(name, value)
                    if granularity in TURN_LEVEL:
                        results[setup.name].setdefault("session", Scores()).add(
                            "hit@5", session_hit(ranked, question.evidence)
                        )
            engine.close()
    return results


# -- report ------------------------------------------------------------------------------------
METRICS = ["hit@5", "hit@10", "recall@10", "ndcg@10", "mrr"]


def table(results: dict[str, dict[str, Scores]], granularity: str) -> str:
    offtopic = any("offtopic" in buckets for buckets in results.values())
    header = "| retriever | questions | " + " | ".join(METRICS)
    header += " | session hit@5" if granularity in TURN_LEVEL else ""
    header += " | off-topic: share with results (mean results of 5) |" if offtopic else " |"
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for name, buckets in results.items():
        overall = buckets["all"]
        row = f"| {name} | {overall.count()} | " + " | ".join(f"{overall.mean(m):.3f}" for m in METRICS)
        row += f" | {buckets['session'].mean('hit@5'):.3f}" if granularity in TURN_LEVEL else ""
        if offtopic:
            noise = buckets.get("offtopic", Scores())
            row += f" | {noise.mean('any'):.2f} ({noise.mean('count'):.2f})"
        row += " |"
        lines.append(row)
    return "\n".join(lines)


def category_table(results: dict[str, dict[str, Scores]]) -> str:
    names = list(CATEGORIES.values())
    lines = [
        "| retriever | " + " | ".join(f"{n} hit@5" for n in names) + " |",
        "|" + "---|" * (len(names) + 1),
    ]
    for name, buckets in results.items():
        cells = [f"{buckets[n].mean('hit@5'):.3f}" if n in buckets else "—" for n in names]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def context_stages() -> list[Setup]:
    """The hybrid ranker with its conversation lifts turned on one at a time (issue 13's stages)."""
    from mcp_memory_rankers import HybridRanker, HybridSettings

    off = {"neighbour_weight": 0.0, "neighbour_keyword_weight": 0.0, "thread_weight": 0.0, "date_weight": 0.0}
    on = HybridSettings()
    stages = [
        ("hybrid, each memory alone, no relevance floor", {}),
        ("+ previous turn (score and keywords)", {"neighbour_weight", "neighbour_keyword_weight"}),
        ("+ thread prior", {"neighbour_weight", "neighbour_keyword_weight", "thread_weight"}),
    ]
    rows = [
        Setup(
            name,
            HybridRanker(HybridSettings(**{**off, **{key: getattr(on, key) for key in keep}})),
            engine_retriever,
            floor=False,
        )
        for name, keep in stages
    ]
    return [
        *rows,
        Setup(
            "+ dates named in the query (hybrid), no relevance floor",
            HybridRanker(on),
            engine_retriever,
            floor=False,
        ),
    ]


def engine_factory(
    base: Settings, pm: PluginManager, fresh_database: Callable[[], str] | None = None
) -> Callable[[Path], MemoryEngine]:
    """A fresh engine per conversation, in directory ``tmp``, built by the server's own assembly;
    with ``fresh_database`` (a new PostgreSQL database's URL per call) on the postgres store."""
    import os

    from mcp_memory_server.runtime.assembly import build_engine  # the server's own assembly: the real path

    def make_engine(tmp: Path) -> MemoryEngine:
        # Retrieval only: conversations span months, so no memory may expire mid-benchmark.
        update: dict[str, object] = {
            "db_path": tmp / "locomo.db",
            "namespace": "default",
            "ttl_episodic": "never",
            "auto_context": False,
        }
        if fresh_database is not None:
            os.environ["MCP_MEMORY_DATABASE_URL"] = fresh_database()  # the plugin reads its own settings
            update["store"] = "postgres"
        settings = base.model_copy(update=update)
        engine = build_engine(settings, pm)
        engine.track_access = False  # questions must not change each other's ranking features
        return engine

    return make_engine


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/locomo10.json"
    )
    parser.add_argument("--out", type=Path, default=None, help="write a markdown report here")
    parser.add_argument("--split", choices=["dev", "test", "both"], default="both")
    parser.add_argument(
        "--granularity", choices=["said", "turns", "observations", "sessions", "all"], default="all"
    )
    parser.add_argument("--rankers", default="", help="comma-separated ranker names (default: all installed)")
    parser.add_argument(
        "--conversations", type=int, default=None, help="only the first N of each split (smoke runs)"
    )
    parser.add_argument(
        "--offtopic",
        action="store_true",
        help="also ask benchmarks/data/offtopic_questions.txt (dev: the first 30, test: the last 30)",
    )
    parser.add_argument(
        "--stages", action="store_true", help="add a row per conversation-context stage of the hybrid ranker"
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="run on the postgres store: a PostgreSQL started for the run (mcp_memory_testing.postgres), "
        "a fresh database per conversation",
    )
    args = parser.parse_args(argv)
    if not args.data.exists():
        parser.error(f"{args.data} not found: pass --data /path/to/locomo10.json")
    if args.postgres:
        from mcp_memory_testing.postgres import PostgresServer

        with PostgresServer() as server:
            names = itertools.count()
            return _main(args, argv, lambda: server.create_database(f"locomo_{next(names)}"))
    return _main(args, argv, None)


def _main(
    args: argparse.Namespace, argv: Sequence[str] | None, fresh_database: Callable[[], str] | None
) -> int:
    from mcp_memory_core import Settings, plugins

    conversations = load_conversations(args.data)
    pm = plugins.plugin_manager_from_settings()
    base = Settings()
    ranker_names = [n for n in args.rankers.split(",") if n] or pm.names("ranker")
    setups = [Setup("fts5 only (bm25)", None, keyword_only_retriever)]
    if args.stages:
        setups += context_stages()
    setups += [
        Setup(f"ranker: {name}", pm.ranker(name).factory(base), engine_retriever) for name in ranker_names
    ]

    make_engine = engine_factory(base, pm, fresh_database)
    report = [
        "## LoCoMo: every table",
        "",
        f"Command: `python benchmarks/locomo.py {' '.join(argv or sys.argv[1:])}`",
        "",
    ]
    splits = ["dev", "test"] if args.split == "both" else [args.split]
    granularities = (
        ["said", "turns", "observations", "sessions"] if args.granularity == "all" else [args.granularity]
    )
    for split in splits:
        chosen = [conversations[i] for i in SPLITS[split]][: args.conversations]
        for granularity in granularities:
            offtopic = OFFTOPIC[split] if args.offtopic else ()
            results = run(chosen, make_engine, setups, granularity, offtopic=offtopic)
            title = f"### {split} split ({', '.join(c.sample_id for c in chosen)}), {granularity}"
            block = [
                title,
                "",
                table(results, granularity),
                "",
                "hit@5 by category:",
                "",
                category_table(results),
                "",
            ]
            print("\n".join(block))
            report += block
    if args.out:
        write_section(args.out, "\n".join(report), "locomo")
    return 0


def offtopic_halves(path: Path) -> dict[str, list[str]]:
    """A file of questions nothing stored answers, one a line (``#`` lines are comments): the first
    half is the dev split's, the second the test split's."""
    lines = [
        line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")
    ]
    half = len(lines) // 2
    return {"dev": lines[:half], "test": lines[half : 2 * half]}


OFFTOPIC = offtopic_halves(Path(__file__).parent / "data" / "offtopic_questions.txt")

if __name__ == "__main__":
    raise SystemExit(main())
