"""The CLI's writes: ``add``, ``update``, ``forget``, ``pin`` and ``unpin``.

Each one is the MCP tool of the same job (store_memory, update_memory, delete_memory, pin_memory)
from a shell: the same engine call in the same Scope (the local user's, see ``common.local_scope``), and
the same receipt (``results.StoreReceipt`` & co.) printed as JSON with ``--json`` or as a sentence
saying what happened (stored, duplicate of X, superseded Y …). A refused write changes nothing and
is one line on stderr with exit status 1 (an unknown id, or another user's memory, which looks
exactly like an unknown one); a wrong command line is exit status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from ..operations.read import GetRequest, get
from ..operations.vocabulary import MEMORY_TYPES
from ..operations.write import StoreRequest, UpdateRequest, store, update
from .common import EXIT_USAGE, emit_json, fail, local_scope, one_line, with_engine

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine

    from ..operations.results import StoreReceipt

STDIN = "-"


def _content(text: str) -> str:
    """CONTENT, or stdin for ``-`` (its final newline dropped: ``echo … | mcp-memory add -``)."""
    if text != STDIN:
        return text
    return sys.stdin.read().rstrip("\r\n")


def _importance(text: str | None) -> float | None:
    """--importance as the engine wants it: a number (the engine checks the range, in its words)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        fail(f"importance must be a number from 0 to 1; got {text!r}.")


def _tags(given: tuple[str, ...]) -> list[str] | None:
    """--tags a,b (repeatable): every comma-separated piece, empty ones kept for the engine to refuse."""
    if not given:
        return None
    return [piece.strip() for value in given for piece in value.split(",")]


def _stdin_is_terminal() -> bool:
    from .display import is_terminal

    return is_terminal(sys.stdin)


