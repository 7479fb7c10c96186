"""Retrieval quality with the real model, through the real server: paraphrased questions find their memory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import module_command, payload, server_env, stdio_session

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import locomo

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.model,
    pytest.mark.anyio,
    pytest.mark.usefixtures("default_plugins"),
]

# (memory, a paraphrased question that shares as few words with it as possible)
CASES: list[tuple[str, str]] = [
    # preferences
    ("The user prefers dark mode in every editor and terminal", "Which colour theme should the IDE use?"),
    ("The user drinks oat milk flat whites, never dairy", "What coffee order should I get for them?"),
    (
        "Indentation in this user's Python code is four spaces, never tabs",
        "How wide should each nesting level be?",
    ),
    ("The user likes concise answers without long preambles", "How verbose should my replies be?"),
    ("The user is vegetarian and avoids fish as well", "Any dietary restrictions for the team dinner?"),
    (
        "The user wants commit messages written in the imperative mood",
        "How should git log entries be phrased?",
    ),
    # project facts
    (
        "The backend service is written in Go 1.22 and deployed on Kubernetes",
        "What language is our backend coded in?",
    ),
    (
        "Production database is PostgreSQL 16 hosted on AWS RDS in eu-west-1",
        "Where is the prod database hosted?",
    ),
    ("The frontend is a React single-page app built with Vite", "Which JavaScript framework renders the UI?"),
    (
        "CI runs on GitHub Actions and must pass before merging to main",
        "What has to succeed before a branch can be merged?",
    ),
    (
        "Staging deploys happen automatically on every push to the develop branch",
        "How does code reach the pre-production environment?",
    ),
    (
        "The project uses semantic versioning and the current release is 3.4.1",
        "What version number are we at?",
    ),
    (
        "API rate limit is 100 requests per minute per token",
        "How many calls can a client make before being throttled?",
    ),
    ("Secrets are stored in HashiCorp Vault, never in environment files", "Where are credentials kept?"),
    # people
    ("Priya is the product manager and decides the roadmap priorities", "Who chooses what gets built next?"),
    (
        "Tom from the security team reviews every change to authentication",
        "Who must approve login-related code?",
    ),
    ("The user's manager is called Elena Rossi", "Who does the user report to?"),
    ("Kenji maintains the billing microservice", "Who should I ask about invoices and payments code?"),
    ("The user's sister lives in Toronto", "Which city is their sibling in?"),
    # tools
    ("The team tracks tasks in Linear, not Jira", "Which project management app holds our to-dos?"),
    (
        "Docs are written in Markdown and published with MkDocs Material",
        "How is the documentation site generated?",
    ),
    ("The user runs Arch Linux on a ThinkPad X1 Carbon", "What operating system and laptop do they have?"),
    ("Terraform manages all cloud infrastructure", "What do we use for infrastructure as code?"),
    (
        "Slack channel #incidents is where outages are coordinated",
        "Which chat room is used when the site goes down?",
    ),
    # dates and events
    (
        "The quarterly planning meeting is on the first Monday of April",
        "When do we meet to plan the next quarter?",
    ),
    ("The user's birthday is on 14 September", "When should I send them congratulations?"),
    ("The conference talk submission deadline is March 3rd", "By when must the speaking proposal be in?"),
    ("The user is on parental leave from June until August", "When will they be away for the baby?"),
    (
        "The office is closed between Christmas and New Year",
        "Is anyone working in the last week of December?",
    ),
    # decisions and misc
    (
        "We decided to drop Python 3.9 support because it reached end of life",
        "Why did we stop supporting an older interpreter?",
    ),
    (
        "The team chose SQLite over MongoDB for the local cache because it needs no server",
        "What was the reason for the embedded storage choice?",
    ),
    ("The user is allergic to peanuts", "Are there any foods that could make them sick?"),
    ("The user's cat is named Miso", "What is their pet called?"),
    ("The user speaks Portuguese and Spanish fluently", "Which languages besides English do they know?"),
    ("Lunch break is usually from 12:30 to 13:15", "When do they step away to eat midday?"),
    ("The user commutes by bicycle every day", "How do they get to work?"),
]


@pytest.mark.parametrize(
    "floor",
    [
        "false",  # the ranking alone
        # As shipped: a paraphrase whose similarity is as low as an off-topic question's (0.12 for
        # "How wide should each nesting level be?" -> "Indentation ... four spaces") is held back
        # with the off-topic ones, and a wrong first answer can be too (then the right one leads).
        "true",
    ],
)
async def test_paraphrased_queries_find_their_memory(db_path: Path, tmp_path: Path, floor: str) -> None:
    assert len(CASES) >= 30
    env = server_env(db_path, MCP_MEMORY_RELEVANCE_FLOOR=floor)
    async with stdio_session(module_command(), env, tmp_path / "q.err") as session:
        ids: list[str] = []
        for content, _ in CASES:
            ids.append(payload(await session.call_tool("store_memory", {"content": content}))["id"])
        misses: list[tuple[str, str, str]] = []
        hits = 0
        for (content, question), expected in zip(CASES, ids, strict=True):
            results: list[dict[str, Any]] = payload(
                await session.call_tool("search_memories", {"query": question, "limit": 3})
            )["results"]
            if results and results[0]["id"] == expected:
                hits += 1
            else:
                misses.append((question, content, results[0]["content"] if results else "(nothing)"))
    accuracy = hits / len(CASES)
    print(f"\nrank-1 accuracy with all-MiniLM-L6-v2: {accuracy:.3f} ({hits}/{len(CASES)})")
    for question, wanted, got in misses:
        print(f"  miss: {question!r}\n        wanted {wanted!r}\n        got    {got!r}")
    assert accuracy >= 0.9


OFF_TOPIC = [
    "What is the capital of Australia?",
    "How many moons does Jupiter have?",
    "What is the boiling point of water at sea level?",
    "Who wrote the Critique of Pure Reason?",
]


async def test_off_topic_questions_get_nothing_and_say_so(db_path: Path, tmp_path: Path) -> None:
    """Through a real client over stdio, as shipped: questions nothing stored answers come back empty
    with a note (not five unrelated memories), while a question about a stored fact still finds it."""
    async with stdio_session(module_command(), server_env(db_path), tmp_path / "o.err") as session:
        for content, _ in CASES:
            await session.call_tool("store_memory", {"content": content})
        for question in OFF_TOPIC:
            found = payload(await session.call_tool("search_memories", {"query": question, "explain": True}))
            assert found["results"] == [] and found["held_back"] > 0, question
            assert "relevant enough" in found["note"] and found["floor"]["min_similarity"] > 0, question
        found = payload(
            await session.call_tool("search_memories", {"query": "Where is the prod database hosted?"})
        )
        assert found["results"][0]["content"].startswith("Production database is PostgreSQL 16")


async def test_off_topic_questions_get_at_most_one_result_on_average(db_path: Path, tmp_path: Path) -> None:
    """A store of short facts has a background near zero, so a weak memory stands out of it easily;
    below the best result the floor asks for real similarity, so a question nothing answers gets at
    most its one weak best match on average, not three of them (it got 1.4 before)."""
    questions = locomo.OFFTOPIC["dev"]  # general questions nothing in CASES answers (the floor's dev set)
    assert len(questions) >= 30
    async with stdio_session(module_command(), server_env(db_path), tmp_path / "g.err") as session:
        for content, _ in CASES:
            await session.call_tool("store_memory", {"content": content})
        counts = []
        for question in questions:
            found = payload(await session.call_tool("search_memories", {"query": question, "limit": 5}))
            counts.append(len(found["results"]))
    mean = sum(counts) / len(counts)
    print(f"\ngeneral questions against {len(CASES)} facts: {mean:.2f} results on average (limit 5)")
    assert mean <= 1.0, counts
