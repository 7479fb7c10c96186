"""``mcp-memory reindex`` (alias ``build-index``, seed 004's name): bring the store's vectors to the
configured embedder, the way out after a model change (the server refuses to compare two models).

What it does depends on what the store can (its capabilities, not its module):

- ``derived_index`` (a markdown vault): the configured model's index is built, or caught up, from the
  store's own data; each model has its own index, so servers still on another model keep theirs
  (listed, to delete once no server uses them). ``--rebuild`` deletes this model's index first (a
  damaged one; stop the servers using it first).
- ``reembed`` (sqlite-vec, PostgreSQL): every memory is re-embedded in place, batch by batch (each committed: an
  interrupted run goes on where it stopped when run again), while servers on the old model keep
  working; at the end one transaction switches the whole file to the new model, and those servers
  then answer that it was re-embedded (restart them with the new embedder).
- anything else: one sentence on how to move the memories instead (export, then import).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from ..operations.errors import EXIT_INTERRUPTED
from .common import EXIT_ERROR, emit_json, expected_errors, fail, load_settings, path_option, use_vault


def _reindex(path: Path | None, *, rebuild: bool, batch_size: int, as_json: bool) -> None:
    from mcp_memory_core.protocols import Refreshing

    from ..runtime.assembly import build_engine
    from .display import progress

    use_vault(path)
    settings = load_settings().model_copy(update={"create_database": False})
    with expected_errors():
        engine = build_engine(settings)
        try:
            capabilities = engine.store.capabilities
            started = time.perf_counter()
            if capabilities.derived_index and isinstance(engine.store, Refreshing):
                result = _index(engine, rebuild=rebuild, quiet=as_json, progress=progress)
            elif capabilities.reembed:
                if rebuild:
                    fail(
                        "--rebuild is for a store whose index is derived from its own data (a vault): "
                        f"the {settings.store!r} store re-embeds its memories in place.",
                        EXIT_ERROR,
                    )
                result = _reembed(engine, batch_size=batch_size, quiet=as_json, progress=progress)
            else:
                fail(
                    f"The {settings.store!r} store cannot re-embed its memories in place: export them with "
                    "the old embedder (`mcp-memory export --all-namespaces -o memories.jsonl`) and import "
                    "them into an empty store with the new one (`mcp-memory import memories.jsonl`).",
                    EXIT_ERROR,
                )
            result["seconds"] = round(time.perf_counter() - started, 3)
        finally:
            engine.close()
    if as_json:
        emit_json(result)
        return
    _say(result)


def _index(engine: Any, *, rebuild: bool, quiet: bool, progress: Any) -> dict[str, Any]:
    from mcp_memory_core.protocols import IndexRebuilding

    store = engine.store
    engine.open()
    if rebuild:
        engine.close()
        store.reset_index()
    engine.embedder.load()
    with progress("Indexing notes", quiet=quiet) as report_progress:
        report = engine.refresh(report_progress)
    rebuildable = isinstance(store, IndexRebuilding)
    here = Path(store.index_path) if rebuildable else None
    others = [p for p in (store.index_files() if rebuildable else []) if p != here]
    return {
        "kind": "index",
        "location": store.location,
        "model": engine.embedder.model_id,
        "indexed": report.indexed,
        "updated": report.updated,
        "removed": report.removed,
        "skipped": len(report.problems),
        "problems": [str(problem) for problem in report.problems],
        "redacted": [str(note) for note in getattr(report, "redacted", [])],
        "other_indexes": [{"file": str(p), "bytes": p.stat().st_size if p.exists() else 0} for p in others],
    }


def _reembed(engine: Any, *, batch_size: int, quiet: bool, progress: Any) -> dict[str, Any]:
    done = [0, 0]

    def seen(count: int, total: int) -> None:
        done[:] = [count, total]
        report_progress(count, total)

    try:
        with progress("Re-embedding memories", quiet=quiet) as report_progress:
            outcome = engine.reindex(batch_size=batch_size, progress=seen)
    except KeyboardInterrupt:
        fail(
            f"Interrupted: {done[0]} of {done[1]} memories have vectors of {engine.embedder.model_id} "
            "(kept). Run `mcp-memory reindex` again to go on; until it finishes the store keeps "
            "answering with the old model.",
            EXIT_INTERRUPTED,
        )
    return {
        "kind": "reembed",
        "location": engine.store.location,
        "previous": outcome.previous,
        "model": outcome.model_id,
        "embedded": outcome.embedded,
    }


def _say(result: dict[str, Any]) -> None:
    seconds = result["seconds"]
    if result["kind"] == "reembed":
        if result["previous"] is None:
            click.echo(f"{result['location']} holds vectors of {result['model']}: nothing to re-embed.")
            return
        click.echo(
            f"Re-embedded {result['embedded']} memories of {result['location']} in {seconds:.1f} s: "
            f"{result['previous']} -> {result['model']}. Servers still running with the old embedder "
            "now refuse to search or store: restart them with the new one configured."
        )
        return
    click.echo(
        f"Indexed {result['indexed']} notes of {result['location']} with {result['model']} in "
        f"{seconds:.1f} s ({result['updated']} changed without new text, {result['removed']} removed)."
    )
    if result["problems"]:
        click.echo(f"Skipped {result['skipped']} that are not memories:", err=True)
        for problem in result["problems"]:
            click.echo(f"  {problem}", err=True)
    if result["redacted"]:
        click.echo(
            f"Indexed {len(result['redacted'])} with placeholders in place of secrets "
            "(MCP_MEMORY_SECRETS=redact; the notes themselves are unchanged):",
            err=True,
        )
        for note in result["redacted"]:
            click.echo(f"  {note}", err=True)
    if result["other_indexes"]:
        files = ", ".join(
            f"{Path(item['file']).name} ({item['bytes'] / 1e6:.1f} MB)" for item in result["other_indexes"]
        )
        click.echo(
            f"Indexes of other embedding models stay for servers still using them: {files}. "
            "Delete them once no server uses those models."
        )


def _options(fn: Any) -> Any:
    fn = click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")(fn)
    fn = click.option(
        "--batch-size",
        type=click.IntRange(1, 4096),
        default=64,
        show_default=True,
        help="Memories embedded and committed together (re-embedding in place).",
    )(fn)
    fn = click.option(
        "--rebuild",
        is_flag=True,
        help="A vault: delete this model's index and build it again from the notes (stop servers "
        "using the vault first).",
    )(fn)
    return path_option(fn)


@click.command("reindex")
@_options
def reindex_command(path: Path | None, rebuild: bool, batch_size: int, as_json: bool) -> None:
    """Bring every vector to the configured embedder (after a model change). A vault: build this
    model's index from the notes. sqlite-vec, PostgreSQL: re-embed every memory in place, resumable
    (run it again after an interrupt), while servers on the old model keep working until the switch."""
    _reindex(path, rebuild=rebuild, batch_size=batch_size, as_json=as_json)


@click.command("build-index", hidden=True)
@_options
def build_index_command(path: Path | None, rebuild: bool, batch_size: int, as_json: bool) -> None:
    """The same as reindex (seed 004's name)."""
    _reindex(path, rebuild=rebuild, batch_size=batch_size, as_json=as_json)
