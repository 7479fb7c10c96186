"""Import and export, written once for the CLI and the web UI.

An import is two steps: :func:`prepare_import` reads and checks the whole file in the caller's Scope
and refuses what would not be kept (nothing is written); :func:`write_import` then writes it in
batches and says what happened (:class:`ImportResult`). :func:`export_memories_to` writes an
export and returns an :class:`ExportResult`. Surfaces parse their input into the request models
and render the results; they add no rule of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from pydantic import BaseModel, ConfigDict, Field

from mcp_memory_core.vocabulary import CHAT_EXPORTS

from .vocabulary import AUTO, ImportFormat, MemoryTypeName

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.models import Memory
    from mcp_memory_core.scope import Scope

MAX_BATCH_SIZE = 10_000
Progress = Callable[[int, int], None]  # (done, total)


class ImportRequest(BaseModel):
    """What to import: a file, its format (``auto``: guessed from its first bytes), and for the chat
    exports (chatgpt, claude) and knowledge graphs the target namespace and memory type; for the chat
    exports, the assistant's replies too."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: Path
    format: Literal["auto"] | ImportFormat = AUTO
    namespace: str | None = None
    memory_type: MemoryTypeName | None = None
    include_assistant: bool = False
    batch_size: int = Field(default=64, ge=1, le=MAX_BATCH_SIZE)


class RefusedRecord(BaseModel):
    """A memory of the file the import left out: its id, where it came from (``line 7``) and why."""

    id: str
    where: str
    reason: str


class RedactedRecord(BaseModel):
    """A memory of the file imported with its secrets replaced by placeholders: its id, where it came
    from and ``what`` was redacted where (never a value)."""

    id: str
    where: str
    what: str


class ImportResult(BaseModel):
    """What an import did."""

    imported: int
    skipped: int  # already present (same id)
    repaired: int  # lone surrogates replaced with U+FFFD
    vectors_reused: int  # memories whose vectors came with the file (not embedded again)
    refused: list[RefusedRecord]
    chit_chat: int  # turns of a chat export left out: greetings, thanks, one-word replies
    redacted: list[RedactedRecord] = []  # imported with their secrets replaced by placeholders
    format: ImportFormat
    namespace: str | None  # where they went; None for an mcp-memory export: each memory keeps its own
    file: str


ImportOption = Literal["namespace", "type", "include_assistant"]


class ImportOptionError(Exception):
    """An option that does not apply to the file's format. ``option`` names it, for a surface that
    says it in its own words (a command-line flag); the message says it in plain ones."""

    def __init__(self, option: ImportOption, message: str) -> None:
        super().__init__(message)
        self.option: ImportOption = option


@dataclass(frozen=True)
class PreparedImport:
    """A file read and checked, ready to write: its memories (an ``ImportFile``), in the Scope that
    read them."""

    request: ImportRequest
    format: ImportFormat
    namespace: str | None
    memories: Sequence[Memory]
    scope: Scope


def import_format(request: ImportRequest) -> ImportFormat:
    """The file's format (read from its first bytes for ``auto``); options that do not apply to it
    are refused (:class:`ImportOptionError`) before anything else is done."""
    from mcp_memory_core.transfer import detect_format

    chosen = detect_format(request.path) if request.format == AUTO else request.format
    if chosen == "mcp-memory" and request.namespace:
        raise ImportOptionError(
            "namespace",
            "The namespace applies to chatgpt, claude and knowledge graph imports; an mcp-memory export keeps "
            "each memory's namespace: leave it empty.",
        )
    if chosen == "mcp-memory" and request.memory_type:
        raise ImportOptionError(
            "type",
            "The type applies to chatgpt, claude and knowledge graph imports; an mcp-memory export keeps each "
            "memory's type: leave it empty.",
        )
    if request.include_assistant and chosen not in CHAT_EXPORTS:
        raise ImportOptionError(
            "include_assistant",
            "Including the assistant's replies applies to ChatGPT and Claude.ai exports only.",
        )
    return chosen


