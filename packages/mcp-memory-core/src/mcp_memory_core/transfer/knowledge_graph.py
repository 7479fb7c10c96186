"""The official MCP memory server's knowledge graph (``memory.jsonl`` of
``@modelcontextprotocol/server-memory``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .. import surrogates
from ..errors import InvalidInputError
from ..models import (
    DEFAULT_NAMESPACE,
    Memory,
    MemoryType,
    derived_id,
    utcnow,
)
from ..validation import (
    DEFAULT_LIMITS,
    Limits,
    validate_namespace,
)
from .import_file import ImportFile, clip, numbered_lines, tag


def _string(data: Mapping[str, Any], key: str, number: int, kind: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(f"line {number}: the {kind} needs a non-empty string {key!r}.")
    return value.strip()


def parse_knowledge_graph(
    lines: Iterable[str],
    *,
    namespace: str = DEFAULT_NAMESPACE,
    now: datetime | None = None,
    memory_type: MemoryType = MemoryType.SEMANTIC,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportFile:
    """Memories from the official MCP memory server's ``memory.jsonl``: one semantic memory per
    entity observation (``"{name}: {observation}"``, tagged with the entity type) and one per relation
    (``"{from} {relation type} {to}"``, underscores read as spaces). The graph has no timestamps: every
    memory gets ``now``. Ids are uuid5 of (namespace, the entity and observation / the relation)."""
    namespace = validate_namespace(namespace)
    when = now if now is not None else utcnow()
    memories: dict[str, Memory] = {}
    origins: dict[str, str] = {}
    repaired = 0
    number = 0

    def add(memory: Memory) -> None:
        if memory.id not in memories:
            memories[memory.id] = memory
            origins[memory.id] = f"line {number}"

    for number, text in numbered_lines(lines):
        try:
            data, count = surrogates.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"line {number}: not JSON ({exc.msg}).") from None
        repaired += count
        if not isinstance(data, Mapping):
            raise InvalidInputError(f"line {number}: expected a JSON object.")
        kind = data.get("type")
        if kind == "entity":
            name = _string(data, "name", number, "entity")
            entity_type = data.get("entityType")
            entity_type = entity_type.strip() if isinstance(entity_type, str) else ""
            observations = data.get("observations", [])
            if not isinstance(observations, list) or not all(isinstance(o, str) for o in observations):
                raise InvalidInputError(
                    f"line {number}: the entity's 'observations' must be a list of strings."
                )
            for observation in observations:
                if not observation.strip():
                    continue
                content, clipped = clip(f"{name}: {observation.strip()}", limits.content_bytes)
                add(
                    Memory(
                        id=derived_id("mcp-knowledge-graph", namespace, "entity", name, observation.strip()),
                        content=content,
                        metadata={
                            "source": "mcp-knowledge-graph",
                            "entity": name,
                            "entity_type": entity_type,
                            **clipped,
                        },
                        created_at=when,
                        updated_at=when,
                        namespace=namespace,
                        type=memory_type,
                        tags=tag(entity_type),
                    )
                )
        elif kind == "relation":
            source = _string(data, "from", number, "relation")
            target = _string(data, "to", number, "relation")
            relation = _string(data, "relationType", number, "relation")
            content, clipped = clip(
                f"{source} {' '.join(relation.replace('_', ' ').split())} {target}", limits.content_bytes
            )
            add(
                Memory(
                    id=derived_id("mcp-knowledge-graph", namespace, "relation", source, relation, target),
                    content=content,
                    metadata={
                        "source": "mcp-knowledge-graph",
                        "from": source,
                        "relation_type": relation,
                        "to": target,
                        **clipped,
                    },
                    created_at=when,
                    updated_at=when,
                    namespace=namespace,
                    type=memory_type,
                    tags=("relation",),
                )
            )
        else:
            raise InvalidInputError(
                f"line {number}: unknown record type {kind!r}; a knowledge graph line has "
                '"type": "entity" or "relation".'
            )
    return ImportFile(list(memories.values()), origins, repaired)
