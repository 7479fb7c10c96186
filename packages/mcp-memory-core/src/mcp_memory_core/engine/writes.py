"""Writes: store (with duplicate detection), update (a new version at the head of the chain),
soft and hard delete, restore, pin, and clearing a namespace."""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, cast

from ..errors import MemoryStateError
from ..models import DeleteOutcome, Memory, PrivacyScope, SimilarMemory, StoreOutcome, UpdateOutcome
from ..protocols import Vector, WriteLocking
from ..scope import Scope
from ..secret_scan import Finding
from ..validation import (
    validate_content,
    validate_flag,
    validate_id,
    validate_importance,
    validate_metadata,
    validate_occurred_at,
    validate_privacy_scope,
    validate_tags,
    validate_thread,
    validate_type,
)
from .basis import PURGE_BATCH, EngineBasis
from .chains import Chains
from .passage_filler import Embedded, PassageFiller
from .store_groups import Found, NewMemory, StoreGroups, normalize_content

log = logging.getLogger(__name__)

DUPLICATE_CHECK_K = 5


class Writes:
    """Every change to a memory; the facade documents each call."""

    def __init__(self, basis: EngineBasis, chains: Chains, passages: PassageFiller) -> None:
        self._basis = basis
        self._chains = chains
        self._passages = passages
        # Concurrent stores written in one transaction, where the store's transactions exclude each
        # other (see store_groups); elsewhere each store has its own.
        self._groups = StoreGroups(self, basis.store) if basis.store.capabilities.group_commit else None
        self._write_locking = isinstance(basis.store, WriteLocking)  # once: a protocol check costs µs

    def store(
        self,
        content: str,
        metadata: Mapping[str, Any] | None,
        fields: Mapping[str, Any],
        occurred_at: datetime | str | None,
        thread: str | None,
        scope: Scope,
    ) -> StoreOutcome:
        """``fields``: the optional type, tags, importance, pinned, namespace and privacy scope, as given."""
        basis = self._basis
        when = validate_occurred_at(occurred_at, basis.clock())
        checked: dict[str, Any] = {
            "content": validate_content(content, basis.limits.content_bytes),
            "metadata": validate_metadata(metadata, basis.limits.metadata_bytes),
            "namespace": scope.write_namespace(fields.get("namespace")),
            "pinned": validate_flag(fields.get("pinned", False), "pinned"),
            "owner": scope.principal,
            "privacy_scope": validate_privacy_scope(fields.get("privacy_scope")) or PrivacyScope.PRIVATE,
        }
        if when is not None:
            checked["occurred_at"] = when
        if thread is not None:
            checked["thread"] = validate_thread(thread)
        checked.update(optional_fields(fields.get("type"), fields.get("tags"), fields.get("importance")))
        redacted = self._screen(checked)  # before anything is embedded or written
        if basis.context is not None and "context" not in checked["metadata"]:
            checked["metadata"]["context"] = dict(basis.context)
        basis.ready()
        new = NewMemory(checked, self._passages.embed(checked["content"]), when, scope)
        outcome = self._groups.write(new) if self._groups is not None else self.write_alone(new)
        self._passages.written(new.embedded)
        return dataclasses.replace(outcome, redacted=redacted) if redacted else outcome

    def _screen(self, fields: dict[str, Any]) -> tuple[Finding, ...]:
        """Apply the secret policy to a write's checked ``fields`` in place (content, metadata, tags,
        thread): its secrets replaced by placeholders, or :class:`SecretRefusedError`. What was redacted."""
        screened = self._basis.secrets.screen(
            fields["content"], fields.get("metadata"), fields.get("tags"), fields.get("thread")
        )
        if screened.findings:
            fields["content"] = screened.content
            for name in ("metadata", "tags", "thread"):
                if name in fields:
                    fields[name] = getattr(screened, name)
        return screened.findings

    @property
    def dedup_threshold(self) -> float:
        return self._basis.dedup_threshold

    def write_alone(self, new: NewMemory) -> StoreOutcome:
        """Check ``new`` for duplicates and write it, in one transaction of its own."""
        store = self._basis.store
        # The check and the write in one transaction: another thread or process storing the same
        # text waits for this one's commit, then finds it (the embedding is done before, unlocked).
        # A store whose transactions do not exclude each other (PostgreSQL) locks the text instead.
        with store.transaction():
            if self._write_locking:
                fields = new.fields
                cast(WriteLocking, store).write_lock(
                    json.dumps(
                        [new.scope.principal, fields["namespace"], normalize_content(fields["content"])]
                    )
                )
            return self.write_checked(new, self.check(new))

    def check(self, new: NewMemory) -> Found:
        """What is stored already that ``new`` duplicates or resembles (:meth:`near_duplicates`)."""
        fields = new.fields
        return self.near_duplicates(
            fields["content"], new.embedded.vectors[0], fields["namespace"], new.scope, new.when
        )

    def write_checked(self, new: NewMemory, found: Found) -> StoreOutcome:
        """Write ``new`` as :meth:`check` found the store (inside the transaction that checked it)."""
        fields, (duplicate, similar) = new.fields, found
        if duplicate is not None:
            log.info("store_memory: duplicate of %s, nothing written", duplicate.id)
            return StoreOutcome(memory=duplicate, status="duplicate", similar=similar)
        closest = self.superseding(found)
        if closest is not None:
            target = closest.memory
            log.info(
                "store_memory: conflict policy 'supersede' replaces %s (similarity %.3f)",
                target.id,
                closest.similarity,
            )
            changes = {k: v for k, v in fields.items() if k not in ("content", "namespace", "owner")}
            outcome = self.new_version(target.id, fields["content"], changes, new.embedded, new.scope)
            return StoreOutcome(
                memory=outcome.memory, status="superseded", similar=similar, superseded=outcome.superseded
            )
        now = self._basis.clock()
        memory = Memory(**{"occurred_at": now, **fields}, created_at=now, updated_at=now)
        self._basis.store.insert([memory], new.embedded.vectors, new.embedded.owners)
        self._passages.mark(memory.id, new.embedded)
        return StoreOutcome(memory=memory, status="stored", similar=similar)

    def superseding(self, found: Found) -> SimilarMemory | None:
        """The memory a store replaces under the conflict policy 'supersede' (None: it replaces none)."""
        if self._basis.conflict_policy != "supersede":
            return None
        return next((s for s in found[1] if s.relation == "duplicate"), None)

    def near_duplicates(
        self, content: str, vector: Vector, namespace: str, scope: Scope, occurred: datetime | None = None
    ) -> Found:
        """The principal's current memory with the same normalized content (if any; with
        ``occurred``, one that occurred the same UTC day), and the principal's current memories at or
        above the dedup threshold, most similar first, each ``duplicate`` at or above the duplicate
        threshold and ``related`` below it. Other users' memories never count: they are not the
        principal's to update."""
        basis = self._basis
        where = scope.owning(namespace, include_superseded=False)
        pairs = basis.store.knn(vector, DUPLICATE_CHECK_K, where)
        found = basis.store.get([memory_id for memory_id, _ in pairs])
        now = basis.clock()
        wanted = normalize_content(content)
        similar = []
        for memory_id, similarity in pairs:
            memory = found.get(memory_id)
            if memory is None or basis.ttl.is_expired(memory, now):
                continue
            if normalize_content(memory.content) == wanted and (
                occurred is None or _same_day(memory.occurred_at, occurred)
            ):
                return memory, []
            if similarity >= basis.dedup_threshold:
                relation = "duplicate" if similarity >= basis.duplicate_threshold else "related"
                similar.append(SimilarMemory(memory=memory, similarity=float(similarity), relation=relation))
        return None, similar

    def update(
        self,
        memory_id: str,
        content: str,
        metadata: Mapping[str, Any] | None,
        fields: Mapping[str, Any],
        occurred_at: datetime | str | None,
        scope: Scope,
    ) -> UpdateOutcome:
        """``fields``: the optional type, tags, importance and privacy scope, as given."""
        basis = self._basis
        memory_id = validate_id(memory_id)
        changes = optional_fields(fields.get("type"), fields.get("tags"), fields.get("importance"))
        changes["content"] = validate_content(content, basis.limits.content_bytes)
        if metadata is not None:
            changes["metadata"] = validate_metadata(metadata, basis.limits.metadata_bytes)
        if (privacy := validate_privacy_scope(fields.get("privacy_scope"))) is not None:
            changes["privacy_scope"] = privacy
        if (when := validate_occurred_at(occurred_at, basis.clock())) is not None:
            changes["occurred_at"] = when
        redacted = self._screen(changes)
        content = changes.pop("content")
        basis.ready()
        self._chains.require_current(basis.owned(memory_id, scope, "update"), "update", scope)
        embedded = self._passages.embed(content)
        outcome = self.new_version(memory_id, content, changes, embedded, scope)
        self._passages.written(embedded)
        return dataclasses.replace(outcome, redacted=redacted) if redacted else outcome

    def new_version(
        self,
        memory_id: str,
        content: str,
        changes: Mapping[str, Any],
        embedded: Embedded,
        scope: Scope,
    ) -> UpdateOutcome:
        store = self._basis.store
        with store.transaction():
            old = self._basis.owned(memory_id, scope, "update")  # re-read under the write lock: no fork
            self._chains.require_current(old, "update", scope)
            now = self._basis.clock()
            new = old.model_copy(
                update={
                    "occurred_at": now,
                    **changes,
                    "id": str(uuid.uuid4()),
                    "content": content,
                    "created_at": now,
                    "updated_at": now,
                    "access_count": 0,
                    "last_accessed": None,
                }
            )
            store.insert([new], embedded.vectors, embedded.owners)
            self._passages.mark(new.id, embedded)
            store.update_fields(old.id, {"superseded_by": new.id, "updated_at": now})
        superseded = old.model_copy(update={"superseded_by": new.id, "updated_at": now})
        return UpdateOutcome(memory=new, superseded=superseded)

    def delete(self, memory_id: str, hard: bool, scope: Scope) -> DeleteOutcome:
        basis, store = self._basis, self._basis.store
        memory_id = validate_id(memory_id)
        hard = validate_flag(hard, "hard")
        basis.ready()
        if hard:
            with store.transaction():
                memory = basis.owned(memory_id, scope, "delete")
                chain = [m for m in self._chains.chain_of(memory, scope) if scope.can_change(m)]
                store.purge([m.id for m in chain])
            return DeleteOutcome(memory=memory, status="purged", head_id=None, purged=[m.id for m in chain])
        with store.transaction():
            memory = basis.owned(memory_id, scope, "delete")
            if memory.is_deleted:
                return DeleteOutcome(
                    memory=memory, status="already_deleted", head_id=self._chains.head_id(memory, scope)
                )
            now = basis.clock()
            store.update_fields(memory_id, {"deleted_at": now, "updated_at": now})
        deleted = memory.model_copy(update={"deleted_at": now, "updated_at": now})
        return DeleteOutcome(memory=deleted, status="deleted", head_id=self._chains.head_id(deleted, scope))

    def restore(self, memory_id: str, scope: Scope) -> Memory:
        basis = self._basis
        memory_id = validate_id(memory_id)
        basis.ready()
        with basis.store.transaction():
            memory = basis.owned(memory_id, scope, "restore")
            if not memory.is_deleted:
                raise MemoryStateError(f"Memory {memory_id} is not deleted; there is nothing to restore.")
            if basis.ttl.is_expired(memory, basis.clock()):
                raise MemoryStateError(
                    f"Memory {memory_id} expired (the lifetime of {memory.type} memories is over); "
                    "restored, it would expire again at once. Store its content again as a new memory."
                )
            now = basis.clock()
            basis.store.update_fields(memory_id, {"deleted_at": None, "updated_at": now})
        return memory.model_copy(update={"deleted_at": None, "updated_at": now})

    def pin(self, memory_id: str, pinned: bool, scope: Scope) -> Memory:
        basis = self._basis
        memory_id = validate_id(memory_id)
        pinned = validate_flag(pinned, "pinned")
        basis.ready()
        with basis.store.transaction():
            memory = basis.owned(memory_id, scope, "pin")
            self._chains.require_current(memory, "pin", scope)
            now = basis.clock()
            basis.store.update_fields(memory_id, {"pinned": pinned, "updated_at": now})
        return memory.model_copy(update={"pinned": pinned, "updated_at": now})

    def clear_namespace(self, namespace: str, scope: Scope) -> int:
        basis = self._basis
        name = scope.write_namespace(namespace)
        basis.ready()
        where = scope.owning(name, include_deleted=True, include_superseded=True)
        removed = 0
        while True:
            with basis.store.transaction():
                batch = basis.store.list(where, PURGE_BATCH)
                if not batch:
                    return removed
                removed += basis.store.purge([m.id for m in batch])


def _same_day(first: datetime, second: datetime) -> bool:
    return first.astimezone(UTC).date() == second.astimezone(UTC).date()


def optional_fields(type: str | None, tags: Iterable[str] | None, importance: float | None) -> dict[str, Any]:
    """The type, tags and importance given (None: not given), checked."""
    fields: dict[str, Any] = {}
    if (checked_type := validate_type(type)) is not None:
        fields["type"] = checked_type
    if (checked_tags := validate_tags(tags)) is not None:
        fields["tags"] = checked_tags
    if (checked_importance := validate_importance(importance)) is not None:
        fields["importance"] = checked_importance
    return fields
