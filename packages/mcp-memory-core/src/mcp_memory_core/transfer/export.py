"""Export: every memory the scope's principal owns, as mcp-memory JSON Lines."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import StorageError
from ..models import (
    utcnow,
)
from ..scope import Scope

if TYPE_CHECKING:
    from ..engine import MemoryEngine
from .mcp_format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    VECTOR_BATCH,
    VECTORS_FORMAT_VERSION,
    ExportRecord,
    dumps,
    encode_vectors,
    format_datetime,
    utc,
)


def export_memories(
    engine: MemoryEngine,
    out: TextIO,
    *,
    namespace: str | None = None,
    now: datetime | None = None,
    scope: Scope | None = None,
    vectors: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Write every memory the scope's principal owns (of ``namespace``, or of every namespace when
    ``None``) to ``out`` as mcp-memory JSON Lines (version 1; version 2 with ``vectors``, carrying
    each memory's stored vectors); return how many were written. ``now`` fixes ``exported_at`` (for
    reproducible output); it defaults to the current time. ``progress(written, total)`` is called
    once the memories are read (0 written) and after every batch written (progress bars)."""
    memories = list(engine.iter_memories(namespace or "*", scope=scope))
    memories.sort(key=lambda m: (m.namespace, utc(m.created_at), m.id))
    header: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": VECTORS_FORMAT_VERSION if vectors else FORMAT_VERSION,
        "exported_at": format_datetime(now if now is not None else utcnow()),
        "count": len(memories),
    }
    if vectors:
        model = engine.memory_vectors([], scope=scope)  # fails here, before a line is written
        header["embedder"] = {"model": model.model_id, "dimensions": model.dimensions}
    out.write(dumps(header) + "\n")
    if progress is not None:
        progress(0, len(memories))
    for start in range(0, len(memories), VECTOR_BATCH):
        batch = memories[start : start + VECTOR_BATCH]
        rows = engine.memory_vectors([m.id for m in batch], scope=scope).rows if vectors else {}
        for memory in batch:
            record = ExportRecord.from_memory(memory)
            if vectors:
                if memory.id not in rows:
                    raise StorageError(f"Memory {memory.id} has no stored vector: the store is damaged.")
                record["vectors"] = encode_vectors(rows[memory.id])
            out.write(dumps(record) + "\n")
        if progress is not None:
            progress(start + len(batch), len(memories))
    return len(memories)
