"""The vault's index store: found through the plugin manager, not imported.

The index is a store of its own (the one named :data:`INDEX_STORE`), one file per embedding model in
the vault's hidden folder. The vault asks the plugin manager for that store's spec and builds it with
the core settings pointed at the index file, so it gets the same store, with the same settings
(``MCP_MEMORY_SQLITE_…``), as a server configured with ``MCP_MEMORY_STORE=sqlite-vec`` would.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from mcp_memory_core.errors import PluginError
from mcp_memory_core.protocols import Store, StoreDiagnosis, Vector

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings
    from mcp_memory_core.specs import StoreSpec

#: the store that keeps the vault's index (vectors, keywords, filters and the vault's file table)
INDEX_STORE = "sqlite-vec"


class IndexStore(Store, Protocol):
    """What the vault needs of its index: a store that also reads vectors back, lets the vault keep
    a table of its own in the same transactions (``sql()``), and diagnoses its file."""

    def vectors(self, ids: Sequence[str]) -> dict[str, Vector]: ...

    def sql(self) -> AbstractContextManager[Any]: ...

    def diagnose(self) -> StoreDiagnosis: ...


#: builds the index store kept in a file (created when missing)
IndexFactory = Callable[[Path], IndexStore]


def plugin_index(settings: Settings | None = None) -> IndexFactory:
    """The factory of the store named :data:`INDEX_STORE`, from the installed plugins (honouring
    ``MCP_MEMORY_DISABLE_PLUGINS``); ``settings`` default to the environment's."""
    from mcp_memory_core.settings import Settings

    base = settings if settings is not None else Settings()
    spec = _index_spec(base.strict_plugins, base.disable_plugins)

    def make(path: Path) -> IndexStore:
        return cast(
            IndexStore, spec.factory(base.model_copy(update={"db_path": path, "create_database": True}))
        )

    return make


@functools.lru_cache(maxsize=8)
def _index_spec(strict: bool, disabled: str) -> StoreSpec:
    """The index store's spec (the entry points are read once per plugin selection)."""
    from mcp_memory_core.plugins import plugin_manager_from_settings

    plugins = plugin_manager_from_settings(strict=strict, disabled=disabled)
    if INDEX_STORE not in plugins.names("store"):
        raise PluginError(
            f"The markdown vault keeps its search index in the {INDEX_STORE} store, which is not "
            f"available: install mcp-memory-{INDEX_STORE} and leave it out of MCP_MEMORY_DISABLE_PLUGINS."
        )
    return plugins.store(INDEX_STORE)
