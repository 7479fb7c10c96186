"""Texts are grouped into onnxruntime runs by token length: a memory's sentences are not padded to its
whole text, and grouping changes no vector."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from mcp_memory_core.passages import split_passages
from mcp_memory_minilm import MiniLMEmbedder
from mcp_memory_minilm.embedder import RUN_COST_TOKENS, plan_batches

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
