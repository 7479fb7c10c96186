"""``mcp-memory init`` and ``mcp-memory reindex`` (alias ``build-index``), and ``--path``: seed 004's
commands for a markdown vault.

``--path DIR`` means ``MCP_MEMORY_STORE=markdown MCP_MEMORY_VAULT=DIR`` (the store of the
``mcp-memory-markdown`` plugin). The commands go through the store's optional methods, not its
module: ``initialize()`` (create an empty store's layout) and ``reset_index()`` + the engine's
``refresh`` (rebuild a derived index), so another plugin's store can offer them too.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from .cli import EXIT_ERROR, cli, emit_json, expected_errors, fail, load_settings, path_option, use_vault


@cli.command("init")
@path_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the location and what was created.")
def init_command(path: Path | None, as_json: bool) -> None:
    """Create a new store's layout: for a vault, its entity folders and .mcp-memory.yaml (nothing
    is overwritten; no model is loaded)."""
    from .assembly import built, load_plugins

    use_vault(path)
    settings = load_settings()
    with expected_errors():
        spec = load_plugins(settings).store(settings.store)
        store = built("store", spec, settings)
        initialize = getattr(store, "initialize", None)
        if not callable(initialize):
            fail(f"The store {settings.store!r} needs no init: it creates its database on first use.")
        created: list[str] = initialize()
    where = getattr(store, "location", "?")
    if as_json:
        emit_json({"location": str(where), "created": created})
        return
    if created:
        click.echo(f"Created in {where}: {', '.join(created)}.")
    else:
        click.echo(f"{where} is already set up: nothing to create.")
    click.echo(f"Serve it with: mcp-memory serve --path {where}")


def _reindex(path: Path | None, as_json: bool) -> None:
    from .assembly import build_engine

    use_vault(path)
    settings = load_settings().model_copy(update={"create_database": False})
    with expected_errors():
        engine = build_engine(settings)
        try:
            reset = getattr(engine.store, "reset_index", None)
            if not callable(reset) or not callable(getattr(engine.store, "refresh", None)):
                fail(
                    f"The store {settings.store!r} keeps no index derived from other data: nothing to rebuild.",
                    EXIT_ERROR,
                )
            reset()
            started = time.perf_counter()
            engine.embedder.load()
            report = _rebuild(engine, show=not as_json)
            seconds = time.perf_counter() - started
        finally:
            engine.close()
    problems = [str(problem) for problem in report.problems]
    if as_json:
        emit_json(
            {
                "location": engine.store.location,
                "indexed": report.indexed,
                "skipped": len(problems),
                "problems": problems,
                "seconds": round(seconds, 3),
            }
        )
        return
    click.echo(
        f"Indexed {report.indexed} notes of {engine.store.location} with {engine.embedder.model_id} "
        f"in {seconds:.1f} s."
    )
    if problems:
        click.echo(f"Skipped {len(problems)} that are not memories:", err=True)
        for problem in problems:
            click.echo(f"  {problem}", err=True)


def _rebuild(engine: Any, *, show: bool) -> Any:
    """``engine.refresh`` with a progress line on stderr (redrawn in place on a terminal)."""
    if not show:
        return engine.refresh()
    live = sys.stderr.isatty()
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        rate = done / max(time.perf_counter() - started, 1e-9)
        line = f"Embedding notes: {done}/{total} ({rate:.0f}/s)"
        if live:
            click.echo(f"\r{line}", nl=done >= total, err=True)
        elif done >= total or done % 2048 == 0:
            click.echo(line, err=True)

    return engine.refresh(progress)


@cli.command("reindex")
@path_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def reindex_command(path: Path | None, as_json: bool) -> None:
    """Rebuild the store's derived index from its data with the configured embedder: a vault's
    index from its notes (after a model change, or to check a copied vault). The notes are not
    changed; an interrupted rebuild keeps what it did and the next call goes on."""
    _reindex(path, as_json)


@cli.command("build-index", hidden=True)
@path_option
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def build_index_command(path: Path | None, as_json: bool) -> None:
    """The same as reindex (seed 004's name)."""
    _reindex(path, as_json)
