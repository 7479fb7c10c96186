"""``mcp-memory tidy``: what could be tidied among your memories, each with its reason, and with
``--apply`` doing it (near-duplicates fold into version chains, junk and expired memories are
tombstoned: a chain's history and ``restore`` still see everything). The rules are the engine's;
the proposals and the receipt are :mod:`..operations.tidy`'s, printed as lines or with ``--json``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from .common import EXIT_USAGE, READ_NAMESPACE_HELP, emit_json, fail, local_scope, one_line, with_engine

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine

    from ..operations.tidy import Proposal, TidyApplied, TidyReport

COUNTED = {
    "expired": "expired",
    "junk": "junk",
    "superseded": "superseded leftovers",
    "duplicates": "near-duplicate clusters",
}
ACTIONS = {
    "duplicates": "near-duplicates: fold into a version chain",
    "superseded": "superseded leftover: fold into the chain that replaced it",
    "expired": "expired: tombstone",
    "junk": "junk: tombstone",
}


def _stdin_is_terminal() -> bool:
    from .display import is_terminal

    return is_terminal(sys.stdin)


def proposal_lines(proposal: Proposal) -> list[str]:
    """One proposal as lines: what it does, each memory (the one kept marked), and why."""
    lines = [f"{ACTIONS[proposal.kind]}"]
    for memory_id, content in zip(proposal.ids, proposal.contents, strict=False):
        mark = "keep" if memory_id == proposal.keep else ("fold" if proposal.keep else "    ")
        lines.append(f"  {mark} {memory_id}  {one_line(content, 70)!r}")
    for link in proposal.links:
        lines.append(f"  similarity {link.similarity:.3f}: {link.a[:8]} ~ {link.b[:8]}")
    lines.append(f"  why: {proposal.reason}")
    return lines


def report_text(report: TidyReport) -> str:
    where = report.namespace or "the current project and 'user'"
    if not report.proposals:
        return f"Nothing to tidy among {report.examined} memories ({where})."
    counted = ", ".join(f"{n} {COUNTED[kind]}" for kind, n in report.counts.items() if n)
    head = f"{len(report.proposals)} proposals among {report.examined} memories ({where}): {counted}."
    return "\n".join([head, *(line for p in report.proposals for line in ["", *proposal_lines(p)])])


def applied_text(applied: TidyApplied) -> str:
    counts = applied.counts
    lines = [
        f"Tidied: {counts['folded']} near-duplicates and {counts['superseded']} superseded leftovers "
        f"folded into version chains; {counts['junk']} junk and {counts['expired']} expired memories "
        f"tombstoned; {counts['skipped']} proposals skipped."
    ]
    for kind, chains in (("near-duplicates", applied.folded), ("leftovers", applied.superseded)):
        lines += [f"  {kind} folded into {head}: {', '.join(ids)}" for head, ids in chains.items()]
    for kind, ids in (("junk", applied.junk), ("expired", applied.expired)):
        if ids:
            lines.append(f"  {kind} tombstoned: {', '.join(ids)}")
    lines += [f"  skipped {s.proposal.kind} {', '.join(s.proposal.ids)}: {s.reason}" for s in applied.skipped]
    if applied.counts["skipped"] < sum(applied.counts.values()):
        lines.append("Nothing was purged: the web UI shows each chain's history and restores a tombstone.")
    return "\n".join(lines)


@click.command("tidy")
@click.option("--apply", "apply_", is_flag=True, help="Do what is proposed (after asking, or with --yes).")
@click.option("--yes", is_flag=True, help="With --apply: do not ask (required when stdin is not a terminal).")
@click.option("--namespace", default=None, metavar="NS", help=READ_NAMESPACE_HELP)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the proposals (and with --apply the receipt) as JSON."
)
def tidy_command(apply_: bool, yes: bool, namespace: str | None, as_json: bool) -> None:
    """Propose tidying your memories, with reasons: near-duplicate clusters, superseded leftovers,
    expired working memories not yet swept, junk (greetings, thanks, one-word replies). Pinned
    memories are never proposed. --apply folds duplicates into version chains and tombstones junk
    and expired memories: nothing is lost, and nothing else is touched."""
    from ..operations.tidy import ApplyRequest, apply, propose

    if apply_ and not yes and not _stdin_is_terminal():
        fail("tidy --apply cannot ask for confirmation without a terminal: add --yes to apply.", EXIT_USAGE)

    def run(engine: MemoryEngine) -> dict[str, Any]:
        scope = local_scope(engine)
        report = propose(engine, scope, namespace)
        result: dict[str, Any] = {"report": report}
        if apply_ and report.proposals:
            if not yes:
                click.echo(report_text(report), err=True)
                click.confirm(f"Apply these {len(report.proposals)} proposals?", abort=True, err=True)
            request = ApplyRequest(proposals=report.proposals, namespace=namespace)
            result["applied"] = apply(engine, scope, request)
        return result

    result = with_engine(run, create=False)
    report, applied = result["report"], result.get("applied")
    if as_json:
        data = report.model_dump()
        if apply_:
            data["applied"] = applied.model_dump() if applied is not None else None
        emit_json(data)
        return
    if applied is None:
        click.echo(report_text(report))
        return
    if yes:
        click.echo(report_text(report))
    click.echo(applied_text(applied))
