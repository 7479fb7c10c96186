"""Reading a file: only regular files, its format guessed from its first bytes, validated whole."""

from __future__ import annotations

import json
import stat
import zipfile
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from ..errors import InvalidInputError
from ..models import (
    DEFAULT_NAMESPACE,
    LOCAL_USER,
    USER_NAMESPACE,
    MemoryType,
)
from ..validation import (
    DEFAULT_LIMITS,
    Limits,
)
from ..vocabulary import CHAT_EXPORTS
from ..vocabulary import FORMATS as FORMATS
from ..vocabulary import Format as Format
from .chat_archive import first_conversation
from .chatgpt import read_chatgpt
from .claude import read_claude
from .import_file import ENCODING, ImportFile
from .knowledge_graph import parse_knowledge_graph
from .mcp_format import FORMAT_NAME, read_mcp_memory_jsonl

DETECT_LINE_CHARS = 1 << 20  # of the first line, read to guess a file's format


def _require_regular_file(path: Path) -> None:
    """Only a regular file is read: a device or a pipe (``/dev/zero``) may never end."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # opening it reports what is wrong
    if not stat.S_ISREG(mode):
        raise InvalidInputError(
            f"{path} is not a regular file: save what you want to import to a file and import that."
        )


def _first_line(handle: TextIO) -> str:
    """The first line that is not blank, cut at DETECT_LINE_CHARS (a file of one huge line is not
    read whole to guess its format)."""
    while line := handle.readline(DETECT_LINE_CHARS):
        if line.strip():
            return line
    return ""


def default_import_namespace(format: Format) -> str | None:
    """Where an import of ``format`` goes when no namespace is given: a chat export (what a person
    told an assistant, about themselves) into ``user``, read from every project; ``None`` for the
    others (the current project's; an mcp-memory export keeps each memory's own)."""
    return USER_NAMESPACE if format in CHAT_EXPORTS else None


def _chat_export(path: Path) -> Format:
    """Whose chat export a zip or a JSON list is, from its first conversation: ChatGPT's have a
    ``mapping`` of messages, Claude.ai's ``chat_messages`` (an empty list: ChatGPT's, nothing to import)."""
    some, first = first_conversation(path, export="A ChatGPT or Claude.ai export")
    shape: Any = first if isinstance(first, Mapping) else {}
    if not some or "mapping" in shape:
        return "chatgpt"
    if "chat_messages" in shape:
        return "claude"
    raise InvalidInputError(
        f"{path} is a JSON list, but of neither ChatGPT conversations (with 'mapping') nor Claude.ai "
        f"conversations (with 'chat_messages'); pass --format ({', '.join(FORMATS)})."
    )


def detect_format(path: Path) -> Format:
    """Guess a file's format from its first bytes: a zip or a JSON list is a chat export (ChatGPT's or
    Claude.ai's, told by its first conversation); JSON Lines with an mcp-memory header is ours;
    ``"type": "entity"|"relation"`` lines are a knowledge graph."""
    _require_regular_file(path)
    if zipfile.is_zipfile(path):
        return _chat_export(path)
    with path.open(encoding=ENCODING, errors="replace") as handle:
        head = handle.read(4096).lstrip()
        handle.seek(0)
        first = _first_line(handle)
    if head.startswith("["):
        return _chat_export(path)
    try:
        data = json.loads(first)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        if data.get("format") == FORMAT_NAME:
            return "mcp-memory"
        if data.get("type") in ("entity", "relation"):
            return "mcp-knowledge-graph"
    raise InvalidInputError(f"Cannot tell the format of {path}; pass --format ({', '.join(FORMATS)}).")


def read_memories(
    path: Path,
    format: Format,
    *,
    namespace: str | None = None,
    now: datetime | None = None,
    include_assistant: bool = False,
    memory_type: MemoryType | None = None,
    owner: str = LOCAL_USER,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportFile:
    """Read and validate a whole file before anything is written (a bad line late in a file must not
    leave half an import behind; pass the importing engine's ``limits``). ``namespace`` is the
    target of the chat exports and the knowledge-graph format (default: :func:`default_import_namespace`,
    else ``default``); mcp-memory records keep their own, and ``memory_type`` (default: semantic —
    imported history is usually older than the episodic lifetime and would expire at once) applies
    to those formats only. ``owner`` owns what the file does not give an owner (every memory of the
    chat exports and knowledge graphs)."""
    _require_regular_file(path)
    target = namespace or default_import_namespace(format) or DEFAULT_NAMESPACE
    read = _read_memories(path, format, target, now, include_assistant, memory_type, owner, limits)
    if format == "mcp-memory":
        return read
    owned = [m if m.owner == owner else m.model_copy(update={"owner": owner}) for m in read]
    return replace(read, memories=owned)


def _read_memories(
    path: Path,
    format: Format,
    namespace: str,
    now: datetime | None,
    include_assistant: bool,
    memory_type: MemoryType | None,
    owner: str,
    limits: Limits,
) -> ImportFile:
    if format in CHAT_EXPORTS:
        read = read_chatgpt if format == "chatgpt" else read_claude
        return read(
            path,
            namespace=namespace,
            include_assistant=include_assistant,
            memory_type=memory_type or MemoryType.SEMANTIC,
            limits=limits,
        )
    try:
        with path.open(encoding=ENCODING) as handle:
            if format == "mcp-memory":
                return read_mcp_memory_jsonl(handle, owner=owner, limits=limits)
            if format == "mcp-knowledge-graph":
                return parse_knowledge_graph(
                    handle,
                    namespace=namespace,
                    now=now,
                    memory_type=memory_type or MemoryType.SEMANTIC,
                    limits=limits,
                )
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    raise InvalidInputError(f"Unknown import format {format!r}; choose one of: {', '.join(FORMATS)}.")
