"""``mcp-memory init``, the command that creates a markdown vault (``reindex``/``build-index``
live in :mod:`.reindex`, for every store).

``--path DIR`` means ``MCP_MEMORY_STORE=markdown MCP_MEMORY_VAULT=DIR`` (the store of the
``mcp-memory-markdown`` plugin). The command goes through the store's optional ``initialize()``
(create an empty store's layout), not its module, so another plugin's store can offer it too.
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import emit_json, expected_errors, fail, load_settings, path_option, use_vault


@click.command("init")
@path_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the location and what was created.")
def init_command(path: Path | None, as_json: bool) -> None:
    """Create a new store's layout: for a vault, its entity folders and .mcp-memory.yaml (nothing
    is overwritten; no model is loaded)."""
    from mcp_memory_core.protocols import LayoutInitializing

    from ..runtime.assembly import built_store, load_plugins

    use_vault(path)
    settings = load_settings()
    with expected_errors():
        spec = load_plugins(settings).store(settings.store)
        store = built_store(spec, settings)
        if not isinstance(store, LayoutInitializing):
            fail(f"The store {settings.store!r} needs no init: it creates its database on first use.")
        try:
            created: list[str] = store.initialize()
        except OSError as exc:  # /proc, a read-only mount, a file where a folder should be
            fail(
                f"cannot create the store's layout in {store.location}: "
                f"{exc.strerror or exc} ({exc.filename}); choose a folder you can write (--path DIR)."
            )
    where = store.location
    if as_json:
        emit_json({"location": str(where), "created": created})
        return
    if created:
        click.echo(f"Created in {where}: {', '.join(created)}.")
    else:
        click.echo(f"{where} is already set up: nothing to create.")
    click.echo(f"Serve it with: mcp-memory serve --path {where}")
