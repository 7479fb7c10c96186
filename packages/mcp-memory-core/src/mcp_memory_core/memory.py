"""A memory and the words it is described in: its types, privacy scopes, ids and who may read it.

A memory is immutable in content: an update creates a new memory and points the old one at it
(``superseded_by``), so the old wording stays searchable and resolves to the current truth.
A soft delete is a tombstone: ``deleted_at`` is set, the row and its vector stay, and the memory
never appears in search again.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .vocabulary import MemoryType as MemoryType
from .vocabulary import PrivacyScope as PrivacyScope

DEFAULT_NAMESPACE = "default"
# Every user's personal namespace: preferences and facts about the person, readable from every project.
USER_NAMESPACE = "user"
# The principal of a server used by one person (stdio, the CLI): they own the file and what it holds.
LOCAL_USER = "local"


def utcnow() -> datetime:
    """The current time, timezone-aware UTC (the only kind of datetime mcp-memory stores)."""
    return datetime.now(UTC)


def new_memory_id() -> str:
    return str(uuid.uuid4())


# uuid5 namespace of every id an import derives (fixed forever: changing it breaks idempotency).
IMPORT_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://mcp-memory/import")


def derived_id(*parts: str) -> str:
    """A deterministic memory id from a source's own identifiers (uuid5; stable across versions)."""
    return str(uuid.uuid5(IMPORT_ID_NAMESPACE, json.dumps(list(parts), ensure_ascii=False)))


class Memory(BaseModel):
    """One stored memory (one version of a fact).

    ``superseded_by`` holds the id of the newer version, or ``None`` for the head of a chain.
    ``deleted_at`` is the tombstone: set by a soft delete, ``None`` while the memory is live.
    ``owner`` is the user who stored it (every version of a chain has the same owner) and
    ``privacy_scope`` who else may read it.
    ``occurred_at`` is when the remembered thing happened or was said (``created_at`` when not
    given: a memory stored during the conversation it comes from); ``thread`` groups the memories of
    one conversation (by default the MCP session that stored them), so a memory can be read with its
    neighbours.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=new_memory_id)
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    superseded_by: str | None = None
    deleted_at: datetime | None = None
    namespace: str = DEFAULT_NAMESPACE
    type: MemoryType = MemoryType.SEMANTIC
    tags: tuple[str, ...] = ()
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    pinned: bool = False
    access_count: int = Field(default=0, ge=0)
    last_accessed: datetime | None = None
    owner: str = LOCAL_USER
    privacy_scope: PrivacyScope = PrivacyScope.PRIVATE
    occurred_at: datetime = Field(default=None, validate_default=False)  # type: ignore[assignment]
    thread: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _occurred_defaults_to_created(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("occurred_at") is None:
            created = data.get("created_at")
            if created is None:
                created = utcnow()
                data = {**data, "created_at": created, "updated_at": data.get("updated_at") or created}
            data = {**data, "occurred_at": created}
        return data

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def is_current(self) -> bool:
        """True for the live head of a chain: not superseded and not deleted."""
        return self.superseded_by is None and self.deleted_at is None


MetadataValue = str | int | float | bool | None


@dataclass(frozen=True)
class Visibility:
    """Which memories a user may read: their own, public ones, and team ones of their teammates
    (users who share at least one team with them). A store renders it as one condition."""

    principal: str
    teammates: frozenset[str] = frozenset()

    def allows(self, memory: Memory) -> bool:
        return (
            memory.owner == self.principal
            or memory.privacy_scope == PrivacyScope.PUBLIC
            or (memory.privacy_scope == PrivacyScope.TEAM and memory.owner in self.teammates)
        )
