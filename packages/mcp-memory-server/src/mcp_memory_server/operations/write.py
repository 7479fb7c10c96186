"""Storing and updating a memory, once for the MCP tools, the CLI and the web UI.

A surface turns its input into a :class:`StoreRequest` or an :class:`UpdateRequest` and renders the
receipt (:mod:`.results`). Values stay loosely typed here on purpose: the engine checks them and
refuses a bad one in its own words, the same for every surface.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope

    from .results import StoreReceipt, UpdateReceipt


class _Fields(BaseModel):
    """What a store and an update share: left out (None), the engine's default or the old value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    metadata: dict[str, Any] | None = None
    type: str | None = None
    tags: Sequence[str] | None = None
    importance: float | None = None
    privacy_scope: str | None = None
    occurred_at: str | datetime | None = None


class StoreRequest(_Fields):
    """A new memory: in ``namespace`` (default: the scope's own), of conversation ``thread``."""

    pinned: bool = False
    namespace: str | None = None
    thread: str | None = None


class Refused(BaseModel):
    """A memory a write left alone: its ``id`` and why, in the words every surface uses."""

    model_config = ConfigDict(frozen=True)

    id: str
    reason: str


class BulkDeleteReceipt(BaseModel):
    """What deleting several memories did, each one on its own: the ``deleted`` ids, those that were
    ``already_deleted``, and the ``refused`` ones (missing, outside the scope, another user's)."""

    model_config = ConfigDict(frozen=True)

    deleted: list[str]
    already_deleted: list[str]
    refused: list[Refused]


class UpdateRequest(_Fields):
    """A new version of memory ``id``: its namespace and pin are kept."""

    id: str


def store(engine: MemoryEngine, scope: Scope, request: StoreRequest) -> StoreReceipt:
    """Store a memory; its receipt (stored / duplicate / superseded, and the similar memories)."""
    from .results import StoreReceipt  # defining the result models takes ~30 ms: after the handshake

    fields = request.model_dump(exclude={"content", "metadata"})
    return StoreReceipt.of(engine.store_memory(request.content, request.metadata, scope=scope, **fields))


def update(engine: MemoryEngine, scope: Scope, request: UpdateRequest) -> UpdateReceipt:
    """Replace a memory with a new version; its receipt (the new id and the superseded one)."""
    from .results import UpdateReceipt

    fields = request.model_dump(exclude={"id", "content", "metadata"})
    outcome = engine.update_memory(request.id, request.content, request.metadata, scope=scope, **fields)
    return UpdateReceipt.of(outcome)


def delete_many(engine: MemoryEngine, scope: Scope, ids: Sequence[str]) -> BulkDeleteReceipt:
    """Soft-delete each of ``ids`` (once each, in order) as ``delete_memory`` does; one the Scope
    refuses is listed with its reason and the others are still deleted."""
    from .errors import rule_for

    deleted: list[str] = []
    already: list[str] = []
    refused: list[Refused] = []
    for memory_id in dict.fromkeys(ids):
        try:
            outcome = engine.delete_memory(memory_id, scope=scope)
        except Exception as exc:
            rule = rule_for(exc)
            if rule is None:
                raise
            refused.append(Refused(id=memory_id, reason=rule.mcp_message(exc)))
            continue
        (already if outcome.status == "already_deleted" else deleted).append(memory_id)
    return BulkDeleteReceipt(deleted=deleted, already_deleted=already, refused=refused)
