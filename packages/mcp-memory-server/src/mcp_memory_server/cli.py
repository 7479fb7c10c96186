"""The ``mcp-memory`` command. With no subcommand it serves MCP over stdio (so ``uvx --from mcp-memory-stack mcp-memory`` works).

Serve mode never prints: stdout is the protocol. The other commands print human-readable text
(tables on a terminal, see :mod:`.cli_display`), or JSON with ``--json``. Expected errors (bad
configuration, bad id …) are one line on stderr and a nonzero exit, without a traceback.

Exit statuses scripts can trust: 0 done; 1 (``EXIT_ERROR``) the command was refused or failed (bad
input, an unknown id, a storage error), nothing changed; 2 (``EXIT_USAGE``) the command line or the
configuration is wrong (click's usage errors, an invalid ``MCP_MEMORY_*`` setting).
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from . import __version__
from .logging_setup import configure_logging, parse_level
from .process_tuning import tune_process

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope
    from mcp_memory_core.settings import Settings
    from mcp_memory_core.tokens import TokenRegistry

log = logging.getLogger(__name__)

T = TypeVar("T")

EXIT_ERROR = 1
EXIT_USAGE = 2  # click's own status for a usage error (click.UsageError.exit_code)
EXIT_CONFIG = EXIT_USAGE  # an invalid setting is a wrong command line too: fix it, run again
DEBUG_ENV = "MCP_MEMORY_DEBUG"  # set: an unexpected error shows its traceback


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    click.echo(f"mcp-memory: error: {message}", err=True)
    sys.exit(code)


def load_settings() -> Settings:
    from .config import ConfigurationError
    from .config import load_settings as read

    try:
        return read()
    except ConfigurationError as exc:
        fail(str(exc), EXIT_CONFIG)


@contextmanager
def expected_errors() -> Iterator[None]:
    """Turn the errors mcp-memory raises on purpose into one clean line on stderr.

    The core is imported only when something went wrong: ``serve`` runs inside this too, and the
    stdio path to the ``initialize`` reply must not import the core (and numpy).
    """
    try:
        yield
    except Exception as exc:
        from mcp_memory_core.errors import MemoryNotFoundError, MemoryServerError

        if isinstance(exc, MemoryNotFoundError):  # the engine's words name the MCP tools
            fail(f"No memory with id {exc.memory_id!r}: `mcp-memory list` and `mcp-memory search` show ids.")
        if isinstance(exc, MemoryServerError):
            fail(str(exc))
        raise


def with_engine(fn: Callable[[MemoryEngine], T], *, create: bool = True) -> T:
    """Run ``fn`` on an engine built from the settings. ``create=False`` (the read commands): a missing
    database is an error, never a new empty file at a mistyped path."""
    from .assembly import build_engine

    settings = load_settings()
    if not create:
        settings = settings.model_copy(update={"create_database": False})
    with expected_errors():
        engine = build_engine(settings)
        try:
            return fn(engine)
        finally:
            engine.close()


def local_scope(engine: MemoryEngine) -> Scope:
    """Who the CLI acts as: the local user (``MCP_MEMORY_USER``) in the current project, the very
    Scope the stdio server's tools run in (built once, by ``assembly.build_engine``, as the engine's
    default scope). Commands hand it to the engine and never filter by owner themselves."""
    return engine.default_scope


def namespace_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option("--namespace", default=None, metavar="NS", help=help)


def limit_option(default: int, high: int, what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--limit N``, from 1 to ``high``: anything else (a 5,000-digit number too) is refused here, in
    the engine's words, before a store sees it."""

    def check(ctx: click.Context, param: click.Parameter, value: str) -> int:
        text = value.strip()
        number = int(text) if text.isdecimal() and len(text) <= len(str(high)) else None
        if number is None or not 1 <= number <= high:
            shown = text if len(text) <= 20 else f"{text[:8]}…{text[-4:]} ({len(text)} characters)"
            fail(f"limit must be an integer from 1 to {high}; got {shown}.")
        return number

    return click.option(
        "--limit",
        default=str(default),
        metavar="N",
        callback=check,
        show_default=True,
        help=f"{what} (1-{high}).",
    )


