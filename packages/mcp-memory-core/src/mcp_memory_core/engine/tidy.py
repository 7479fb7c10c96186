"""Tidying: proposals to clean up the memories a scope may change, each with its reason, and
applying them so that nothing is lost (every change is a version chain or a tombstone).

What is proposed, among the scope's own current memories (never a pinned one) in the namespaces of
the call (the home namespaces by default, every readable one with ``"*"``):

- ``expired``: a memory past its type's lifetime (working 48 hours …) that no sweep has tombstoned
  yet; applying tombstones it as the sweep does (dated when it expired);
- ``junk``: a memory without content worth keeping (:func:`~..tidying.is_junk`); applying
  tombstones it (``restore`` brings it back);
- ``superseded``: a *superseded leftover*, a current memory with the same words
  (:func:`~..tidying.same_words`) as an older version of another chain in its namespace, stored
  before the update that replaced those words, while that chain's head is current: the value it
  states was replaced, and it was left behind. (Said after that update, it is the current truth
  again and is no leftover.) Applying makes it an older version of that head;
- ``duplicates``: a cluster of near-duplicates (:func:`~..tidying.duplicate_clusters` at the
  engine's ``duplicate_threshold``, on the stored vectors of their whole texts, never a minimal
  pair: an update or a different fact, which cosine cannot tell apart) of one namespace,
  type and privacy scope (episodic memories: also one day: the same words on another day are
  another event). Applying keeps the newest as the head and makes the others its older versions,
  one after the other, oldest first (each points at the next), so ``history`` of any of them shows
  them all and a search on their wording finds the head.

A memory is in one proposal at most (in that order of precedence). Applying takes proposals made
earlier: it computes the proposals again and applies only those still proposed as they were (same
memories, none changed since: each memory's ``updated_at`` is part of the proposal), checking each
again inside its write transaction; any other one is skipped and the outcome says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from ..errors import MemoryNotFoundError, NotOwnerError
from ..models import Memory, MemoryType
from ..protocols import VectorReading
from ..scope import Scope
from ..tidying import duplicate_clusters, is_junk, same_words
from .basis import EngineBasis
from .chains import Chains
from .reads import Reads

TidyKind = Literal["expired", "junk", "superseded", "duplicates"]
KINDS: tuple[TidyKind, ...] = get_args(TidyKind)  # precedence, and the order of apply
JUNK_REASON = (
    "no content worth keeping (a greeting, thanks, an acknowledgement, a one-word reply or a line "
    "without words): tombstoned, restorable"
)


@dataclass(frozen=True)
class TidyProposal:
    """One proposed change. ``ids``: the memories concerned, oldest first; with ``keep`` (duplicates,
    superseded) the others become older versions of ``keep``, otherwise each is tombstoned.
    ``stamps``: each memory's ``updated_at`` (ISO 8601) when proposed. ``similarities``: a duplicate
    cluster's links, (id, id, cosine similarity) at or above the threshold; ``contents``: what each
    memory says, in the order of ``ids``."""

    kind: TidyKind
    ids: tuple[str, ...]
    keep: str | None
    reason: str
    stamps: tuple[str, ...]
    similarities: tuple[tuple[str, str, float], ...] = ()
    contents: tuple[str, ...] = ()  # each memory's content, to show (not part of its identity)

    @property
    def changes(self) -> tuple[str, ...]:
        """The memories applying it changes (every one but ``keep``)."""
        return tuple(i for i in self.ids if i != self.keep)

    @property
    def identity(self) -> tuple[str, tuple[str, ...], str | None, tuple[str, ...]]:
        """What must be unchanged for an earlier proposal to be applied."""
        return (self.kind, self.ids, self.keep, self.stamps)


@dataclass(frozen=True)
class TidyPlan:
    """The proposals, in the order of :data:`KINDS`; ``examined``: the memories read to make them;
    ``threshold``: the cosine similarity of near-duplicates."""

    proposals: list[TidyProposal]
    examined: int
    threshold: float


@dataclass(frozen=True)
class TidyOutcome:
    """What applying did: ``folded`` (duplicates) and ``superseded`` (leftovers) map each head to the
    memories that became its older versions; ``junk`` and ``expired`` list the tombstoned ids;
    ``skipped`` each proposal left alone with why."""

    folded: dict[str, list[str]] = field(default_factory=dict)
    superseded: dict[str, list[str]] = field(default_factory=dict)
    junk: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    skipped: list[tuple[TidyProposal, str]] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return {
            "folded": sum(map(len, self.folded.values())),
            "junk": len(self.junk),
            "expired": len(self.expired),
            "superseded": sum(map(len, self.superseded.values())),
            "skipped": len(self.skipped),
        }


class Tidy:
    """``proposals`` and ``apply``; the facade documents each call."""

    def __init__(self, basis: EngineBasis, chains: Chains, reads: Reads) -> None:
        self._basis = basis
        self._chains = chains
        self._reads = reads

    def proposals(self, scope: Scope, namespace: str | None) -> TidyPlan:
        self._basis.ready()
        return self.current_plan(scope, namespace)

    def current_plan(self, scope: Scope, namespace: str | None) -> TidyPlan:
        """The proposals as the store is now (a hook point: apply recomputes them with this)."""
        basis = self._basis
        now = basis.clock()
        where = basis.read_filter(scope, namespace, owner=scope.principal)
        mine = [m for m in self._reads.each(where) if scope.can_change(m)]
        older = [m for m in mine if m.superseded_by is not None]
        heads = sorted(
            (m for m in mine if m.superseded_by is None and not m.pinned), key=lambda m: (m.created_at, m.id)
        )
        expired = [m for m in heads if basis.ttl.is_expired(m, now)]
        live = [m for m in heads if not basis.ttl.is_expired(m, now)]
        junk = [m for m in live if is_junk(m.content)]
        kept = [m for m in live if not is_junk(m.content)]
        leftovers = self._leftovers(kept, older, {m.id: m for m in mine})
        folded = {i for p in leftovers for i in p.changes}
        clusters = self._clusters([m for m in kept if m.id not in folded])
        proposals = [_expired(m, basis.ttl.expires_at(m) or now) for m in expired]
        proposals += [_proposal("junk", [m], None, JUNK_REASON) for m in junk]
        return TidyPlan(proposals + leftovers + clusters, len(mine), basis.duplicate_threshold)

    # -- the rules that need more than one memory --------------------------------------------------
    def _leftovers(
        self, current: list[Memory], older: list[Memory], known: dict[str, Memory]
    ) -> list[TidyProposal]:
        """Current memories with the words of an older version of another current chain, stored
        before the update that replaced those words."""
        versions: dict[tuple[str, str], list[Memory]] = {}
        for version in older:
            versions.setdefault((version.namespace, same_words(version.content)), []).append(version)
        if not versions:
            return []
        heads = self._chains.resolve_heads(older)
        alive = {m.id: m for m in current}
        proposals = []
        for memory in current:
            for version in versions.get((memory.namespace, same_words(memory.content)), []):
                head = alive.get(heads[version.id].id)
                successor = known.get(version.superseded_by or "")
                if head is None or head.id == memory.id or successor is None:
                    continue
                if memory.created_at < successor.created_at:
                    reason = (
                        f"the same words as {version.id}, an older version of {head.id} replaced on "
                        f"{successor.created_at:%Y-%m-%d}: a leftover of the old value, it becomes an "
                        f"older version of {head.id}"
                    )
                    proposals.append(_proposal("superseded", [memory, head], head, reason))
                    break
        return proposals

    def _clusters(self, memories: list[Memory]) -> list[TidyProposal]:
        threshold = self._basis.duplicate_threshold
        groups: dict[tuple[str, ...], list[Memory]] = {}
        for memory in memories:
            groups.setdefault(_comparable(memory), []).append(memory)
        proposals = []
        for group in groups.values():
            if len(group) < 2:
                continue
            by_id = {m.id: m for m in group}
            texts = [m.content for m in group]
            for cluster in duplicate_clusters(list(by_id), self._vectors(group), threshold, texts):
                members = [by_id[i] for i in cluster.members]
                keep = max(members, key=lambda m: (m.created_at, m.id))
                reason = (
                    f"{len(members)} near-duplicates (cosine similarity of their stored vectors ≥ "
                    f"{threshold:.2f}, and no two of them just one or two words apart): the newest, "
                    f"{keep.id}, stays current and the others become its older versions"
                )
                proposals.append(_proposal("duplicates", members, keep, reason, cluster.links))
        return proposals

    def _vectors(self, memories: Sequence[Memory]) -> npt.NDArray[np.float32]:
        """Each memory's whole-text vector: as stored, or embedded when the store cannot read it back."""
        store = self._basis.store
        found: dict[str, npt.NDArray[np.float32]] = {}
        if store.capabilities.read_vectors and isinstance(store, VectorReading):
            for memory_id, rows in store.vectors([m.id for m in memories]).items():
                found[memory_id] = np.asarray(rows, dtype=np.float32).reshape(
                    -1, self._basis.embedder.dimensions
                )[0]
        missing = [m for m in memories if m.id not in found]
        if missing:
            rows, owners = self._basis.embed([m.content for m in missing])
            firsts = range(len(missing)) if owners is None else [owners.index(i) for i in range(len(missing))]
            for memory, row in zip(missing, firsts, strict=True):
                found[memory.id] = np.asarray(rows[row], dtype=np.float32)
        matrix = np.stack([found[m.id] for m in memories])
        norms = np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        return np.asarray(matrix / norms, dtype=np.float32)

    # -- apply -------------------------------------------------------------------------------------
    def apply(self, proposals: Iterable[TidyProposal], scope: Scope, namespace: str | None) -> TidyOutcome:
        self._basis.ready()
        given = list({p.identity: p for p in proposals}.values())
        current = {p.identity for p in self.current_plan(scope, namespace).proposals}
        outcome = TidyOutcome()
        for proposal in sorted(given, key=lambda p: KINDS.index(p.kind) if p.kind in KINDS else len(KINDS)):
            if proposal.identity not in current:
                outcome.skipped.append((proposal, f"no longer proposed: {self._why_not(proposal, scope)}"))
                continue
            with self._basis.store.transaction():  # checked again under the write lock
                changed = self._changed(proposal, scope)
                if changed is None:
                    self._write(proposal, scope, outcome)
            if changed is not None:
                outcome.skipped.append((proposal, changed))
        return outcome

    def _member(self, memory_id: str, scope: Scope) -> Memory | None:
        try:
            return self._basis.owned(memory_id, scope, "tidy")
        except (MemoryNotFoundError, NotOwnerError):  # not this scope's to change: as if missing
            return None

    def _changed(self, proposal: TidyProposal, scope: Scope) -> str | None:
        """Why a proposal cannot be applied as it stands now (None: it can)."""
        for memory_id, stamp in zip(proposal.ids, proposal.stamps, strict=True):
            memory = self._member(memory_id, scope)
            if memory is None:
                return f"memory {memory_id} is missing"
            if memory.updated_at.isoformat() != stamp or memory.is_deleted or memory.superseded_by:
                return f"memory {memory_id} changed since the proposal"
        return None

    def _why_not(self, proposal: TidyProposal, scope: Scope) -> str:
        if len(proposal.ids) != len(proposal.stamps):
            return "the proposal is not one tidy made"
        return self._changed(proposal, scope) or "run tidy again to see the current proposals"

    def _write(self, proposal: TidyProposal, scope: Scope, outcome: TidyOutcome) -> None:
        basis = self._basis
        now = basis.clock()
        for memory_id, later in zip(proposal.ids, (*proposal.ids[1:], None), strict=True):
            if memory_id == proposal.keep:
                continue
            if proposal.keep is not None:  # one line, oldest first: each member's history shows them all
                successor = later if proposal.kind == "duplicates" else proposal.keep
                basis.store.update_fields(memory_id, {"superseded_by": successor, "updated_at": now})
            else:
                memory = basis.owned(memory_id, scope, "tidy")
                when = basis.ttl.expires_at(memory) if proposal.kind == "expired" else None
                basis.store.update_fields(memory_id, {"deleted_at": when or now, "updated_at": now})
        if proposal.kind == "duplicates" and proposal.keep is not None:
            outcome.folded.setdefault(proposal.keep, []).extend(proposal.changes)
        elif proposal.kind == "superseded" and proposal.keep is not None:
            outcome.superseded.setdefault(proposal.keep, []).extend(proposal.changes)
        elif proposal.kind == "expired":
            outcome.expired.extend(proposal.changes)
        else:
            outcome.junk.extend(proposal.changes)


