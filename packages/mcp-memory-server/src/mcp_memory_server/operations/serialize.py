"""The receipts of a delete and a pin, as the JSON-able dicts the MCP tools and ``mcp-memory --json``
return (searching, listing, one memory and storing give the typed results of :mod:`.results`)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type hints only: importing this module must not import the core (numpy …)
    from mcp_memory_core.lifecycle import TTLPolicy
    from mcp_memory_core.models import DeleteOutcome, Memory


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def delete_receipt(outcome: DeleteOutcome) -> dict[str, Any]:
    """What delete_memory did: ``id``, ``status`` (deleted / already_deleted / purged) and
    ``success``; a purge also lists every removed version in ``purged``."""
    data: dict[str, Any] = {"id": outcome.memory.id, "status": outcome.status, "success": True}
    if outcome.status == "purged":
        data["purged"] = list(outcome.purged)
    return data


def pin_receipt(memory: Memory, ttl: TTLPolicy) -> dict[str, Any]:
    """What pin_memory did: ``id``, ``pinned`` and ``expires_at`` (null: never)."""
    return {"id": memory.id, "pinned": memory.pinned, "expires_at": iso(ttl.expires_at(memory))}
