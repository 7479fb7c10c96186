"""Moving memories in and out: ``mcp-memory export`` and ``mcp-memory import``."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..operations.transfer import (
    MAX_BATCH_SIZE,
    ExportRequest,
    ExportResult,
    ImportOption,
    ImportOptionError,
    ImportRequest,
    export_memories_to,
    import_format,
    prepare_import,
    write_import,
)
from ..operations.vocabulary import AUTO, IMPORT_FORMATS, MEMORY_TYPES
from .common import EXIT_CONFIG, emit_json, expected_errors, fail, local_scope, with_engine

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine


# An option the file's format does not take, in the command line's words.
_BOTH = (
    "--namespace and --type apply to chatgpt, claude and mcp-knowledge-graph imports; an mcp-memory "
    "export keeps each memory's namespace and type (export with --namespace to select one)."
)
IMPORT_OPTION_WORDS: dict[ImportOption, str] = {
    "namespace": _BOTH,
    "type": _BOTH,
    "include_assistant": "--include-assistant applies to chatgpt and claude imports only.",
}


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


@click.command("export")
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
    request = ExportRequest(
        namespace=namespace, all_namespaces=all_namespaces, vectors=with_vectors, exported_at=_export_time()
    )

    def run(engine: MemoryEngine) -> ExportResult:
        from .display import progress, stderr_is_terminal

        # Plain progress lines only for a file: exporting to stdout ends with the one summary line.
        quiet = as_json or (output == "-" and not stderr_is_terminal())
        with progress("Exporting", quiet=quiet) as report:
            if output == "-":
                buffer = io.StringIO()
                result = export_memories_to(engine, local_scope(engine), request, buffer, report)
                try:
                    sys.stdout.flush()
                    sys.stdout.buffer.write(buffer.getvalue().encode("utf-8"))  # UTF-8 whatever the locale
                    sys.stdout.buffer.flush()
                except OSError as exc:  # a full disk behind a redirection, a closed pipe
                    fail(f"cannot write the export to stdout: {exc.strerror or exc}.")
                return result
            return _export_to_file(engine, Path(output), request, report)

    result = with_engine(run, create=False)
    if as_json:
        emit_json(
            {
                "exported": result.exported,
                "namespace": result.namespace,
                "output": output,
                "vectors": with_vectors,
            }
        )
        return
    where = "all namespaces" if result.namespace is None else f"namespace {result.namespace!r}"
    target = "stdout" if output == "-" else output
    click.echo(f"Exported {result.exported} memories ({where}) to {target}.", err=True)


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
    engine: MemoryEngine, path: Path, request: ExportRequest, report: Callable[[int, int], None]
) -> ExportResult:
    import tempfile

    path = _export_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as handle:
            result = export_memories_to(engine, local_scope(engine), request, handle, report)
        os.replace(tmp, path)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # a full disk, a quota, an I/O error: the target is untouched
            fail(f"cannot write {path}: {exc.strerror or exc}; nothing was exported (the file is unchanged).")
        raise
    return result


@click.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice([AUTO, *IMPORT_FORMATS]),
    default=AUTO,
    show_default=True,
    help="mcp-memory (an export), chatgpt (conversations.json or the export .zip), claude (Claude.ai's "
    "conversations.json or the export .zip), mcp-knowledge-graph (memory.jsonl of "
    "@modelcontextprotocol/server-memory); auto guesses from the content.",
)
@click.option(
    "--namespace",
    default=None,
    help="Target namespace for chatgpt, claude and knowledge-graph imports (default: 'user' for chatgpt "
    "and claude, the current project's for a knowledge graph). mcp-memory exports keep each memory's own "
    "namespace.",
)
@click.option(
    "--type",
    "memory_type",
    type=click.Choice(MEMORY_TYPES),
    default=None,
    help="Memory type for chatgpt, claude and knowledge-graph imports (default semantic: kept until "
    "deleted).",
)
@click.option(
    "--include-assistant", is_flag=True, help="chatgpt, claude: also import the assistant's replies."
)
@click.option(
    "--batch-size",
    type=click.IntRange(1, MAX_BATCH_SIZE),
    default=ImportRequest.model_fields["batch_size"].default,
    show_default=True,
)
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
    request = ImportRequest(
        path=file,
        format=fmt,  # type: ignore[arg-type]  # one of the click.Choice
        namespace=namespace,
        memory_type=memory_type,  # one of MEMORY_TYPES (click.Choice)
        include_assistant=include_assistant,
        batch_size=batch_size,
    )
    with expected_errors():  # the format read and the options checked before the engine is built
        try:
            request = request.model_copy(update={"format": import_format(request)})
        except ImportOptionError as exc:
            raise click.UsageError(IMPORT_OPTION_WORDS[exc.option]) from None

    def run(engine: MemoryEngine) -> dict[str, Any]:
        from .display import progress

        try:
            prepared = prepare_import(engine, local_scope(engine), request)
        except OSError as exc:
            fail(f"cannot read {file}: {exc.strerror or exc}")
        with progress("Importing", quiet=as_json) as report:
            return write_import(engine, prepared, report).model_dump(mode="json")

    summary = with_engine(run)
    if as_json:
        emit_json(summary)
        return
    where = f" into namespace {summary['namespace']!r}" if summary["namespace"] else ""
    line = f"imported {summary['imported']}{where}, skipped {summary['skipped']} (already present)"
    if summary["chit_chat"]:
        plural = "" if summary["chit_chat"] == 1 else "s"
        line += (
            f"; left out {summary['chit_chat']} chit-chat turn{plural} (greetings, thanks, one-word replies)"
        )
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
    if summary["redacted"]:
        click.echo(f"redacted secrets in {len(summary['redacted'])} (MCP_MEMORY_SECRETS=redact):")
    for redacted in summary["redacted"]:
        click.echo(f"  {redacted['where']} (memory {redacted['id']}): {redacted['what']}")