def _comparable(memory: Memory) -> tuple[str, ...]:
    """What two near-duplicates share: namespace, type and privacy scope; episodic ones, the day too."""
    day = f"{memory.occurred_at:%Y-%m-%d}" if memory.type == MemoryType.EPISODIC else ""
    return (memory.namespace, str(memory.type), str(memory.privacy_scope), day)


def _proposal(
    kind: TidyKind,
    memories: Sequence[Memory],
    keep: Memory | None,
    reason: str,
    similarities: tuple[tuple[str, str, float], ...] = (),
) -> TidyProposal:
    ordered = sorted(memories, key=lambda m: (m.created_at, m.id))
    return TidyProposal(
        kind=kind,
        ids=tuple(m.id for m in ordered),
        keep=keep.id if keep is not None else None,
        reason=reason,
        stamps=tuple(m.updated_at.isoformat() for m in ordered),
        similarities=similarities,
        contents=tuple(m.content for m in ordered),
    )


def _expired(memory: Memory, expired_at: datetime) -> TidyProposal:
    reason = (
        f"a {memory.type} memory past its lifetime: it expired at {expired_at:%Y-%m-%d %H:%M} UTC and is "
        "hidden from search already, but no sweep has tombstoned it yet"
    )
    return _proposal("expired", [memory], None, reason)
