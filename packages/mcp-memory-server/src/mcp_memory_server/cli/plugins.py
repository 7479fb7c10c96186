"""``mcp-memory plugins``: every installed backend, the selected ones marked, and plugins that failed to load."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .common import emit_json, expected_errors, load_settings

if TYPE_CHECKING:
    from ..runtime.settings import ServerSettings


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def plugins(as_json: bool) -> None:
    """List installed plugins: every store, embedder, ranker, reranker and token table, and plugins that
    failed to load."""
    from ..runtime.assembly import load_plugins

    settings = load_settings()
    with expected_errors():
        manager = load_plugins(settings)
        rows = manager.backends()
    selected: dict[str, Any] = {
        "store": settings.store,
        "embedder": settings.embedder,
        "ranker": settings.ranker,
        "rerankers": list(settings.rerankers),
    }
    backends = [
        {
            "name": row.name,
            "kind": row.kind,
            "package": row.package,
            "version": row.version,
            "description": row.description,
            "selected": _selected(row.kind, row.name, settings, selected),
        }
        for row in rows
    ]
    failures = [
        {"entry_point": f.entry_point, "package": f.package, "error": f.error} for f in manager.failures
    ]
    if as_json:
        emit_json({"backends": backends, "failed": failures, "selected": selected})
        return
    headers = ("", "NAME", "KIND", "PACKAGE", "VERSION", "DESCRIPTION")
    table = [
        ("*" if b["selected"] else "", b["name"], b["kind"], b["package"], b["version"], b["description"])
        for b in backends
    ]
    widths = [max(len(str(r[i])) for r in [headers, *table]) for i in range(len(headers) - 1)]
    for row in [headers, *table]:
        cells = [str(cell).ljust(width) for cell, width in zip(row[:-1], widths, strict=True)]
        click.echo("  ".join([*cells, str(row[-1])]).rstrip())
    if not table:
        click.echo("No backends installed.")
    click.echo("(* = selected by the current settings)")
    for failure in failures:
        click.echo(f"FAILED  {failure['entry_point']} ({failure['package']}): {failure['error']}")


def _selected(kind: str, name: str, settings: ServerSettings, selected: dict[str, Any]) -> bool:
    if kind == "reranker":
        return name in settings.rerankers
    if kind == "token-table":  # used beside its store unless MCP_MEMORY_TOKENS_PATH names a file
        return name == settings.store and settings.tokens_path is None
    return bool(selected.get(kind) == name)
