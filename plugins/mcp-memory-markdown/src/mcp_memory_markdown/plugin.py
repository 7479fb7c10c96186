"""pluggy registration of the ``markdown`` store (entry point ``markdown`` in group ``mcp_memory``).

``MCP_MEMORY_STORE=markdown`` keeps memories as notes in a vault: ``MCP_MEMORY_VAULT`` if set; else
the folder of the nearest ``.mcp-memory.yaml`` at or above the working directory (or the folder its
``vault:`` key names); else ``memory/`` in the project (the git repository's root); else
``<user data dir>/mcp-memory/vault``. Importing this module is cheap.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import StoreSpec, hookimpl
from mcp_memory_core.context import derive_project, main_worktree, project_root
from mcp_memory_core.models import USER_NAMESPACE

from .index import plugin_index
from .layout import find_config, load_config, vault_of_config
from .store import MarkdownStore

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings

APP_NAME = "mcp-memory"


class MarkdownSettings(BaseSettings):
    """Settings of the markdown store, from environment variables prefixed ``MCP_MEMORY_``."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_", extra="ignore")

    vault: Path | None = Field(
        default=None,
        description="The vault folder (default: the nearest .mcp-memory.yaml's folder, else memory/ in "
        "the git project, else <user data dir>/mcp-memory/vault)",
    )
    vault_watch: bool = Field(
        default=True,
        description="Linux: see edits through inotify (false: scan the vault's files at every call)",
    )


def resolve_vault(configured: Path | None, cwd: Path | None = None) -> Path:
    """Where the vault is (see the module docstring)."""
    if configured is not None:
        return configured.expanduser().resolve()
    cwd = (cwd or Path.cwd()).resolve()
    config = find_config(cwd)
    if config is not None:
        return vault_of_config(config)
    root = project_root(cwd)
    if root is not None:
        return main_worktree(root) / "memory"
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "vault"


def default_namespace(vault: Path, settings: Settings) -> str:
    """The namespace of notes that name none: the vault's ``namespace`` setting, else
    MCP_MEMORY_NAMESPACE / the vault's project, else ``user``."""
    configured = load_config(vault).namespace if vault.is_dir() else None
    if configured:
        return configured
    if settings.namespace:
        return settings.namespace
    project = derive_project(vault) if project_root(vault) is not None else None
    return project or USER_NAMESPACE


def _make(settings: Settings) -> MarkdownStore:
    own = MarkdownSettings()
    vault = resolve_vault(own.vault)
    return MarkdownStore(
        vault,
        namespace=default_namespace(vault, settings) or USER_NAMESPACE,
        owner=settings.user,
        create=settings.create_database,
        watch=own.vault_watch,
        index=plugin_index(settings),  # the sqlite-vec store, with this server's plugin settings
        limits=settings.limits(),  # notes are held to the byte limits of everything else
        secrets=settings.secret_policy(),  # a note edited by hand is screened as a write is
    )


@hookimpl
def mcp_memory_stores() -> Iterator[StoreSpec]:
    yield StoreSpec(
        name="markdown",
        factory=_make,
        description="Markdown notes with YAML frontmatter in a folder you own (Obsidian-compatible); "
        "the search index is derived from them",
        settings_model=MarkdownSettings,
    )
