"""The read commands: ``list``, ``search``, ``get`` and ``namespaces``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from ..operations.read import GetRequest, ListRequest, SearchRequest, get, list_page
from ..operations.read import namespaces as namespace_counts
from ..operations.read import search as search_memories
from .common import (
    READ_NAMESPACE_HELP,
    emit_json,
    limit_option,
    local_scope,
    namespace_option,
    one_line,
    with_engine,
)

if TYPE_CHECKING:
    pass


@click.command("list")
@limit_option(50, 1000, "Page size")
@click.option("--cursor", default=None, help="next_cursor of the previous page.")
@namespace_option(READ_NAMESPACE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(limit: int, cursor: str | None, namespace: str | None, as_json: bool) -> None:
    """List current memories, newest first."""
    from .display import stdout_is_terminal, table

    request = ListRequest(limit=limit, cursor=cursor, namespace=namespace)
    page = with_engine(lambda engine: list_page(engine, local_scope(engine), request), create=False)
    if as_json:
        emit_json(page.full(lifetime=False))
        return
    if not page.memories:
        click.echo("No memories." if not cursor else "No more memories.")
        return
    rows = [
        (m.id, m.created_at.isoformat()[:19].replace("T", " "), m.namespace, one_line(m.content, 80))
        for m in page.memories
    ]
    if stdout_is_terminal():
        table(("ID", "CREATED", "NAMESPACE", "CONTENT"), rows, wide=3)
    else:
        for row in rows:
            click.echo("  ".join(row))
    footer = f"{len(page.memories)} shown, {page.total} in total."
    if page.next_cursor:
        again = f" --namespace {namespace!r}" if namespace else ""
        footer += f" Next page: mcp-memory list --limit {limit}{again} --cursor {page.next_cursor}"
    click.echo(footer)


@click.command()
@click.argument("query")
@limit_option(10, 100, "Maximum results")
@namespace_option(READ_NAMESPACE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(query: str, limit: int, namespace: str | None, as_json: bool) -> None:
    """Search memories by meaning."""
    from .display import stdout_is_terminal, table

    request = SearchRequest(query=query, limit=limit, namespace=namespace)
    found = with_engine(lambda engine: search_memories(engine, local_scope(engine), request), create=False)
    hits, warnings = found.hits, found.warnings
    if as_json:
        results = [hit.full(lifetime=False) for hit in hits]
        emit_json({"results": results, "count": len(results), **({"warnings": warnings} if warnings else {})})
        return
    for warning in warnings:  # a skipped reranker: said on stderr, the results stay on stdout
        click.echo(f"mcp-memory: warning: {warning}", err=True)
    if not hits:
        click.echo("No matching memories.")
        return
    if stdout_is_terminal():
        rows = [
            (
                str(rank),
                f"{hit.score:.3f}",
                hit.memory.id,
                hit.memory.namespace,
                one_line(hit.memory.content, 200),
            )
            for rank, hit in enumerate(hits, start=1)
        ]
        table(("#", "SCORE", "ID", "NAMESPACE", "CONTENT"), rows, wide=4, right=(0, 1))
        for rank, hit in enumerate(hits, start=1):
            if hit.matched_id:
                click.echo(f"{rank}: matched the wording of an older version, {hit.matched_id}.")
        return
    for rank, hit in enumerate(hits, start=1):
        via = f"  (matched older version {hit.matched_id})" if hit.matched_id else ""
        click.echo(f"{rank:>2}. {hit.score:.3f}  {hit.memory.id}  {one_line(hit.memory.content, 70)}{via}")


@click.command("get")
@click.argument("memory_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def get_command(memory_id: str, as_json: bool) -> None:
    """Show one memory, as stored (with its status and the head of its chain). ID may be a unique
    start of the id (8 characters or more)."""
    view = with_engine(
        lambda engine: get(engine, local_scope(engine), GetRequest(id=memory_id)).full(), create=False
    )
    if as_json:
        emit_json(view)
        return
    click.echo(f"id:            {view['id']}")
    click.echo(f"status:        {view['status']}")
    if view["head_id"] and view["head_id"] != view["id"]:
        click.echo(f"current:       {view['head_id']}")
    click.echo(f"type:          {view['type']}")
    click.echo(f"tags:          {', '.join(view['tags']) or '-'}")
    click.echo(f"namespace:     {view['namespace']}")
    click.echo(f"importance:    {view['importance']}")
    click.echo(f"pinned:        {'yes' if view['pinned'] else 'no'}")
    click.echo(f"occurred_at:   {view['occurred_at']}")
    click.echo(f"created_at:    {view['created_at']}")
    click.echo(f"updated_at:    {view['updated_at']}")
    click.echo(f"expires_at:    {view['expires_at'] or 'never'}{' (pinned)' if view['pinned'] else ''}")
    if view["superseded_by"]:
        click.echo(f"superseded_by: {view['superseded_by']}")
    if view["deleted_at"]:
        click.echo(f"deleted_at:    {view['deleted_at']}")
    if view["metadata"]:
        click.echo(f"metadata:      {json.dumps(view['metadata'], ensure_ascii=False)}")
    click.echo("")
    click.echo(view["content"])


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def namespaces(as_json: bool) -> None:
    """List namespaces with their number of current memories (* = the current namespace)."""
    from .display import stdout_is_terminal, table

    found = with_engine(lambda engine: namespace_counts(engine, local_scope(engine)), create=False)
    counts, current = found.counts, found.default
    if as_json:
        emit_json({"namespaces": counts, "current": current})
        return
    if not counts:
        click.echo(f"No namespaces yet (the current one is {current!r}).")
        return
    listed = [("*" if name == current else "", name, str(count)) for name, count in sorted(counts.items())]
    if stdout_is_terminal():
        table(("", "NAMESPACE", "MEMORIES"), listed, right=(2,))
    else:
        rows = [("", "NAMESPACE", "MEMORIES"), *listed]
        width = max(len(row[1]) for row in rows)
        for mark, name, count in rows:
            click.echo(f"{mark:1}  {name.ljust(width)}  {count}".rstrip())
    if current not in counts:
        click.echo(f"(the current namespace {current!r} holds no memories yet)")