READ_NAMESPACE_HELP = (
    "Read this namespace only ('*': every namespace you may read); default: the current project and 'user'."
)


def use_vault(path: Path | None) -> None:
    """``--path DIR``: the markdown vault DIR (MCP_MEMORY_STORE=markdown, MCP_MEMORY_VAULT=DIR), set
    before anything reads the settings."""
    if path is not None:
        folder = path.expanduser().resolve()
        blocking = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        if blocking is not None:
            fail(
                f"--path {path}: {blocking} is not a folder; a vault is a folder (an existing one, or a "
                "new one to create with `mcp-memory init --path DIR`).",
                EXIT_USAGE,
            )
        os.environ["MCP_MEMORY_STORE"] = "markdown"
        os.environ["MCP_MEMORY_VAULT"] = str(folder)


def path_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--path",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="A markdown vault (mcp-memory-markdown): the same as MCP_MEMORY_STORE=markdown "
        "MCP_MEMORY_VAULT=DIR.",
    )(fn)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return textwrap.shorten(flat, width=width, placeholder="…") if len(flat) > width else flat


# -- the command group -------------------------------------------------------------------------------
@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="mcp-memory")
@click.option("-v", "--verbose", is_flag=True, help="Show INFO logs (on stderr) for the debugging commands.")
@click.pass_context
def cli(ctx: click.Context, verbose: bool) -> None:
    """mcp-memory: persistent, semantically searchable memory for AI assistants (an MCP server).

    Without a command, serves MCP over stdio. Configure with MCP_MEMORY_* environment variables
    (MCP_MEMORY_DB_PATH, MCP_MEMORY_STORE, MCP_MEMORY_EMBEDDER, MCP_MEMORY_RANKER, MCP_MEMORY_LOG_LEVEL …).
    Every command but serve takes --json.

    Exit status: 0 done; 1 refused or failed (bad input, an unknown id, a storage error: nothing
    changed, one line on stderr); 2 the command line or the configuration is wrong.
    """
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose
    if ctx.invoked_subcommand is None:
        ctx.invoke(serve)
    elif ctx.invoked_subcommand != "serve":
        # Debugging commands: keep stderr quiet unless asked; stdout carries their output.
        settings_level = parse_level(_env_log_level("WARNING"))
        configure_logging(logging.INFO if verbose else max(settings_level, logging.WARNING))


def _bind_address(host: str) -> str:
    from .http_security import is_host

    if not is_host(host):
        raise click.BadParameter(
            f"{host[:80]!r} is not an IP address or a host name; use e.g. 127.0.0.1, 0.0.0.0 or ::1."
        )
    return host


def _env_log_level(default: str) -> str:
    """MCP_MEMORY_LOG_LEVEL, read without importing the settings machinery (it is on the startup path)."""
    return os.environ.get("MCP_MEMORY_LOG_LEVEL", default)


@cli.command()
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for MCP clients that spawn the server; http serves streamable HTTP.",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    callback=lambda ctx, param, value: _bind_address(value),
    help="HTTP only: the address to bind.",
)
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="HTTP only.")
@click.option(
    "--no-auth",
    is_flag=True,
    help="HTTP only: serve without bearer tokens, as the local user. Allowed on a loopback address only.",
)
@path_option
def serve(
    transport: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    no_auth: bool = False,
    path: Path | None = None,
) -> None:
    """Serve MCP (the default command). HTTP serves at http://HOST:PORT/mcp and requires
    ``Authorization: Bearer <token>`` (see ``mcp-memory token create``) unless --no-auth is given
    on a loopback address.

    stdio answers ``initialize`` before reading the settings or importing the engine: a bad setting
    is logged and returned, with its message, by every tool call (the client sees it; a server that
    exits at startup only shows "disconnected").
    """
    configure_logging(_env_log_level("INFO"))
    use_vault(path)
    if transport == "http":
        from .http_security import is_loopback

        if no_auth and not is_loopback(host):
            fail(
                f"refusing to serve {host} without authentication: --no-auth is only allowed on a "
                "loopback address (127.0.0.1, ::1, localhost); create a token with "
                "`mcp-memory token create USER` and drop --no-auth.",
                EXIT_CONFIG,
            )
        settings = load_settings()  # an HTTP server is started by a human: fail fast, in the terminal
        configure_logging(settings.log_level)
        from .server import serve_http

        runner: Callable[[], None] = lambda: serve_http(  # noqa: E731
            settings, host=host, port=port, auth=not no_auth
        )
    else:
        if no_auth:
            raise click.UsageError("--no-auth applies to --transport http only.")
        from .server import serve_stdio

        runner = serve_stdio
    with suppress(KeyboardInterrupt), expected_errors():
        runner()


