"""Checks 1, 2 and 5: versions, settings and where each came from, installed plugins."""

from __future__ import annotations

import contextlib
import importlib.metadata
import platform
import re
import sqlite3
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_memory_core.settings import Settings


from ..runtime.variables import OTHER_VARIABLES, env_names, known_variables, unknown_variables, with_hints
from .report import (
    REPORT_BUG,
    Check,
    Context,
    fail,
    first_failure,
    ok,
    warn,
)


# -- 1. versions ----------------------------------------------------------------------------------
def _distributions(ctx: Context) -> dict[str, str]:
    """mcp-memory's own distributions, every distribution registering a plugin, and the MCP SDK."""
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"] or ""
        if name.lower().startswith("mcp-memory"):
            found[name] = dist.version
    for ep in importlib.metadata.entry_points(group="mcp_memory"):
        if ep.dist is not None:
            found[ep.dist.metadata["Name"]] = ep.dist.version
    for name in ("mcp", "pydantic", "numpy"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            found[name] = importlib.metadata.version(name)
    return dict(sorted(found.items()))


def check_versions(ctx: Context) -> Check:
    packages = _distributions(ctx)
    python = f"{platform.python_implementation()} {platform.python_version()}"
    stdlib_sqlite = {
        "version": sqlite3.sqlite_version,
        "can_load_extensions": hasattr(sqlite3.Connection, "enable_load_extension"),
    }
    binding = None
    with contextlib.suppress(Exception):  # the database check reports a store that cannot be read
        diagnosis = ctx.diagnosis()
        binding = diagnosis.details.get("binding") if diagnosis is not None else None
    sqlite_text = (
        f"SQLite through {binding}"
        if binding
        else f"stdlib SQLite {sqlite3.sqlite_version}"
        + ("" if stdlib_sqlite["can_load_extensions"] else " (cannot load extensions)")
    )
    app = packages.get("mcp-memory-app", "?")
    message = f"{python}, mcp-memory-app {app}, MCP SDK {packages.get('mcp', '?')}, {sqlite_text}."
    return ok(
        "versions",
        message,
        python=python,
        executable=sys.executable,
        platform=platform.platform(),
        packages=packages,
        stdlib_sqlite=stdlib_sqlite,
        sqlite_binding=binding,
    )


# -- 2. settings ----------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


_URL_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")
_KEYWORD_PASSWORD = re.compile(r"(password\s*=\s*)\S+", re.IGNORECASE)
_SECRET_NAME = re.compile(r"PASSWORD|SECRET|TOKEN(?!S_PATH)|KEY", re.IGNORECASE)


def _shown(variable: str, value: Any) -> Any:
    """A setting's value as the report shows it: never a password (a database URL's, a key's)."""
    value = _plain(value)
    if not isinstance(value, str) or not value:
        return value
    if _SECRET_NAME.search(variable):
        return "(set, hidden)"
    return _KEYWORD_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***@", value))


# Set by the CLI itself, not by users (doctor sets it off: it must never create a database).
INTERNAL_SETTINGS = frozenset({"create_database"})


def _describe(model: Any, instance: Any, environ: Mapping[str, str], owner: str) -> list[dict[str, Any]]:
    upper = {k.upper() for k in environ}
    rows = []
    for variable, name in env_names(model).items():
        if name in INTERNAL_SETTINGS:
            continue
        rows.append(
            {
                "name": name,
                "variable": variable,
                "value": _shown(variable, getattr(instance, name)),
                "source": "environment" if variable in upper else "default",
                "of": owner,
            }
        )
    return rows


def _backend_settings(ctx: Context, settings: Settings) -> tuple[list[dict[str, Any]], set[str]]:
    """The selected backends' own settings (rows), and every variable any installed plugin reads."""
    pm = ctx.plugins()
    rows: list[dict[str, Any]] = []
    selected = {
        ("store", settings.store),
        ("embedder", settings.embedder),
        ("ranker", settings.ranker),
        *(("reranker", name) for name in settings.rerankers),
    }
    getters: dict[str, Callable[[str], Any]] = {
        "store": pm.store,
        "embedder": pm.embedder,
        "ranker": pm.ranker,
        "reranker": pm.reranker,
    }
    for kind, get in getters.items():
        for name in pm.names(kind):  # type: ignore[arg-type]
            model = get(name).settings_model
            if model is not None and (kind, name) in selected:
                with contextlib.suppress(Exception):  # invalid values: the embedder/store check says so
                    rows += _describe(model, model(), ctx.environ, f"{kind} {name}")
    return rows, known_variables(pm)


def _location(ctx: Context, settings: Settings) -> str:
    """Where the selected store keeps its data (its database file, vault or redacted URL)."""
    with contextlib.suppress(Exception):  # a store that cannot be built: the database check says why
        return str(ctx.store().location)
    return str(settings.db_path)


def check_settings(ctx: Context) -> Check:
    from ..runtime.settings import ServerSettings

    problem = first_failure(ctx, "settings", ctx.settings)
    if problem is not None:
        return fail(
            "settings",
            f"{problem}.",
            "Correct or unset each MCP_MEMORY_ variable it names, where the server gets its environment "
            '(your MCP client\'s "env" in its config) and in this shell.',
        )
    settings = ctx.settings()
    rows = _describe(ServerSettings, settings, ctx.environ, "core")  # mcp-memory's own, not a plugin's
    known = set(env_names(ServerSettings)) | OTHER_VARIABLES
    plugin_rows: list[dict[str, Any]] = []
    complete = False  # every installed plugin's variables are known: only then is a name unknown
    with contextlib.suppress(Exception):  # the plugins check reports plugins that cannot load
        plugin_rows, plugin_known = _backend_settings(ctx, settings)
        known |= plugin_known
        complete = True
    rows += plugin_rows
    given = [row["variable"] for row in rows if row["source"] == "environment"]
    core = (
        f"store {settings.store}, embedder {settings.embedder}, ranker {settings.ranker}"
        + (f", rerankers {', '.join(settings.rerankers)}" if settings.rerankers else "")
        + f", data at {_location(ctx, settings)}"
    )
    source = f"set in the environment: {', '.join(given)}" if given else "all defaults"
    details = {"settings": rows, "sources": "defaults and MCP_MEMORY_* environment variables (no file)"}
    unknown = unknown_variables(ctx.environ, known)
    if unknown and complete:
        return warn(
            "settings",
            f"{core} ({source}); no installed plugin reads {with_hints(unknown, known)}.",
            "Check the spelling of those variables, or remove them; a misspelt one is silently ignored.",
            unknown=unknown,
            **details,
        )
    return ok("settings", f"{core} ({source}).", **details)


# -- 5. plugins -----------------------------------------------------------------------------------
def check_plugins(ctx: Context) -> Check:
    from mcp_memory_core.errors import PluginConflictError, UnknownBackendError

    settings = ctx.settings()
    problem = first_failure(ctx, "plugins", ctx.plugins)
    if problem is not None:
        return fail("plugins", f"The plugins could not be loaded: {problem}", REPORT_BUG)
    pm = ctx.plugins()
    failures = [{"entry_point": f.entry_point, "package": f.package, "error": f.error} for f in pm.failures]
    try:
        rows = pm.backends()
    except PluginConflictError as exc:
        return fail(
            "plugins",
            str(exc),
            "Uninstall one of the packages it names (`pip uninstall PACKAGE`, or `uv remove` in a project), "
            "or disable one plugin with MCP_MEMORY_DISABLE_PLUGINS=ENTRY_POINT.",
            failed=failures,
        )
    backends = [{"name": r.name, "kind": r.kind, "package": r.package, "version": r.version} for r in rows]
    selected = [
        ("store", settings.store, pm.store, "MCP_MEMORY_STORE"),
        ("embedder", settings.embedder, pm.embedder, "MCP_MEMORY_EMBEDDER"),
        ("ranker", settings.ranker, pm.ranker, "MCP_MEMORY_RANKER"),
        *(("reranker", name, pm.reranker, "MCP_MEMORY_RERANKERS") for name in settings.rerankers),
    ]
    chosen, unknown = [], []
    for kind, name, get, variable in selected:
        try:
            get(name)
        except UnknownBackendError as exc:
            unknown.append((str(exc), variable, name))
            continue
        package = next((b for b in backends if b["kind"] == kind and b["name"] == name), None)
        chosen.append(f"{kind} {name} ({package['package']} {package['version']})" if package else name)
    details = {"backends": backends, "failed": failures}
    if unknown:
        _, variable, name = unknown[0]
        return fail(
            "plugins",
            " ".join(m for m, _, _ in unknown),
            f"Set {variable} to one of the names listed, or install the plugin that provides {name!r}.",
            **details,
        )
    summary = f"{len(backends)} backends from {len({b['package'] for b in backends})} packages; " + ", ".join(
        chosen
    )
    if failures:
        broken = "; ".join(f"{f['entry_point']} ({f['package']}): {f['error']}" for f in failures)
        fix = (
            "Reinstall or uninstall the broken package (`pip install --force-reinstall PACKAGE` / "
            "`pip uninstall PACKAGE`), or skip it with MCP_MEMORY_DISABLE_PLUGINS="
            + ",".join(f["entry_point"] for f in failures)
            + "."
        )
        if settings.strict_plugins:
            return fail(
                "plugins", f"Broken plugins, fatal with MCP_MEMORY_STRICT_PLUGINS: {broken}", fix, **details
            )
        return warn("plugins", f"{summary}. Skipped, broken: {broken}", fix, **details)
    return ok("plugins", f"{summary}.", **details)
