"""The checks every store makes before a write, in one place so two stores refuse the same input with
the same sentence (StoreConformance asserts them): what an ``insert`` may hold, what an
``update_fields`` may change, and the rows a ``complete_passages`` adds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .models import Memory

F32 = npt.NDArray[np.float32]


def checked_insert(
    memories: Sequence[Memory], vectors: Any, owners: Sequence[int] | None, dims: int
) -> tuple[list[Memory], F32, list[int]]:
    """The memories, their vectors as a C-contiguous float32 ``(rows, dims)`` array, and the index of
    the memory that owns each row, after checking the insert:

    - without ``owners``, row i belongs to memory i (one vector per memory);
    - with ``owners`` (one entry per row), row i belongs to ``memories[owners[i]]``, and every memory
      needs at least one row;
    - vectors are finite and ``dims`` wide; ids are distinct within the batch.
    """
    memories = list(memories)
    array = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if array.ndim == 1 and len(memories) == 1 and owners is None:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[1] != dims:
        raise ValueError(f"insert needs a 2-d array of {dims}-d vectors: got vectors of shape {array.shape}")
    if owners is None:
        if array.shape[0] != len(memories):
            raise ValueError(
                f"insert needs one {dims}-d vector per memory when owners is not given: got "
                f"{len(memories)} memories and vectors of shape {array.shape}"
            )
        owner_list = list(range(len(memories)))
    else:
        owner_list = [_owner_index(o) for o in owners]
        if len(owner_list) != array.shape[0]:
            raise ValueError(
                f"owners needs one entry per vector row: got {len(owner_list)} owners for "
                f"{array.shape[0]} vectors"
            )
        bad = sorted({o for o in owner_list if not 0 <= o < len(memories)})
        if bad:
            raise ValueError(f"owners {bad[:5]} do not index the {len(memories)} memories")
        without = sorted(set(range(len(memories))) - set(owner_list))
        if without:
            raise ValueError(
                f"every memory needs at least one vector; memories at positions {without[:5]} have none"
            )
    if memories and not np.all(np.isfinite(array)):
        raise ValueError("vectors contain NaN or infinity")
    ids = [m.id for m in memories]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate memory ids in one insert")
    return memories, array, owner_list


def checked_rows(vectors: Any, dims: int) -> F32:
    """``complete_passages``' vectors as a C-contiguous float32 ``(rows, dims)`` array (rows may be
    0), or a ValueError saying what is wrong."""
    array = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if array.ndim != 2 or array.shape[1] != dims:
        raise ValueError(f"complete_passages needs {dims}-d rows: got vectors of shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("vectors contain NaN or infinity")
    return array


def check_update(memory_id: str, fields: Mapping[str, Any]) -> None:
    """``update_fields`` may set any Memory field but the id."""
    if "id" in fields and fields["id"] != memory_id:
        raise ValueError("update_fields cannot change a memory's id")
    unknown = set(fields) - set(Memory.model_fields)
    if unknown:
        raise ValueError(f"Unknown memory fields: {', '.join(sorted(unknown))}")


def updated(old: Memory, fields: Mapping[str, Any]) -> Memory:
    """``old`` with ``fields`` set, validated as a Memory (a bad value raises pydantic's error)."""
    return Memory.model_validate({**old.model_dump(), **dict(fields)})


def _owner_index(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"owners must be integer positions into memories; got {value!r}")
    return int(value)
