"""What the store tests are made of: fixed times, the two filters most tests read through, deterministic
unit vectors and memories."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from mcp_memory_core import Memory, MemoryFilter

BASE_TIME = datetime(2024, 5, 17, 12, 0, 0, 123456, tzinfo=UTC)
ALL = MemoryFilter(namespace=None, include_deleted=True, include_superseded=True)
SEARCH = MemoryFilter()  # default namespace, no tombstones, superseded included (the engine's search view)


def unit_vectors(n: int, dims: int, seed: int) -> np.ndarray:
    """``n`` deterministic float32 unit vectors."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, dims)).astype(np.float32)
    out: np.ndarray = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return out


def near(vector: np.ndarray, seed: int, noise: float = 0.05) -> np.ndarray:
    """A unit vector close to ``vector`` (cosine ≈ 1 - noise²/2 · dims-ish)."""
    rng = np.random.default_rng(seed)
    out = vector + noise * rng.standard_normal(vector.shape).astype(np.float32)
    unit: np.ndarray = (out / np.linalg.norm(out)).astype(np.float32)
    return unit


def hit_ids(hits: Sequence[tuple[str, float]]) -> set[str]:
    """The ids of ``knn`` or ``keyword_search`` hits."""
    return {memory_id for memory_id, _ in hits}


def row_ids(rows: Sequence[Memory]) -> set[str]:
    """The ids of ``list`` rows."""
    return {m.id for m in rows}


def memory(i: int = 0, **fields: Any) -> Memory:
    """A memory created ``i`` seconds after BASE_TIME (fields override anything)."""
    created = BASE_TIME + timedelta(seconds=i)
    values: dict[str, Any] = {"content": f"memory number {i}", "created_at": created, "updated_at": created}
    values.update(fields)
    return Memory(**values)
