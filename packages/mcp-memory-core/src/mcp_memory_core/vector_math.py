"""Cosine similarity of stored rows against one vector, where the engine compares vectors itself
rather than through the store's KNN."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .protocols import Vector


def cosines(rows: Vector, vector: Vector) -> npt.NDArray[np.float32]:
    """Each row's cosine similarity to ``vector`` (0 for a zero row or vector)."""
    matrix = np.asarray(rows, dtype=np.float32)
    one = np.asarray(vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(one))
    # A zero row or vector has a dot product of 0: divided by 1, its similarity is 0.
    similarity: npt.NDArray[np.float32] = (matrix @ one / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return similarity
