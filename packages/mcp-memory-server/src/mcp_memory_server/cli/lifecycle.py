"""The lifecycle commands: ``gc`` (expired memories) and ``clear`` (a whole namespace)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..operations.read import namespaces
from .common import emit_json, local_scope, with_engine

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def gc(as_json: bool) -> None:
    """Tombstone every memory past its type's lifetime (pinned memories never expire)."""
    removed = with_engine(lambda engine: engine.sweep())
    if as_json:
        emit_json({"removed": removed})
        return
    click.echo(f"{removed} expired memories removed")


@click.command()
@click.option("--namespace", required=True, help="The namespace to empty.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def clear(namespace: str, yes: bool, as_json: bool) -> None:
    """Permanently delete every memory of a namespace: all versions and tombstones. No undo."""

    def run(engine: MemoryEngine) -> int:
        from mcp_memory_core.validation import validate_namespace

        name = validate_namespace(namespace)
        if not yes:
            current = namespaces(engine, local_scope(engine)).counts.get(name)
            held = "no current memories" if not current else f"{current} current memories"
            click.confirm(
                f"Permanently delete every memory in namespace {name!r} ({held}, plus their older "
                "versions and tombstones)? This cannot be undone",
                abort=True,
                err=True,
            )
        return engine.clear_namespace(name)

    purged = with_engine(run)
    if as_json:
        emit_json({"namespace": namespace.strip(), "purged": purged})
        return
    click.echo(f"{purged} memories purged from namespace {namespace.strip()!r}")
