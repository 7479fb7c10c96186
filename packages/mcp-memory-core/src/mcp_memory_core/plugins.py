"""The plugin manager: loads entry points one by one and answers "which backend is called X?".

It is the only module that touches pluggy's untyped hook object.
"""

from __future__ import annotations

import importlib.metadata
import logging
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

import pluggy

from . import hookspecs
from .errors import PluginConflictError, PluginError, UnknownBackendError
from .specs import BackendSpec, EmbedderSpec, RankerSpec, RerankerSpec, StoreSpec, TokenTableSpec

log = logging.getLogger(__name__)

Kind = Literal["embedder", "store", "ranker", "reranker", "token-table"]
S = TypeVar("S", bound=BackendSpec[Any])

_HOOKS: dict[Kind, tuple[str, type[BackendSpec[Any]]]] = {
    "embedder": ("mcp_memory_embedders", EmbedderSpec),
    "store": ("mcp_memory_stores", StoreSpec),
    "ranker": ("mcp_memory_rankers", RankerSpec),
    "reranker": ("mcp_memory_rerankers", RerankerSpec),
    "token-table": ("mcp_memory_token_tables", TokenTableSpec),
}


@dataclass(frozen=True)
class PluginOrigin:
    """Where a registered plugin came from: its entry-point name and its distribution."""

    name: str
    package: str
    version: str


@dataclass(frozen=True)
class PluginLoadFailure:
    entry_point: str
    package: str
    error: str


@dataclass(frozen=True)
class BackendInfo:
    """One row of ``mcp-memory plugins``."""

    name: str
    kind: Kind
    package: str
    version: str
    description: str


class PluginManager:
    """Collects embedder, store, ranker, reranker and token-table specs from every installed plugin.

    ``strict=True`` turns a plugin that fails to load into an error; otherwise it is logged and recorded
    in :attr:`failures`. ``disabled`` holds entry-point names not to load (``"*"`` disables all).
    """

    def __init__(self, *, strict: bool = False, disabled: Iterable[str] = ()) -> None:
        self._pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        self._origins: dict[int, PluginOrigin] = {}
        self.strict = strict
        self.disabled = frozenset(d.strip() for d in disabled if d.strip())
        self.failures: list[PluginLoadFailure] = []
        self._cache: dict[Kind, dict[str, tuple[BackendSpec[Any], PluginOrigin]]] = {}

    # -- loading ---------------------------------------------------------------------------------
    def register(self, plugin: object, *, name: str, package: str = "", version: str = "") -> None:
        """Register a plugin object (a module or any object with hookimpls)."""
        self._pm.register(plugin, name=name)
        self._pm.check_pending()
        self._origins[id(plugin)] = PluginOrigin(name, package or name, version)
        self._cache.clear()

    def load_entry_points(self) -> None:
        """Load every ``mcp_memory`` entry point on its own; one broken plugin never hides the others."""
        if "*" in self.disabled:
            log.info("All plugins disabled by MCP_MEMORY_DISABLE_PLUGINS=*")
            return
        for ep in importlib.metadata.entry_points(group=hookspecs.ENTRY_POINT_GROUP):
            if ep.name in self.disabled:
                log.info("Plugin %r disabled by MCP_MEMORY_DISABLE_PLUGINS", ep.name)
                continue
            if self._pm.has_plugin(ep.name):
                continue
            dist = ep.dist
            package = dist.metadata["Name"] if dist is not None else "?"
            version = dist.version if dist is not None else "?"
            try:
                plugin = ep.load()
                self.register(plugin, name=ep.name, package=package, version=version)
            except Exception as exc:  # a broken third-party plugin must not take the server down
                message = f"{type(exc).__name__}: {exc}"
                if self.strict:
                    raise PluginError(
                        f"Plugin {ep.name!r} from package {package} failed to load: {message}"
                    ) from exc
                log.warning("Skipping plugin %r from package %s: %s", ep.name, package, message)
                self.failures.append(PluginLoadFailure(ep.name, package, message))

    # -- queries ---------------------------------------------------------------------------------
    def _specs(self, kind: Kind) -> dict[str, tuple[BackendSpec[Any], PluginOrigin]]:
        if kind in self._cache:
            return self._cache[kind]
        hook_name, spec_type = _HOOKS[kind]
        found: dict[str, tuple[BackendSpec[Any], PluginOrigin]] = {}
        caller = getattr(self._pm.hook, hook_name)
        for impl in caller.get_hookimpls():
            origin = self._origins.get(id(impl.plugin), PluginOrigin(impl.plugin_name, impl.plugin_name, ""))
            function = cast(Callable[[], Iterable[Any] | None], impl.function)
            try:
                produced = list(function() or ())
            except Exception as exc:
                if self.strict:
                    raise PluginError(f"Hook {hook_name} of plugin {origin.name!r} failed: {exc}") from exc
                log.warning("Hook %s of plugin %r failed: %s", hook_name, origin.name, exc)
                self.failures.append(PluginLoadFailure(origin.name, origin.package, str(exc)))
                continue
            for spec in produced:
                if not isinstance(spec, spec_type):
                    raise PluginError(
                        f"Hook {hook_name} of plugin {origin.name!r} (package {origin.package}) yielded "
                        f"{type(spec).__name__}, expected {spec_type.__name__}."
                    )
                if spec.name in found:
                    other = found[spec.name][1]
                    raise PluginConflictError(kind, spec.name, {other.package, origin.package})
                found[spec.name] = (spec, origin)
        self._cache[kind] = found
        return found

    def names(self, kind: Kind) -> list[str]:
        return sorted(self._specs(kind))

    def _get(self, kind: Kind, name: str, spec_type: type[S]) -> S:
        specs = self._specs(kind)
        key = name.strip().lower()
        if key not in specs:
            raise UnknownBackendError(kind, name, specs)
        return cast(S, specs[key][0])

    def embedder(self, name: str) -> EmbedderSpec:
        return self._get("embedder", name, EmbedderSpec)

    def store(self, name: str) -> StoreSpec:
        return self._get("store", name, StoreSpec)

    def ranker(self, name: str) -> RankerSpec:
        return self._get("ranker", name, RankerSpec)

    def reranker(self, name: str) -> RerankerSpec:
        return self._get("reranker", name, RerankerSpec)

    def token_table(self, store: str) -> TokenTableSpec | None:
        """The token table a plugin keeps beside the store ``store``, or None (none does)."""
        found = self._specs("token-table").get(store.strip().lower())
        return cast(TokenTableSpec, found[0]) if found is not None else None

    def backends(self) -> list[BackendInfo]:
        """Every registered backend, for ``mcp-memory plugins``."""
        rows = []
        for kind in _HOOKS:
            for name, (spec, origin) in sorted(self._specs(kind).items()):
                rows.append(BackendInfo(name, kind, origin.package, origin.version, spec.description))
        return rows


def plugin_manager_from_settings(strict: bool = False, disabled: str = "") -> PluginManager:
    """A manager with every installed plugin loaded, honouring the disable list."""
    pm = PluginManager(strict=strict, disabled=disabled.split(","))
    pm.load_entry_points()
    return pm


def module_plugin(name: str, **hooks: Callable[..., Any]) -> types.SimpleNamespace:
    """Build a plugin object from hook functions (handy in tests and scripts)."""
    for function in hooks.values():
        hookspecs.hookimpl(function)
    return types.SimpleNamespace(__name__=name, **hooks)
