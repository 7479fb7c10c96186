"""engine.reindex on the sqlite-vec store: every memory moves to the new model, an interrupted run
resumes without embedding anything twice, and a server still on the old model works until the
switch, then is refused (never a search of one model's vectors with the other's query)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mcp_memory_core import MemoryEngine, MemoryFilter
from mcp_memory_core.errors import InvalidInputError, ModelMismatchError
from mcp_memory_sqlite_vec import SqliteVecStore
from mcp_memory_testing import HashEmbedder, InMemoryStore, SimilarityRanker

FACTS = [
    "The staging database listens on port 5432",
    "Nightly backups run at two in the morning",
    "Maria leads the payments team",
    "The release train leaves every second Tuesday",
    "Our CI runs on two cores and takes nine minutes",
    "Andrew prefers concise answers without preamble",
    "The office plant needs water on Mondays",
]


class Counting(HashEmbedder):
    def __init__(self, dimensions: int) -> None:
        super().__init__(dimensions)
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]):  # type: ignore[no-untyped-def]
        self.texts.extend(texts)
        return super().embed_documents(texts)


def engine(path: Path, dimensions: int) -> MemoryEngine:
    return MemoryEngine(
        SqliteVecStore(path), Counting(dimensions), SimilarityRanker(), namespace="proj", track_access=False
    )


@pytest.fixture
def old(tmp_path: Path) -> MemoryEngine:
    """A store written with the 64-d model: facts, one updated, one deleted."""
    first = engine(tmp_path / "m.db", 64)
    ids = [first.store_memory(fact).memory.id for fact in FACTS]
    first.update_memory(ids[0], "The staging database listens on port 6543")
    first.delete_memory(ids[-1])
    return first


def test_every_memory_moves_to_the_new_model(old: MemoryEngine, tmp_path: Path) -> None:
    every = {m.id: m for m in old.store.iter_all()}
    new = engine(tmp_path / "m.db", 32)
    seen: list[tuple[int, int]] = []
    outcome = new.reindex(batch_size=3, progress=lambda done, total: seen.append((done, total)))
    assert (outcome.previous, outcome.model_id, outcome.embedded) == ("hash-64", "hash-32", len(every))
    assert seen[0] == (0, len(every)) and seen[-1] == (len(every), len(every))
    assert sorted(new.embedder.texts) == sorted(m.content for m in every.values())  # type: ignore[attr-defined]
    rows = new.store.vectors(list(every))  # type: ignore[attr-defined]
    assert set(rows) == set(every) and all(np.asarray(r).shape[1] == 32 for r in rows.values())
    hits = new.search("which port does staging use", limit=3).hits
    assert hits[0].memory.content == "The staging database listens on port 6543"
    assert new.get_memory(next(iter(every))).memory == next(iter(every.values()))  # rows untouched
    # the server still on the old model: refused, in one sentence that says what happened
    with pytest.raises(
        ModelMismatchError, match=r"was re-embedded with model 'hash-32' \(`mcp-memory reindex`\)"
    ):
        old.search("backups", limit=3)
    with pytest.raises(ModelMismatchError):
        old.store_memory("A new fact from the old server")
    new.close()
    again = engine(tmp_path / "m.db", 64)
    with pytest.raises(ModelMismatchError, match="mcp-memory reindex"):
        again.search("backups")
    # running it again is a no-op
    assert engine(tmp_path / "m.db", 32).reindex().previous is None


def test_an_interrupted_run_resumes_without_embedding_twice(old: MemoryEngine, tmp_path: Path) -> None:
    total = old.store.count(MemoryFilter(namespace=None, include_deleted=True, include_superseded=True))
    old.close()
    first = engine(tmp_path / "m.db", 32)

    def stop_after_two(done: int, total: int) -> None:
        if done >= 4:  # two batches of two are committed
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        first.reindex(batch_size=2, progress=stop_after_two)
    first.close()
    embedded_first = len(first.embedder.texts)  # type: ignore[attr-defined]
    assert embedded_first == 4
    still_old = engine(tmp_path / "m.db", 64)
    assert still_old.search("payments team", limit=1).hits  # the file still answers with the old model
    still_old.close()
    second = engine(tmp_path / "m.db", 32)
    outcome = second.reindex(batch_size=2)
    assert outcome.embedded == total - 4
    assert embedded_first + len(second.embedder.texts) == total  # type: ignore[attr-defined]
    assert second.search("payments team", limit=1).hits[0].memory.content == "Maria leads the payments team"


def test_a_server_on_the_old_model_works_until_the_switch(old: MemoryEngine, tmp_path: Path) -> None:
    new = engine(tmp_path / "m.db", 32)
    during: list[str] = []

    def meanwhile(done: int, total: int) -> None:
        if done and not during:
            during.append(old.store_memory("Deploys are frozen during the holidays").memory.id)
            assert old.search("who leads payments", limit=1).hits[0].memory.content == FACTS[2]

    new.reindex(batch_size=2, progress=meanwhile)
    assert during
    hits = new.search("are deploys frozen in the holidays", limit=1).hits
    assert hits[0].memory.id == during[0]  # stored by the old server meanwhile, re-embedded at the switch
    assert old.get_memory(during[0]).memory.content == "Deploys are frozen during the holidays"  # rows: fine
    with pytest.raises(ModelMismatchError):
        old.search("deploys")


def test_a_store_that_cannot_reembed_says_how_to_move(tmp_path: Path) -> None:
    memory_engine = MemoryEngine(InMemoryStore(), HashEmbedder(), SimilarityRanker(), namespace="proj")
    with pytest.raises(InvalidInputError, match="export them"):
        memory_engine.reindex()
