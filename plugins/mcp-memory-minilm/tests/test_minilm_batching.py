"""Texts are grouped into onnxruntime runs by token length: a memory's sentences are not padded to its
whole text, and grouping changes no vector."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from mcp_memory_core import Memory, MemoryEngine
from mcp_memory_core.passages import split_passages
from mcp_memory_minilm import MiniLMEmbedder
from mcp_memory_minilm.embedder import RUN_COST_TOKENS, plan_batches
from mcp_memory_testing import InMemoryStore

LONG_MEMORY = (
    "Maya moved to Lisbon in March for the new job. She works as a data engineer at a small fintech. "
    "Her team ships the billing service every Tuesday. She prefers Python and dislikes YAML configs. "
    "On weekends she goes surfing at Carcavelos. Her sister Ana visits her every August too."
)


def cost(runs: Sequence[Sequence[int]], lengths: Sequence[int]) -> int:
    return sum(RUN_COST_TOKENS + len(run) * max(lengths[i] for i in run) for run in runs)


def fixed_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """The plan before: sorted longest first, cut every ``size`` texts."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i : i + size] for i in range(0, len(order), size)]


# -- the plan ---------------------------------------------------------------------------------------


def test_a_whole_text_runs_apart_from_its_sentences() -> None:
    lengths = [66, 14, 14, 11, 14, 12, 11]  # LONG_MEMORY's passages, in tokens
    runs = plan_batches(lengths, 32)
    assert runs[0] == [0]
    assert sorted(i for run in runs[1:] for i in run) == [1, 2, 3, 4, 5, 6]
    assert cost(runs, lengths) < cost(fixed_batches(lengths, 32), lengths)


def test_texts_of_one_length_share_runs_of_at_most_max_rows() -> None:
    assert plan_batches([12] * 20, 32) == [list(range(20))]
    runs = plan_batches([12] * 40, 32)
    assert len(runs) == 2 and all(len(run) <= 32 for run in runs)


@pytest.mark.parametrize("seed", range(20))
def test_every_text_once_and_never_dearer_than_fixed_batches(seed: int) -> None:
    rng = random.Random(seed)
    lengths = [rng.choice([rng.randint(3, 20), rng.randint(20, 256)]) for _ in range(rng.randint(1, 120))]
    max_rows = rng.choice([1, 3, 8, 32])
    runs = plan_batches(lengths, max_rows)
    assert sorted(i for run in runs for i in run) == list(range(len(lengths)))
    assert all(1 <= len(run) <= max_rows for run in runs)
    assert cost(runs, lengths) <= cost(fixed_batches(lengths, max_rows), lengths)


def test_empty_plan() -> None:
    assert plan_batches([], 32) == []


# -- with the model ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    e = MiniLMEmbedder()
    e.load()
    return e


@pytest.mark.model
def test_a_long_memory_is_not_padded_to_its_whole_text(
    embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    shapes: list[tuple[int, int]] = []
    run = embedder._run

    def spy(encodings: Sequence[Any]) -> Any:
        out = run(encodings)
        shapes.append((len(encodings), max(len(e.ids) for e in encodings)))
        return out

    monkeypatch.setattr(embedder, "_run", spy)
    passages = split_passages(LONG_MEMORY)
    assert len(passages) == 7
    embedder.embed_documents(passages)
    padded = sum(rows * width for rows, width in shapes)
    whole = max(width for _, width in shapes)
    assert (1, whole) in shapes
    assert padded < 3 * whole  # before: 7 rows at the whole text's width (7 * whole)


@pytest.mark.model
def test_grouped_runs_give_each_text_its_own_vector(embedder: MiniLMEmbedder) -> None:
    rng = random.Random(7)
    sentences = split_passages(LONG_MEMORY)[1:]
    texts = [
        *split_passages(LONG_MEMORY),
        "Yes.",
        "The quarterly report is due next Friday; remind Alice to send the figures. " * 20,  # > 256 tokens
        *(" ".join(rng.sample(sentences, rng.randint(1, 6))) for _ in range(30)),
    ]
    rng.shuffle(texts)
    together = embedder.embed_documents(texts)
    alone = np.stack([embedder.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    for size in (1, 4):
        np.testing.assert_allclose(MiniLMEmbedder(batch_size=size).embed_documents(texts), alone, atol=1e-5)


class NoRanker:
    """Only writes happen here: nothing is ranked."""

    name = "none"

    def rank(self, query: str, candidates: Sequence[Any], now: Any) -> list[Any]:
        raise AssertionError("not used by writes")


class RecordingStore(InMemoryStore):
    """Keeps what the engine inserted: each memory's content with the vectors it owns."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, np.ndarray]] = []

    def insert(self, memories: Sequence[Memory], vectors: Any, owners: Sequence[int] | None = None) -> None:
        super().insert(memories, vectors, owners)
        owned = range(len(memories)) if owners is None else owners
        self.rows += [(memories[owner].content, vector) for owner, vector in zip(owned, vectors, strict=True)]


@pytest.mark.model
def test_the_engine_gets_each_memorys_passage_vectors_in_order(embedder: MiniLMEmbedder) -> None:
    store = RecordingStore()
    engine = MemoryEngine(store, embedder, NoRanker())
    contents = [
        LONG_MEMORY,
        "The user prefers dark mode.",
        "Caroline: I went to the support group yesterday. It was powerful. I felt accepted there.",
        "Deploys go out on Tuesdays after the standup.",
    ]
    engine.import_memories([Memory(content=c) for c in contents])  # one batch: one embed_documents call
    engine.store_memory("Melanie: We went camping last weekend. The kids loved the lake.")
    for content in [*contents, "Melanie: We went camping last weekend. The kids loved the lake."]:
        vectors = [vector for owner, vector in store.rows if owner == content]
        passages = split_passages(content)
        assert len(vectors) == len(passages)
        for passage, vector in zip(passages, vectors, strict=True):
            np.testing.assert_allclose(vector, embedder.embed_query(passage), atol=1e-5)
