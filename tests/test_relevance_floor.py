"""The relevance floor with the real model, through the product's own assembly: off-topic questions
get nothing (and say so), questions about what is stored still find it."""

from __future__ import annotations

import pytest

from mcp_memory_core import Settings

pytestmark = pytest.mark.model

FACTS = [
    "Production database is PostgreSQL 16 hosted on AWS RDS in eu-west-1",
    "The user prefers dark mode in every editor and terminal",
    "Priya is the product manager and decides the roadmap priorities",
    "CI runs on GitHub Actions and must pass before merging to main",
    "The user's sister lives in Toronto",
    "Deploys to production happen on Tuesdays and Thursdays only",
    "The user is vegetarian and avoids fish as well",
    "Secrets are stored in HashiCorp Vault, never in environment files",
]
ON_TOPIC = [
    ("Where is the prod database hosted?", FACTS[0]),
    ("Who decides what gets built next?", FACTS[2]),
    ("Which days can we ship to production?", FACTS[5]),
    ("Where are credentials kept?", FACTS[7]),
]
OFF_TOPIC = [
    "What is the capital of Australia?",
    "How many moons does Jupiter have?",
    "Who wrote the Critique of Pure Reason?",
    "What is the square root of 1764?",
]


@pytest.fixture
def engine(tmp_path, monkeypatch):
    for var in (
        "MCP_MEMORY_RELEVANCE_FLOOR",
        "MCP_MEMORY_FLOOR_SIMILARITY",
        "MCP_MEMORY_FLOOR_STANDOUT",
        "MCP_MEMORY_FLOOR_KEYWORD_SIMILARITY",
        "MCP_MEMORY_FLOOR_BEST_SIMILARITY",
    ):
        monkeypatch.delenv(var, raising=False)
    from mcp_memory_server.runtime.assembly import build_engine

    engine = build_engine(
        Settings(db_path=tmp_path / "m.db", store="sqlite-vec", embedder="minilm", auto_context=False)
    )
    for fact in FACTS:
        engine.store_memory(fact)
    yield engine
    engine.close()


def test_off_topic_questions_get_nothing_and_say_so(engine):
    for question in OFF_TOPIC:
        found = engine.search(question, limit=5)
        assert found.hits == [], question
        assert found.below_floor > 0 and found.floor is not None, question


def test_questions_about_what_is_stored_still_find_it(engine):
    for question, fact in ON_TOPIC:
        found = engine.search(question, limit=5)
        assert found.hits and found.hits[0].memory.content == fact, question


def test_without_the_floor_every_question_gets_five(engine):
    engine.relevance_floor = None
    for question in OFF_TOPIC:
        assert len(engine.search(question, limit=5).hits) == 5, question
