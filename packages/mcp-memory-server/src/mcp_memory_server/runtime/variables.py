"""``MCP_MEMORY_*`` variables that no installed plugin reads: a misspelt one is otherwise silently
ignored. ``doctor`` reports them; :func:`warn_unknown_variables` says them once per process on
stderr (the log), when every plugin is loaded (``assembly.load_plugins``)."""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported by doctor's module: nothing heavy at import time
    from mcp_memory_core.plugins import PluginManager

log = logging.getLogger(__name__)

PREFIX = "MCP_MEMORY_"
# Read straight from the environment, outside any settings model.
OTHER_VARIABLES = frozenset({"MCP_MEMORY_VAULT", "MCP_MEMORY_TESTING_CACHE"})
KINDS = ("store", "embedder", "ranker", "reranker")

_warned: set[str] = set()  # the names already said in this process


def env_names(model: Any) -> dict[str, str]:
    """``{ENVIRONMENT VARIABLE: field}`` of a pydantic-settings model."""
    prefix = str(model.model_config.get("env_prefix", ""))
    names = {}
    for name, info in model.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else None
        names[(alias or f"{prefix}{name}").upper()] = name
    return names


def known_variables(plugins: PluginManager) -> set[str]:
    """Every variable the core, the server or an installed plugin (of ``plugins``) reads."""
    from .settings import ServerSettings

    known = set(env_names(ServerSettings)) | OTHER_VARIABLES
    for kind in KINDS:
        get = getattr(plugins, kind)
        for name in plugins.names(kind):  # type: ignore[arg-type]
            model = get(name).settings_model
            if model is not None:
                known |= set(env_names(model))
    return known


def unknown_variables(environ: Mapping[str, str], known: set[str]) -> list[str]:
    """The ``MCP_MEMORY_*`` names set (not empty) in ``environ`` that are not ``known``, sorted."""
    return sorted(
        key
        for key in environ
        if key.upper().startswith(PREFIX) and key.upper() not in known and environ[key] != ""
    )


def with_hints(names: Iterable[str], known: set[str]) -> str:
    """``"MCP_MEMORY_DB_PATHH (did you mean MCP_MEMORY_DB_PATH?), …"``."""
    hints = []
    for key in names:
        close = difflib.get_close_matches(key.upper(), sorted(known), n=1, cutoff=0.8)
        hints.append(f"{key} (did you mean {close[0]}?)" if close else key)
    return ", ".join(hints)


def warn_unknown_variables(plugins: PluginManager, environ: Mapping[str, str] | None = None) -> None:
    """One warning (stderr, through the log) naming the unknown variables not yet said in this process;
    ``plugins`` must hold every installed plugin, or a plugin's own variable would look unknown."""
    known = known_variables(plugins)
    new = [
        key
        for key in unknown_variables(os.environ if environ is None else environ, known)
        if key not in _warned
    ]
    if not new:
        return
    _warned.update(new)
    log.warning(
        "No installed plugin reads %s: check the spelling, or remove it (a misspelt variable is ignored).",
        with_hints(new, known),
    )