def _options(*, pinned: bool, namespace: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options a write shares with store_memory (and, without --pinned and --namespace, with
    update_memory: a new version keeps its namespace and pin)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn = click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")(fn)
        if namespace:
            fn = click.option(
                "--namespace",
                default=None,
                metavar="NS",
                help="Store into this namespace ('user' for facts about you); default: the current project.",
            )(fn)
        fn = click.option(
            "--occurred-at",
            default=None,
            metavar="WHEN",
            help="When it happened or was said, ISO 8601 (2023-05-08, 2023-05-08T13:56:00Z); default: now.",
        )(fn)
        if pinned:
            fn = click.option("--pinned", is_flag=True, help="Never expires (whatever its type).")(fn)
        fn = click.option(
            "--importance", default=None, metavar="0-1", help="How much it matters, 0 to 1 (default 0.5)."
        )(fn)
        fn = click.option(
            "--tags",
            multiple=True,
            metavar="A,B",
            help="Labels, comma-separated (or repeat the option).",
        )(fn)
        return click.option(
            "--type",
            "memory_type",
            type=click.Choice(MEMORY_TYPES),
            default=None,
            help="semantic (facts: the default, kept forever), procedural (forever), episodic (90 days), "
            "working (48 hours).",
        )(fn)

    return decorate


# -- add -----------------------------------------------------------------------------------------------
def store_sentence(receipt: StoreReceipt) -> str:
    """store_memory's receipt, said in one sentence (the similar memories follow on their own lines),
    and what was redacted in another."""
    return _sentence(receipt) + redaction_sentence(receipt.redaction)


def _sentence(receipt: StoreReceipt) -> str:
    if receipt.status == "duplicate":
        return (
            f"Duplicate of {receipt.id}: the same content is already stored in namespace "
            f"{receipt.namespace!r}; nothing written."
        )
    if receipt.status == "superseded":
        return (
            f"Stored {receipt.id} in namespace {receipt.namespace!r}, superseding "
            f"{receipt.superseded} (MCP_MEMORY_CONFLICT_POLICY=supersede replaced that near-duplicate)."
        )
    return f"Stored {receipt.id} in namespace {receipt.namespace!r}."


def redaction_sentence(redaction: str | None) -> str:
    """`` Redacted 1 secret: an AWS access key in content (MCP_MEMORY_SECRETS=redact).``, or ''."""
    return f" {redaction[0].upper()}{redaction[1:]} (MCP_MEMORY_SECRETS=redact)." if redaction else ""


@click.command("add")
@click.argument("content")
@_options(pinned=True, namespace=True)
def add_command(
    content: str,
    memory_type: str | None,
    tags: tuple[str, ...],
    importance: str | None,
    pinned: bool,
    occurred_at: str | None,
    namespace: str | None,
    as_json: bool,
) -> None:
    """Store a new memory: CONTENT, or - to read it from stdin. Says whether it was stored, was a
    duplicate of a memory already stored (nothing written) or superseded one, and lists similar
    memories you may want to update instead."""
    request = StoreRequest(
        content=_content(content),
        type=memory_type,
        tags=_tags(tags),
        importance=_importance(importance),
        pinned=pinned,
        namespace=namespace,
        occurred_at=occurred_at,
    )
    receipt = with_engine(lambda engine: store(engine, local_scope(engine), request))
    if as_json:
        emit_json(receipt.full())
        return
    click.echo(store_sentence(receipt))
    others = [s for s in receipt.similar if s.id not in (receipt.id, receipt.superseded)]
    if others:
        click.echo("Similar memories (if one says the same in an older form: mcp-memory update ID CONTENT):")
        for similar in others:
            click.echo(
                f"  {similar.relation:<9} {similar.similarity:.3f}  {similar.id}  {one_line(similar.content, 60)}"
            )


# -- update --------------------------------------------------------------------------------------------
@click.command("update")
@click.argument("memory_id", metavar="ID")
@click.argument("content")
@_options(pinned=False, namespace=False)
def update_command(
    memory_id: str,
    content: str,
    memory_type: str | None,
    tags: tuple[str, ...],
    importance: str | None,
    occurred_at: str | None,
    as_json: bool,
) -> None:
    """Replace memory ID with a new version saying CONTENT (- reads it from stdin). The old version
    stays in its history and a search with its wording finds the new one. Only the current version
    can be updated; --type, --tags and --importance replace the old values, left out they are kept."""
    request = UpdateRequest(
        id=memory_id,
        content=_content(content),
        type=memory_type,
        tags=_tags(tags),
        importance=_importance(importance),
        occurred_at=occurred_at,
    )

    receipt = with_engine(lambda engine: update(engine, local_scope(engine), request))
    if as_json:
        emit_json(receipt.full())
        return
    click.echo(
        f"Updated {receipt.superseded}: the new version is {receipt.id}."
        + redaction_sentence(receipt.redaction)
    )


# -- forget --------------------------------------------------------------------------------------------
def delete_sentence(receipt: dict[str, Any]) -> str:
    """delete_memory's receipt, said in one sentence."""
    if receipt["status"] == "purged":
        count = len(receipt["purged"])
        versions = "1 version" if count == 1 else f"{count} versions"
        return f"Purged {receipt['id']}: {versions} removed for good (content, vectors, keyword index)."
    if receipt["status"] == "already_deleted":
        return f"{receipt['id']} was already forgotten: nothing changed."
    return (
        f"Forgot {receipt['id']}: it no longer appears in search or lists (its history stays; "
        "--hard purges it)."
    )


@click.command("forget")
@click.argument("memory_id", metavar="ID")
@click.option(
    "--hard",
    is_flag=True,
    help="Purge for good: the content, vectors and every version of the memory. No undo.",
)
@click.option("--yes", is_flag=True, help="With --hard: do not ask (required when stdin is not a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
def forget_command(memory_id: str, hard: bool, yes: bool, as_json: bool) -> None:
    """Delete memory ID: a tombstone by default (hidden from search and lists, history kept); --hard
    purges its whole chain, after asking (or with --yes)."""
    from ..operations.serialize import delete_receipt

    if hard and not yes and not _stdin_is_terminal():
        fail("forget --hard cannot ask for confirmation without a terminal: add --yes to purge.", EXIT_USAGE)

    def run(engine: MemoryEngine) -> dict[str, Any]:
        scope = local_scope(engine)
        if hard and not yes:
            shown = get(engine, scope, GetRequest(id=memory_id, history=True))  # an unknown id fails here
            versions = len(shown.history or [shown.memory])
            click.confirm(
                f"Purge {shown.memory.id} ({one_line(shown.memory.content, 50)!r}) and "
                f"{'its only version' if versions == 1 else f'all {versions} versions'} for good? "
                "This cannot be undone",
                abort=True,
                err=True,
            )
        return delete_receipt(engine.delete_memory(memory_id, hard=hard, scope=scope))

    receipt = with_engine(run)
    if as_json:
        emit_json(receipt)
        return
    click.echo(delete_sentence(receipt))


# -- pin / unpin ---------------------------------------------------------------------------------------
def _pin(memory_id: str, pinned: bool, as_json: bool) -> None:
    from ..operations.serialize import pin_receipt

    receipt = with_engine(
        lambda engine: pin_receipt(
            engine.pin_memory(memory_id, pinned, scope=local_scope(engine)), engine.ttl
        )
    )
    if as_json:
        emit_json(receipt)
        return
    if receipt["pinned"]:
        click.echo(f"Pinned {receipt['id']}: it never expires.")
    elif receipt["expires_at"] is None:
        click.echo(f"Unpinned {receipt['id']}: its type never expires anyway.")
    else:
        click.echo(f"Unpinned {receipt['id']}: it expires at {receipt['expires_at']}.")


@click.command("pin")
@click.argument("memory_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
def pin_command(memory_id: str, as_json: bool) -> None:
    """Pin memory ID (its current version) so it never expires."""
    _pin(memory_id, True, as_json)


@click.command("unpin")
@click.argument("memory_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
def unpin_command(memory_id: str, as_json: bool) -> None:
    """Unpin memory ID: it expires again with its type's lifetime (working 48 hours, episodic 90 days)."""
    _pin(memory_id, False, as_json)