def prepare_import(engine: MemoryEngine, scope: Scope, request: ImportRequest) -> PreparedImport:
    """Read and validate the whole file, owned by the scope's user, in the namespace the scope lets it
    write (a chat export, when none is asked for: ``user``, which the person reads from every project);
    refuse memories that would expire at once, and whatever the engine would refuse."""
    from mcp_memory_core.models import MemoryType
    from mcp_memory_core.transfer import check_records, default_import_namespace, read_memories

    chosen = import_format(request)
    target = scope.write_namespace(request.namespace or default_import_namespace(chosen))
    now = engine.clock()
    memories = read_memories(
        request.path,
        chosen,
        namespace=target,
        now=now,
        include_assistant=request.include_assistant,
        memory_type=MemoryType(request.memory_type) if request.memory_type else None,
        owner=scope.principal,
        limits=engine.limits,
    )
    if chosen != "mcp-memory":
        _refuse_expired(engine, memories, now)
    check_records(engine, memories, scope=scope)  # a refused memory is reported before any write
    return PreparedImport(request, chosen, None if chosen == "mcp-memory" else target, memories, scope)


def _refuse_expired(engine: MemoryEngine, memories: Sequence[Memory], now: datetime) -> None:
    from mcp_memory_core.errors import InvalidInputError
    from mcp_memory_core.models import MemoryType

    expired = [m for m in memories if engine.ttl.is_expired(m, now)]
    if not expired:
        return
    kind = MemoryType(expired[0].type)
    lifetime = engine.ttl.ttl.get(kind)
    raise InvalidInputError(
        f"{len(expired)} of {len(memories)} memories are older than the {kind.value} lifetime "
        f"({_lifetime(lifetime) if lifetime else '?'}) and would expire at once. Import them as type "
        f"semantic (--type semantic; kept until deleted), or set MCP_MEMORY_TTL_{kind.value.upper()}=never (or a "
        "longer lifetime) for every mcp-memory process."
    )


def _lifetime(value: timedelta) -> str:
    seconds = int(value.total_seconds())
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def write_import(
    engine: MemoryEngine, prepared: PreparedImport, progress: Progress | None = None
) -> ImportResult:
    """Write a prepared import in batches, one transaction each; ``progress(done, total)`` after each."""
    from mcp_memory_core.transfer import import_records, redacted_records, refused_records

    total = len(prepared.memories)
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress(done, total)

    if progress is not None:
        progress(0, total)
    outcome = import_records(
        engine,
        prepared.memories,
        batch_size=prepared.request.batch_size,
        on_batch=advance,
        scope=prepared.scope,
    )
    return ImportResult(
        imported=outcome.inserted,
        skipped=outcome.skipped,
        repaired=outcome.repaired,
        vectors_reused=outcome.reused,
        refused=[RefusedRecord(**r) for r in refused_records(prepared.memories, outcome)],
        chit_chat=outcome.chit_chat,
        redacted=[RedactedRecord(**r) for r in redacted_records(prepared.memories, outcome)],
        format=prepared.format,
        namespace=prepared.namespace,
        file=str(prepared.request.path),
    )


class ExportRequest(BaseModel):
    """What to export: one namespace (default: the scope's own) or every namespace, with or without
    the stored vectors; ``exported_at`` fixes the header's time (byte-identical exports)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    namespace: str | None = None
    all_namespaces: bool = False
    vectors: bool = False
    exported_at: datetime | None = None


class ExportResult(BaseModel):
    """What an export wrote."""

    exported: int
    namespace: str | None  # None: every namespace
    vectors: bool


def export_memories_to(
    engine: MemoryEngine,
    scope: Scope,
    request: ExportRequest,
    out: TextIO,
    progress: Progress | None = None,
) -> ExportResult:
    """Write the memories the scope's user owns as mcp-memory JSON Lines to ``out``."""
    from mcp_memory_core.errors import InvalidInputError
    from mcp_memory_core.transfer import export_memories
    from mcp_memory_core.validation import validate_namespace

    if request.namespace is not None and request.all_namespaces:
        raise InvalidInputError("Export one namespace or every namespace, not both.")
    namespace = (
        None if request.all_namespaces else validate_namespace(request.namespace or scope.default_namespace)
    )
    count = export_memories(
        engine,
        out,
        namespace=namespace,
        now=request.exported_at,
        vectors=request.vectors,
        scope=scope,
        progress=progress,
    )
    return ExportResult(exported=count, namespace=namespace, vectors=request.vectors)
