"""Where a vault keeps what: its folders (seed 004's entity folders), its settings file
``.mcp-memory.yaml`` and its cache folder, and how a new note is named.

Memory types go to entity folders (each name can be changed in ``.mcp-memory.yaml``):

===========  ================  =====================================================
type         folder            why
===========  ================  =====================================================
semantic     ``Concepts/``     facts and knowledge about the user and their domains
procedural   ``Skills/``       how to do things: reusable procedures
episodic     ``Reflections/``  what happened and what was learnt from it
working      ``Projects/``     the current task's context (short-lived by default)
===========  ================  =====================================================

``Artifacts/`` is created for the user's own work products (specs, drafts); notes there, and in any
other folder of the vault, are memories too. ``Threads/`` holds conversation transcripts as YAML
(:mod:`.threads`), each message a memory. What is no longer current — old versions and deleted
memories — moves to ``Archive/``, its frontmatter saying which (``superseded_by``, ``deleted``).
Hidden files and folders (``.obsidian/``, ``.git/``, the cache ``.mcp-memory/``) are never read.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mcp_memory_core.errors import InvalidInputError, PluginError
from mcp_memory_core.models import MemoryType
from mcp_memory_core.validation import validate_namespace

from .notes import load_yaml
from .vault_io import LinkInVault, NotRegular, TooLarge, create_file, read_file

CONFIG_NAME = ".mcp-memory.yaml"
CONFIG_BYTES = 65_536  # a settings file is a few lines
CACHE_DIR = ".mcp-memory"
INDEX_GLOB = "index-*.db"
NAME_WORDS = 8
NAME_CHARS = 60
_UNSAFE = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f]+')


class VaultConfig(BaseModel):
    """The settings of one vault, read from its ``.mcp-memory.yaml`` (every key optional)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    namespace: str | None = Field(
        default=None, description="Namespace of notes that do not name one (default: the project's)"
    )
    concepts_dir: str = "Concepts"
    projects_dir: str = "Projects"
    skills_dir: str = "Skills"
    reflections_dir: str = "Reflections"
    artifacts_dir: str = "Artifacts"
    threads_dir: str = "Threads"
    archive_dir: str = "Archive"
    exclude: tuple[str, ...] = Field(default=(), description="Folders (relative to the vault) never indexed")

    @field_validator(
        "concepts_dir",
        "projects_dir",
        "skills_dir",
        "reflections_dir",
        "artifacts_dir",
        "threads_dir",
        "archive_dir",
    )
    @classmethod
    def _folder(cls, value: str) -> str:
        return _relative_folder(value)

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str | None) -> str | None:
        try:
            return None if value is None else validate_namespace(value)
        except InvalidInputError as exc:
            raise ValueError(str(exc).rstrip(".")) from None

    @field_validator("exclude", mode="before")
    @classmethod
    def _excluded(cls, value: Any) -> Any:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            return value
        return tuple(_relative_folder(str(item)) for item in items)

    def folder_of(self, memory_type: MemoryType) -> str:
        return {
            MemoryType.SEMANTIC: self.concepts_dir,
            MemoryType.PROCEDURAL: self.skills_dir,
            MemoryType.EPISODIC: self.reflections_dir,
            MemoryType.WORKING: self.projects_dir,
        }[memory_type]

    @property
    def folders(self) -> tuple[str, ...]:
        return (
            self.concepts_dir,
            self.projects_dir,
            self.skills_dir,
            self.reflections_dir,
            self.artifacts_dir,
            self.threads_dir,
            self.archive_dir,
        )

    def excluded(self, relative_path: str) -> bool:
        return any(
            relative_path == folder or relative_path.startswith(folder + "/") for folder in self.exclude
        )

    def in_archive(self, relative_path: str) -> bool:
        return relative_path.startswith(self.archive_dir + "/")


def _relative_folder(value: str) -> str:
    text = value.strip().replace("\\", "/").strip("/")
    if not text or text.startswith(".") or ".." in text.split("/"):
        raise ValueError(f"{value!r} is not a folder inside the vault (relative, not hidden)")
    return text


