"""Tidying, once for the CLI (``mcp-memory tidy``) and the web UI's tidy page: the proposals with
their reasons (:func:`propose`), and applying proposals made earlier (:func:`apply`), in the
caller's Scope. The rules and their checks are the engine's (``MemoryEngine.tidy_proposals`` /
``apply_tidy``); this module only carries them as typed results every surface renders, and back (a
proposal a page or a script shows is the one it hands back to apply).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.engine.tidy import TidyOutcome, TidyPlan, TidyProposal
    from mcp_memory_core.scope import Scope

Kind = Literal["expired", "junk", "superseded", "duplicates"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Link(_Model):
    """Two near-duplicates and the cosine similarity of their stored vectors."""

    a: str
    b: str
    similarity: float


class Proposal(_Model):
    """One proposed change and why. ``ids``: the memories concerned, oldest first (``contents`` in the
    same order); with ``keep``, the others become older versions of it, otherwise each is tombstoned.
    ``stamps``: each memory's ``updated_at`` when proposed (apply skips it if one changed)."""

    kind: Kind
    ids: list[str]
    keep: str | None = None
    reason: str
    stamps: list[str]
    links: list[Link] = []
    contents: list[str] = []

    @classmethod
    def of(cls, proposal: TidyProposal) -> Proposal:
        return cls(
            kind=proposal.kind,
            ids=list(proposal.ids),
            keep=proposal.keep,
            reason=proposal.reason,
            stamps=list(proposal.stamps),
            links=[Link(a=a, b=b, similarity=s) for a, b, s in proposal.similarities],
            contents=list(proposal.contents),
        )

    def to_engine(self) -> TidyProposal:
        from mcp_memory_core.engine.tidy import TidyProposal

        return TidyProposal(
            kind=self.kind,
            ids=tuple(self.ids),
            keep=self.keep,
            reason=self.reason,
            stamps=tuple(self.stamps),
            similarities=tuple((link.a, link.b, link.similarity) for link in self.links),
            contents=tuple(self.contents),
        )


class TidyReport(_Model):
    """The proposals, expired and junk first; ``counts`` per kind; ``examined``: the memories read;
    ``threshold``: the cosine similarity of near-duplicates; ``namespace``: what was read (None: the
    home namespaces)."""

    proposals: list[Proposal]
    counts: dict[str, int]
    examined: int
    threshold: float
    namespace: str | None

    @classmethod
    def of(cls, plan: TidyPlan, namespace: str | None) -> TidyReport:
        proposals = [Proposal.of(p) for p in plan.proposals]
        counts = {
            kind: sum(p.kind == kind for p in proposals)
            for kind in ("expired", "junk", "superseded", "duplicates")
        }
        return cls(
            proposals=proposals,
            counts=counts,
            examined=plan.examined,
            threshold=plan.threshold,
            namespace=namespace,
        )


class Skipped(_Model):
    """A proposal applying left alone, and why."""

    proposal: Proposal
    reason: str


class TidyApplied(_Model):
    """What applying did: ``folded`` (near-duplicates) and ``superseded`` (leftovers) map each kept
    memory to those that became its older versions; ``junk`` and ``expired`` the tombstoned ids;
    ``skipped`` the proposals left alone; ``counts`` of each."""

    folded: dict[str, list[str]]
    superseded: dict[str, list[str]]
    junk: list[str]
    expired: list[str]
    skipped: list[Skipped]
    counts: dict[str, int]

    @classmethod
    def of(cls, outcome: TidyOutcome) -> TidyApplied:
        return cls(
            folded=outcome.folded,
            superseded=outcome.superseded,
            junk=outcome.junk,
            expired=outcome.expired,
            skipped=[Skipped(proposal=Proposal.of(p), reason=why) for p, why in outcome.skipped],
            counts=outcome.counts,
        )


class ApplyRequest(_Model):
    """Proposals of :func:`propose` to apply, read in the same ``namespace``."""

    proposals: list[Proposal]
    namespace: str | None = None


def propose(engine: MemoryEngine, scope: Scope, namespace: str | None = None) -> TidyReport:
    """What could be tidied among the scope's own memories, with reasons; changes nothing."""
    return TidyReport.of(engine.tidy_proposals(scope=scope, namespace=namespace), namespace)


def apply(engine: MemoryEngine, scope: Scope, request: ApplyRequest) -> TidyApplied:
    """Apply the proposals that still hold; the receipt says what was done and what was skipped."""
    proposals = [p.to_engine() for p in request.proposals]
    return TidyApplied.of(engine.apply_tidy(proposals, scope=scope, namespace=request.namespace))
