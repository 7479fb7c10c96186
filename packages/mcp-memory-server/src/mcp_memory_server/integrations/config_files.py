"""Editing a tool's own configuration file safely (an MCP client's, Claude Code's settings): read it
as UTF-8 text, keep the indentation it uses, write JSON the way people write these files, back it
up first and replace it atomically. Every refusal is a ConfigFileError: one sentence, file untouched."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any


class ConfigFileError(Exception):
    """Something the user can fix: one sentence, shown without a traceback."""


def decode_text(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigFileError(f"{path} is not UTF-8 text; left untouched.") from None


def load_json(text: str, path: Path, hint: str = "") -> Any:
    """The JSON in a configuration file's ``text``; a ConfigFileError when it is not JSON (``hint`` is
    added to that sentence) or nests deeper than Python's parser can go."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigFileError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}){hint}; "
            "left untouched."
        ) from None
    except RecursionError:
        raise ConfigFileError(
            f"{path} nests JSON too deeply to be a configuration file; left untouched."
        ) from None


def load_json_object(text: str, path: Path, hint: str = "") -> dict[str, Any]:
    """The JSON object in a configuration file's ``text`` (``{}`` for an empty file); a ConfigFileError
    when it is not JSON (see :func:`load_json`) or not an object."""
    data = load_json(text, path, hint) if text.strip() else {}
    if not isinstance(data, dict):
        raise ConfigFileError(f"{path} does not hold a JSON object; left untouched.")
    return data


def json_indent(text: str) -> str:
    """The indentation the file already uses (two spaces for a new one)."""
    match = re.search(r"^[{\[][ \t]*\r?\n([ \t]+)\S", text, re.MULTILINE)
    return match.group(1) if match else "  "


def json_text(value: Any, old_text: str) -> str:
    """A configuration file's new text: ``value`` as JSON in the indentation its ``old_text`` uses."""
    return dump_json(value, json_indent(old_text)) + "\n"


def dump_json(value: Any, indent: str = "  ", *, level: int = 0, width: int = 100) -> str:
    """JSON as people write these files: objects one key a line, a short list of plain values on
    one line (``"args": ["run", "mcp-memory"]``), anything else expanded."""
    here, inner = indent * level, indent * (level + 1)
    if isinstance(value, dict) and value:
        items = [
            f"{inner}{json.dumps(key, ensure_ascii=False)}: "
            + dump_json(item, indent, level=level + 1, width=width).lstrip()
            for key, item in value.items()
        ]
        return "{\n" + ",\n".join(items) + f"\n{here}}}"
    if isinstance(value, list) and value:
        flat = json.dumps(value, ensure_ascii=False)
        if all(not isinstance(item, dict | list) for item in value) and len(here) + len(flat) <= width:
            return flat
        items = [inner + dump_json(item, indent, level=level + 1, width=width) for item in value]
        return "[\n" + ",\n".join(items) + f"\n{here}]"
    return json.dumps(value, ensure_ascii=False)


def backup(path: Path, now: datetime | None, folder: Path | None = None) -> Path:
    """Copy ``path`` to ``<file>.bak-<time>`` beside it, or into ``folder`` (kept out of a repository)
    named after its whole path (``home-me-shop-.claude-settings.json.bak-<time>``)."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    if folder is None:
        folder, name = path.parent, path.name
    else:
        name = re.sub(r"[\\/:]+", "-", str(path.absolute()).strip("\\/"))
    backup = folder / f"{name}.bak-{stamp}"
    serial = 1
    while backup.exists():
        serial += 1
        backup = folder / f"{name}.bak-{stamp}-{serial}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, backup)
    except OSError as exc:
        raise ConfigFileError(
            f"Cannot back up {path} to {backup}: {exc.strerror or exc}; left untouched."
        ) from None
    return backup


def write_atomically(path: Path, text: str) -> None:
    """A temporary file beside ``path``, flushed to disk, renamed over it (keeping its mode: a
    ``~/.claude.json`` is private)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o7777 if path.exists() else None
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ConfigFileError(f"Cannot write {path}: {exc.strerror or exc}.") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise ConfigFileError(f"Cannot write {path}: {exc.strerror or exc}.") from None


def read_config(path: Path) -> tuple[Path, bytes | None, str]:
    """``(target, raw, text)`` of a configuration file: the file written (a dotfiles symlink is
    written through), its bytes (None: it does not exist yet) and its text ('' when new)."""
    path = path.expanduser()
    target = path.resolve() if path.is_symlink() else path
    if target.exists() and not target.is_file():  # before reading: /dev/zero never ends
        raise ConfigFileError(
            f"{path} is not a regular file (a folder, a device or a pipe); left untouched. "
            "Name the client's configuration file."
        )
    try:
        raw = target.read_bytes() if target.exists() else None
    except OSError as exc:
        raise ConfigFileError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    return target, raw, decode_text(raw, path) if raw is not None else ""


def replace_config(
    target: Path, raw: bytes | None, text: str, now: datetime | None, backups: Path | None = None
) -> Path | None:
    """Write ``text`` over a file ``read_config`` read (a backup first when it existed, beside it or
    in the folder ``backups``); returns the backup's path."""
    saved = backup(target, now, backups) if raw is not None else None
    write_atomically(target, text)
    return saved