@cli.command("list")
@limit_option(50, 1000, "Page size")
@click.option("--cursor", default=None, help="next_cursor of the previous page.")
@namespace_option(READ_NAMESPACE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(limit: int, cursor: str | None, namespace: str | None, as_json: bool) -> None:
    """List current memories, newest first."""
    from .cli_display import stdout_is_terminal, table
    from .serialize import page_to_dict

    page = with_engine(
        lambda engine: page_to_dict(
            engine.list_memories(limit, cursor, namespace=namespace, scope=local_scope(engine))
        ),
        create=False,
    )
    if as_json:
        emit_json(page)
        return
    if not page["memories"]:
        click.echo("No memories." if not cursor else "No more memories.")
        return
    rows = [
        (m["id"], m["created_at"][:19].replace("T", " "), m["namespace"], one_line(m["content"], 80))
        for m in page["memories"]
    ]
    if stdout_is_terminal():
        table(("ID", "CREATED", "NAMESPACE", "CONTENT"), rows, wide=3)
    else:
        for row in rows:
            click.echo("  ".join(row))
    shown = len(page["memories"])
    footer = f"{shown} shown, {page['total']} in total."
    if page["next_cursor"]:
        again = f" --namespace {namespace!r}" if namespace else ""
        footer += f" Next page: mcp-memory list --limit {limit}{again} --cursor {page['next_cursor']}"
    click.echo(footer)


@cli.command()
@click.argument("query")
@limit_option(10, 100, "Maximum results")
@namespace_option(READ_NAMESPACE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def search(query: str, limit: int, namespace: str | None, as_json: bool) -> None:
    """Search memories by meaning."""
    from .cli_display import stdout_is_terminal, table
    from .serialize import hit_to_dict

    def do(engine: MemoryEngine) -> tuple[list[dict[str, Any]], list[str]]:
        found = engine.search(query, limit, namespace=namespace, scope=local_scope(engine))
        return [hit_to_dict(h) for h in found.hits], found.warnings

    results, warnings = with_engine(do, create=False)
    if as_json:
        emit_json({"results": results, "count": len(results), **({"warnings": warnings} if warnings else {})})
        return
    for warning in warnings:  # a skipped reranker: said on stderr, the results stay on stdout
        click.echo(f"mcp-memory: warning: {warning}", err=True)
    if not results:
        click.echo("No matching memories.")
        return
    if stdout_is_terminal():
        rows = [
            (
                str(rank),
                f"{hit['score']:.3f}",
                hit["id"],
                hit["namespace"],
                one_line(hit["content"], 200),
            )
            for rank, hit in enumerate(results, start=1)
        ]
        table(("#", "SCORE", "ID", "NAMESPACE", "CONTENT"), rows, wide=4, right=(0, 1))
        for rank, hit in enumerate(results, start=1):
            if hit["matched_id"]:
                click.echo(f"{rank}: matched the wording of an older version, {hit['matched_id']}.")
        return
    for rank, hit in enumerate(results, start=1):
        via = f"  (matched older version {hit['matched_id']})" if hit["matched_id"] else ""
        click.echo(f"{rank:>2}. {hit['score']:.3f}  {hit['id']}  {one_line(hit['content'], 70)}{via}")


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def get(memory_id: str, as_json: bool) -> None:
    """Show one memory, as stored (with its status and the head of its chain)."""
    from .serialize import view_to_dict

    view = with_engine(
        lambda engine: view_to_dict(
            engine.get_memory(memory_id, scope=local_scope(engine)), engine.ttl, engine.clock()
        ),
        create=False,
    )
    if as_json:
        emit_json(view)
        return
    click.echo(f"id:            {view['id']}")
    click.echo(f"status:        {view['status']}")
    if view["head_id"] and view["head_id"] != view["id"]:
        click.echo(f"current:       {view['head_id']}")
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


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def plugins(as_json: bool) -> None:
    """List installed plugins: every store, embedder, ranker, reranker and token table, and plugins that
    failed to load."""
    from .assembly import load_plugins

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


def _selected(kind: str, name: str, settings: Settings, selected: dict[str, Any]) -> bool:
    if kind == "reranker":
        return name in settings.rerankers
    if kind == "token-table":  # used beside its store unless MCP_MEMORY_TOKENS_PATH names a file
        return name == settings.store and settings.tokens_path is None
    return bool(selected.get(kind) == name)


# -- moving memories in and out ----------------------------------------------------------------------
IMPORT_FORMATS = ("mcp-memory", "chatgpt", "mcp-knowledge-graph")
MEMORY_TYPES = ("working", "episodic", "semantic", "procedural")


def _export_time() -> datetime | None:
    """``SOURCE_DATE_EPOCH`` (the reproducible-builds convention) fixes ``exported_at``, so two exports
    of the same memories are byte-identical."""
    raw = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not raw:
        return None
    try:
        return datetime.fromtimestamp(int(raw), UTC)
    except (ValueError, OverflowError, OSError):
        fail(f"SOURCE_DATE_EPOCH must be an integer number of seconds; got {raw!r}.", EXIT_CONFIG)


@cli.command("export")
@click.option(
    "-o",
    "--output",
    default="-",
    show_default=True,
    type=click.Path(dir_okay=False, allow_dash=True, path_type=str),
    help="File to write (- for stdout). Written to a temporary file first, then renamed.",
)
@click.option("--namespace", default=None, help="Export this namespace (default: the current one).")
@click.option("--all-namespaces", is_flag=True, help="Export every namespace.")
@click.option(
    "--vectors",
    "with_vectors",
    is_flag=True,
    help="Also write each memory's stored vectors (format version 2, about 2 KB per vector at 384-d): "
    "an import into a store of the same embedding model reuses them instead of embedding again.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary as JSON on stdout (needs -o FILE: without it, stdout is the export).",
)
def export_command(
    output: str, namespace: str | None, all_namespaces: bool, with_vectors: bool, as_json: bool
) -> None:
    """Export memories as mcp-memory JSON Lines: every version, tombstone and pin.

    The first line is a header ({"format": "mcp-memory", "version": 1, "exported_at", "count"}), then
    one memory per line, sorted by (namespace, created_at, id). With --vectors the version is 2, the
    header names the embedder and every memory carries its vectors. Set SOURCE_DATE_EPOCH to fix
    exported_at and get byte-identical exports of identical data. A progress bar is drawn on stderr
    when it is a terminal.
    """
    if namespace is not None and all_namespaces:
        raise click.UsageError("--namespace and --all-namespaces exclude each other.")
    if as_json and output == "-":
        raise click.UsageError("--json needs -o FILE: without it, stdout carries the export itself.")
    now = _export_time()

    def run(engine: MemoryEngine) -> tuple[int, str | None]:
        from mcp_memory_core.transfer import export_memories
        from mcp_memory_core.validation import validate_namespace

        from .cli_display import progress, stderr_is_terminal

        ns = (
            None if all_namespaces else validate_namespace(namespace or local_scope(engine).default_namespace)
        )
        # Plain progress lines only for a file: exporting to stdout ends with the one summary line.
        quiet = as_json or (output == "-" and not stderr_is_terminal())
        with progress("Exporting", quiet=quiet) as report:
            if output == "-":
                buffer = io.StringIO()
                count = export_memories(
                    engine,
                    buffer,
                    namespace=ns,
                    now=now,
                    vectors=with_vectors,
                    scope=local_scope(engine),
                    progress=report,
                )
                try:
                    sys.stdout.flush()
                    sys.stdout.buffer.write(buffer.getvalue().encode("utf-8"))  # UTF-8 whatever the locale
                    sys.stdout.buffer.flush()
                except OSError as exc:  # a full disk behind a redirection, a closed pipe
                    fail(f"cannot write the export to stdout: {exc.strerror or exc}.")
                return count, ns
            return _export_to_file(engine, Path(output), ns, now, with_vectors, report), ns

    count, ns = with_engine(run, create=False)
    if as_json:
        emit_json({"exported": count, "namespace": ns, "output": output, "vectors": with_vectors})
        return
    where = "all namespaces" if ns is None else f"namespace {ns!r}"
    target = "stdout" if output == "-" else output
    click.echo(f"Exported {count} memories ({where}) to {target}.", err=True)


def _export_target(path: Path) -> Path:
    """Where ``export -o`` may write: a new file, or a regular file it replaces (by renaming a
    temporary file over it). A symlink, a folder, a device or a pipe is refused, never replaced."""
    import stat

    path = path.expanduser()
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:  # a file where a folder should be, a folder this user may not enter
        fail(f"cannot write {path}: {exc.strerror or exc}; choose another path.")
    if not stat.S_ISREG(mode):
        kind = (
            "a symbolic link"
            if stat.S_ISLNK(mode)
            else "a folder"
            if stat.S_ISDIR(mode)
            else "a device, pipe or socket"
        )
        fail(
            f"refusing to export to {path}: it is {kind}, not a regular file (it would be replaced); "
            "name a new or regular file, or use -o - for stdout."
        )
    return path


def _export_to_file(
    engine: MemoryEngine,
    path: Path,
    namespace: str | None,
    now: datetime | None,
    vectors: bool,
    report: Callable[[int, int], None],
) -> int:
    import tempfile

    from mcp_memory_core.transfer import export_memories

    path = _export_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as handle:
            count = export_memories(
                engine,
                handle,
                namespace=namespace,
                now=now,
                vectors=vectors,
                scope=local_scope(engine),
                progress=report,
            )
        os.replace(tmp, path)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # a full disk, a quota, an I/O error: the target is untouched
            fail(f"cannot write {path}: {exc.strerror or exc}; nothing was exported (the file is unchanged).")
        raise
    return count


def _lifetime(value: timedelta) -> str:
    seconds = int(value.total_seconds())
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@cli.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", *IMPORT_FORMATS]),
    default="auto",
    show_default=True,
    help="mcp-memory (an export), chatgpt (conversations.json or the export .zip), mcp-knowledge-graph "
    "(memory.jsonl of @modelcontextprotocol/server-memory); auto guesses from the content.",
)
@click.option(
    "--namespace",
    default=None,
    help="Target namespace for chatgpt and knowledge-graph imports (default: the current one). "
    "mcp-memory exports keep each memory's own namespace.",
)
@click.option(
    "--type",
    "memory_type",
    type=click.Choice(MEMORY_TYPES),
    default=None,
    help="Memory type for chatgpt and knowledge-graph imports (default semantic: kept until deleted).",
)
@click.option("--include-assistant", is_flag=True, help="chatgpt: also import the assistant's replies.")
@click.option("--batch-size", type=click.IntRange(1, 10_000), default=64, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def import_command(
    file: Path,
    fmt: str,
    namespace: str | None,
    memory_type: str | None,
    include_assistant: bool,
    batch_size: int,
    as_json: bool,
) -> None:
    """Import memories from FILE. Safe to re-run: memories already present (same id) are skipped.

    The whole file is read and validated before anything is written; memories are embedded in
    batches, one transaction per batch, with progress on stderr (a bar on a terminal, a line every
    few seconds otherwise, none with --json). An export made with --vectors by the same embedding
    model is not embedded again: its vectors are reused.
    """
    with expected_errors():
        from mcp_memory_core.transfer import detect_format

        chosen = detect_format(file) if fmt == "auto" else fmt
    if chosen == "mcp-memory" and (namespace or memory_type):
        raise click.UsageError(
            "--namespace and --type apply to chatgpt and mcp-knowledge-graph imports; an mcp-memory "
            "export keeps each memory's namespace and type (export with --namespace to select one)."
        )
    if include_assistant and chosen != "chatgpt":
        raise click.UsageError("--include-assistant applies to chatgpt imports only.")

    def run(engine: MemoryEngine) -> dict[str, Any]:
        from mcp_memory_core.errors import InvalidInputError
        from mcp_memory_core.models import MemoryType
        from mcp_memory_core.transfer import check_records, import_records, read_memories, refused_records
        from mcp_memory_core.validation import validate_namespace

        from .cli_display import progress

        scope = local_scope(engine)
        target = validate_namespace(namespace) if namespace else scope.default_namespace
        now = engine.clock()
        try:
            memories = read_memories(
                file,
                chosen,  # type: ignore[arg-type]  # one of IMPORT_FORMATS (click.Choice)
                namespace=target,
                now=now,
                include_assistant=include_assistant,
                memory_type=MemoryType(memory_type) if memory_type else None,
                owner=scope.principal,
                limits=engine.limits,
            )
        except OSError as exc:
            fail(f"cannot read {file}: {exc.strerror or exc}")
        if chosen != "mcp-memory":
            expired = [m for m in memories if engine.ttl.is_expired(m, now)]
            if expired:
                kind = MemoryType(expired[0].type)
                lifetime = engine.ttl.ttl.get(kind)
                raise InvalidInputError(
                    f"{len(expired)} of {len(memories)} memories are older than the {kind.value} lifetime "
                    f"({_lifetime(lifetime) if lifetime else '?'}) and would expire at once. Import them "
                    f"with --type semantic (kept until deleted), or set MCP_MEMORY_TTL_{kind.value.upper()}"
                    "=never (or a longer lifetime) for every mcp-memory process."
                )
        check_records(engine, memories, scope=scope)  # a refused memory is reported before the progress
        done = [0]
        with progress("Importing", quiet=as_json) as report:
            report(0, len(memories))

            def advance(count: int) -> None:
                done[0] += count
                report(done[0], len(memories))

            outcome = import_records(engine, memories, batch_size=batch_size, on_batch=advance, scope=scope)
        return {
            "imported": outcome.inserted,
            "skipped": outcome.skipped,
            "repaired": outcome.repaired,
            "vectors_reused": outcome.reused,
            "refused": refused_records(memories, outcome),
            "format": chosen,
            "namespace": None if chosen == "mcp-memory" else target,
            "file": str(file),
        }

    summary = with_engine(run)
    if as_json:
        emit_json(summary)
        return
    line = f"imported {summary['imported']}, skipped {summary['skipped']} (already present)"
    if summary["vectors_reused"]:
        line += f"; reused the file's vectors for {summary['vectors_reused']} (not embedded again)"
    if summary["repaired"]:
        plural = "" if summary["repaired"] == 1 else "s"
        line += f"; repaired {summary['repaired']} lone surrogate{plural} (replaced with U+FFFD)"
    if summary["refused"]:
        line += f"; refused {len(summary['refused'])}:"
    click.echo(line)
    for refused in summary["refused"]:
        click.echo(f"  {refused['where']} (memory {refused['id']}): {refused['reason']}")


# -- lifecycle ----------------------------------------------------------------------------------------
@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def gc(as_json: bool) -> None:
    """Tombstone every memory past its type's lifetime (pinned memories never expire)."""
    removed = with_engine(lambda engine: engine.sweep())
    if as_json:
        emit_json({"removed": removed})
        return
    click.echo(f"{removed} expired memories removed")


@cli.command()
@click.option("--namespace", required=True, help="The namespace to empty.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def clear(namespace: str, yes: bool, as_json: bool) -> None:
    """Permanently delete every memory of a namespace: all versions and tombstones. No undo."""

    def run(engine: MemoryEngine) -> int:
        from mcp_memory_core.validation import validate_namespace

        name = validate_namespace(namespace)
        if not yes:
            current = engine.list_namespaces().get(name)
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


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def namespaces(as_json: bool) -> None:
    """List namespaces with their number of current memories (* = the current namespace)."""
    from .cli_display import stdout_is_terminal, table

    counts, current = with_engine(
        lambda engine: (
            dict(engine.list_namespaces(scope=local_scope(engine))),
            local_scope(engine).default_namespace,
        ),
        create=False,
    )
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


# -- tokens for the HTTP server ------------------------------------------------------------------------
@cli.group()
def token() -> None:
    """Bearer tokens for `mcp-memory serve --transport http`, stored hashed: in MCP_MEMORY_TOKENS_PATH
    when set; else in the store's database when its plugin keeps tokens (MCP_MEMORY_STORE=postgres);
    else in tokens.db beside the database."""


@contextmanager
def _registry() -> Iterator[TokenRegistry]:
    """Where the tokens live (as the HTTP server decides it); its errors are one line on stderr."""
    from .assembly import token_registry

    settings = load_settings()
    with expected_errors(), token_registry(settings) as registry:
        yield registry


@token.command("create")
@click.argument("user")
@click.option("--team", "teams", multiple=True, help="A team the user belongs to (repeat for several).")
@click.option("--json", "as_json", is_flag=True, help='Print JSON (the token under "token").')
def token_create(user: str, teams: tuple[str, ...], as_json: bool) -> None:
    """Create a token for USER and print it (once: only its hash is kept) as one line on stdout."""
    with _registry() as registry:
        secret, info = registry.create(user, teams)
    if as_json:
        emit_json(
            {
                "token": secret,
                "id": info.id,
                "user": info.user,
                "teams": list(info.teams),
                "location": registry.location,
            }
        )
        return
    click.echo(secret)
    shown = f" in team(s) {', '.join(info.teams)}" if info.teams else ""
    click.echo(
        f"Created token {info.id} for {info.user}{shown}, kept in {registry.location}. "
        "It is shown only this once.",
        err=True,
    )


@token.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also show revoked tokens.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def token_list(show_all: bool, as_json: bool) -> None:
    """List tokens: id, user, teams, created (never the secret); where they live on stderr."""
    with _registry() as registry:
        rows = [t for t in registry.tokens() if show_all or t.active]
    if as_json:
        emit_json([{**t.__dict__, "teams": list(t.teams), "active": t.active} for t in rows])
        return
    click.echo(f"Tokens in {registry.location}:", err=True)
    if not rows:
        click.echo("No tokens. Create one with `mcp-memory token create USER`.")
        return
    from .cli_display import stdout_is_terminal, table

    if stdout_is_terminal():
        table(
            ("ID", "USER", "TEAMS", "CREATED", "REVOKED"),
            [(t.id, t.user, ",".join(t.teams) or "-", t.created_at, t.revoked_at or "") for t in rows],
        )
        return
    for t in rows:
        state = "" if t.active else f"  revoked {t.revoked_at}"
        click.echo(f"{t.id}  {t.user}  teams={','.join(t.teams) or '-'}  created {t.created_at}{state}")


@token.command("revoke")
@click.argument("token_id", required=False)
@click.option("--user", default=None, help="Revoke every active token of this user.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def token_revoke(token_id: str | None, user: str | None, as_json: bool) -> None:
    """Revoke the token TOKEN_ID (see `token list`), or every token of --user. Takes effect at once."""
    with _registry() as registry:
        revoked = registry.revoke(token_id, user=user)
    if as_json:
        emit_json({"revoked": [t.id for t in revoked]})
        return
    click.echo(f"Revoked {len(revoked)} token(s): {', '.join(t.id for t in revoked) or 'none'}")


# Modules that register more commands on `cli` (they import it from here: last, on purpose).
from . import (  # noqa: E402
    cli_write,  # noqa: F401  (add, update, forget, pin and unpin)
    config_cli,  # noqa: F401  (config)
    doctor_cli,  # noqa: F401  (doctor)
    hooks_cli,  # noqa: F401  (hooks install/uninstall, hook EVENT)
    reindex_cli,  # noqa: F401  (reindex and build-index)
    ui_cli,  # noqa: F401  (ui)
    vault_cli,  # noqa: F401  (init)
)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    tune_process()  # single-threaded BLAS, fixed mmap threshold: before numpy is imported
    try:
        cli.main(args=argv, prog_name="mcp-memory")
    except Exception as exc:  # a bug: every expected error has its own sentence before this
        if os.environ.get(DEBUG_ENV, "").strip() not in ("", "0"):
            raise
        click.echo(
            f"mcp-memory: internal error: {type(exc).__name__}: {one_line(str(exc), 300)} — rerun with "
            f"{DEBUG_ENV}=1 for the traceback, and please report it.",
            err=True,
        )
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":
    main()
