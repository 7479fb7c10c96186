"""Settings → plugin manager → store, embedder, ranker and rerankers → a MemoryEngine; and where the
HTTP server's bearer tokens live (:func:`token_registry`).

Cheap by design: spec factories only build backend objects; the model loads later (``engine.warm()``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from mcp_memory_core.context import current_context
from mcp_memory_core.engine import MemoryEngine
from mcp_memory_core.errors import PluginError
from mcp_memory_core.models import USER_NAMESPACE
from mcp_memory_core.plugins import PluginManager, plugin_manager_from_settings
from mcp_memory_core.protocols import Store
from mcp_memory_core.scope import Scope
from mcp_memory_core.settings import Settings
from mcp_memory_core.tokens import TokenRegistry

from .settings import ServerSettings
from .variables import warn_unknown_variables

log = logging.getLogger(__name__)


def load_plugins(settings: Settings) -> PluginManager:
    """Every installed plugin, honouring MCP_MEMORY_DISABLE_PLUGINS and MCP_MEMORY_STRICT_PLUGINS; an
    ``MCP_MEMORY_*`` variable none of them reads is warned about (once per process, on stderr)."""
    plugins = plugin_manager_from_settings(strict=settings.strict_plugins, disabled=settings.disable_plugins)
    warn_unknown_variables(plugins)
    return plugins


def built(kind: str, spec: Any, settings: Settings) -> Any:
    """``spec.factory(settings)``; a plugin's own settings that do not validate (``MCP_MEMORY_SQLITE_…``,
    ``MCP_MEMORY_POSTGRES_…``) become one sentence naming each variable, not a traceback."""
    factory: Callable[[Settings], Any] = spec.factory
    try:
        return factory(settings)
    except ValidationError as exc:
        model = spec.settings_model
        prefix = str(model.model_config.get("env_prefix", "")) if model is not None else ""
        problems = "; ".join(
            f"{prefix}{'_'.join(str(part) for part in err['loc'])}".upper() + f": {err['msg']}"
            for err in exc.errors()
        )
        raise PluginError(f"Invalid settings of the {kind} {spec.name!r}: {problems}.") from None


def built_store(spec: Any, settings: Settings) -> Store:
    """A store plugin's store, checked against the :class:`Store` protocol: an object that is not
    one is the plugin's fault, said in one sentence naming what it lacks (not an AttributeError on
    some later call)."""
    store = built("store", spec, settings)
    if not isinstance(store, Store):
        lacks = sorted(name for name in vars(Store) if not name.startswith("_") and not hasattr(store, name))
        raise PluginError(
            f"The store factory of {spec.name!r} built {type(store).__name__}, which is not a Store: it "
            f"lacks {', '.join(lacks)} (see mcp_memory_core.protocols.Store)."
        )
    return store


def build_engine(
    settings: Settings | None = None,
    plugins: PluginManager | None = None,
    *,
    require_scope: bool = False,
) -> MemoryEngine:
    """Assemble the engine the settings ask for.

    Every name (store, embedder, ranker and each of ``MCP_MEMORY_RERANKERS``) is resolved before any
    factory runs, so a typo fails fast with :class:`~mcp_memory_core.errors.UnknownBackendError`
    ("… not recognized. Choose one of: …").
    """
    settings = settings if settings is not None else Settings()
    plugins = plugins if plugins is not None else load_plugins(settings)
    store_spec = plugins.store(settings.store)
    embedder_spec = plugins.embedder(settings.embedder)
    ranker_spec = plugins.ranker(settings.ranker)
    reranker_specs = [plugins.reranker(name) for name in settings.rerankers]
    store = built_store(store_spec, settings)
    embedder = built("embedder", embedder_spec, settings)
    ranker = built("ranker", ranker_spec, settings)
    rerankers = []
    for spec in reranker_specs:
        reranker = built("reranker", spec, settings)
        name = getattr(reranker, "name", None)
        if name != spec.name:  # warnings and explain name it: it must be the name users configure
            raise PluginError(
                f"The reranker factory of {spec.name!r} built {type(reranker).__name__} named {name!r}: a "
                f"reranker's name must be the name it is registered under."
            )
        rerankers.append(reranker)
    log.info(
        "Memory engine: store=%s (%s), embedder=%s, ranker=%s, rerankers=%s",
        store_spec.name,
        store.location,
        embedder_spec.name,
        ranker_spec.name,
        ",".join(spec.name for spec in reranker_specs) or "none",
    )
    project = settings.resolved_project()
    return MemoryEngine(
        store,
        embedder,
        ranker,
        namespace=project or USER_NAMESPACE,
        default_scope=Scope.for_user(settings.user, project=project),
        require_scope=require_scope,
        ttl=settings.ttl_policy(),
        dedup_threshold=settings.dedup_threshold,
        duplicate_threshold=settings.duplicate_threshold,
        conflict_policy=settings.conflict_policy,
        context=current_context() if settings.auto_context else None,
        limits=settings.limits(),
        relevance_floor=settings.floor(embedder),
        rerankers=rerankers,
        reranker_timeout=settings.reranker_timeout,
        secrets=settings.secret_policy(),
        defer_passages=settings.defer_passages,
        passage_backlog=settings.passage_backlog,
        passage_fill_idle=settings.passage_fill_idle,
    )


def token_registry(settings: ServerSettings, plugins: PluginManager | None = None) -> TokenRegistry:
    """The bearer tokens of ``serve --transport http`` and ``mcp-memory token …``: the file
    ``MCP_MEMORY_TOKENS_PATH`` when it is set; else the table the configured store's plugin keeps
    tokens in (PostgreSQL: its own database, so every server on it sees a created or revoked token at
    once); else ``tokens.db`` beside the database. Neither opens the store nor loads a model."""
    from .tokens import SqliteTokenTable

    if settings.tokens_path is None:
        plugins = plugins if plugins is not None else load_plugins(settings)
        plugins.store(settings.store)  # a mistyped store is an error here, not tokens in the wrong place
        spec = plugins.token_table(settings.store)
        if spec is not None:
            return TokenRegistry(built("token table", spec, settings))
    return TokenRegistry(SqliteTokenTable(settings.resolved_tokens_path()))