def load_config(vault: Path) -> VaultConfig:
    """The vault's ``.mcp-memory.yaml``, or the defaults when it has none. A file that is not valid
    is a PluginError naming the file and the key."""
    path = vault / CONFIG_NAME
    try:
        raw, _ = read_file(vault, CONFIG_NAME, CONFIG_BYTES)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return VaultConfig()
    except LinkInVault:
        raise PluginError(
            f"{path} is a symbolic link: mcp-memory follows no link inside the vault."
        ) from None
    except (TooLarge, NotRegular, UnicodeDecodeError):
        raise PluginError(f"{path} is not a settings file (at most 64 KB of UTF-8 text).") from None
    except OSError as exc:
        raise PluginError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    try:
        data = load_yaml(text, str(path)) or {}
    except yaml.YAMLError as exc:
        raise PluginError(f"{path} is not valid YAML: {getattr(exc, 'problem', exc)}.") from None
    except ValueError as exc:  # notes.MalformedNote: an alias bomb
        raise PluginError(f"{exc}.") from None
    if not isinstance(data, dict):
        raise PluginError(f"{path} must hold key: value settings.")
    data.pop("vault", None)  # where the vault is: read by find_vault, not a setting of the vault
    try:
        return VaultConfig(**data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}" for err in exc.errors()
        )
        raise PluginError(f"Invalid settings in {path}: {problems}.") from None


def find_config(start: Path) -> Path | None:
    """The nearest ``.mcp-memory.yaml`` at or above ``start``."""
    start = start.resolve()
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def vault_of_config(config: Path) -> Path:
    """The vault a ``.mcp-memory.yaml`` belongs to: its folder, or its ``vault:`` key relative to it."""
    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        data = {}
    where = data.get("vault") if isinstance(data, dict) else None
    if isinstance(where, str) and where.strip():
        return (config.parent / Path(where).expanduser()).resolve()
    return config.parent.resolve()


def write_config(vault: Path, namespace: str | None) -> bool:
    """Create ``.mcp-memory.yaml`` with the default folders (and ``namespace``). False if one exists."""
    defaults = VaultConfig()
    lines = [
        "# mcp-memory vault settings (see the mcp-memory-markdown README). Every key is optional.",
        *([f"namespace: {namespace}"] if namespace else []),
        *(f"{key}: {getattr(defaults, key)}" for key in VaultConfig.model_fields if key.endswith("_dir")),
        "exclude: []",
    ]
    return create_file(vault, CONFIG_NAME, ("\n".join(lines) + "\n").encode("utf-8"))


def index_name(model_id: str, dimensions: int) -> str:
    """The index file of one embedding model: every model has its own (``index-<12 hex>.db``), so a
    server on another model never opens, mixes or rebuilds this one."""
    digest = hashlib.sha256(f"{model_id}\n{int(dimensions)}".encode()).hexdigest()[:12]
    return f"index-{digest}.db"


def note_name(content: str) -> str:
    """A file name (without ``.md``) from the first words of ``content``: readable, safe on every
    file system and in a wikilink, at most NAME_CHARS characters."""
    text = unicodedata.normalize("NFC", content)
    text = re.sub(r"^[#>\-*+\s]+", "", text)  # a heading or list marker is not part of the name
    text = _UNSAFE.sub(" ", text)
    words = text.split()[:NAME_WORDS]
    name = " ".join(words)
    if len(name) > NAME_CHARS:
        name = name[:NAME_CHARS].rsplit(" ", 1)[0] or name[:NAME_CHARS]
    name = name.strip(" .")
    return name or "memory"


def free_path(folder: str, name: str, taken: set[str]) -> str:
    """``folder/name.md``, or ``folder/name 2.md``, ``name 3.md`` … (Obsidian's way) — the first
    relative path not in ``taken`` (case-insensitively: macOS and Windows file systems fold case)."""
    lowered = {path.lower() for path in taken}
    candidate = f"{folder}/{name}.md"
    number = 2
    while candidate.lower() in lowered:
        candidate = f"{folder}/{name} {number}.md"
        number += 1
    return candidate
