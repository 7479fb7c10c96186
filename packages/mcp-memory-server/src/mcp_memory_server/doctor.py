"""``mcp-memory doctor``: what to look at when an MCP client says "disconnected".

Each check returns a :class:`Check` (ok / warn / fail, one sentence, and for warn and fail the fix to
apply). The checks share one :class:`Context` that reads the settings, loads the plugins, builds the
store and the embedder once; whatever fails there becomes the failing check's answer, never a
traceback. Nothing is created or written: the store is built with ``create_database=False`` and only
its optional ``diagnose()`` reads the data (read-only); the handshake spawns this same server over
stdio with the caller's environment. No network.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.metadata
import logging
import math
import os
import platform
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp_memory_core.plugins import PluginManager
    from mcp_memory_core.protocols import StoreDiagnosis
    from mcp_memory_core.settings import Settings

Status = Literal["ok", "warn", "fail"]

PREFIX = "MCP_MEMORY_"
HANDSHAKE_TIMEOUT_S = 30.0
SLOW_HANDSHAKE_S = 5.0  # some clients give up after 10-60 s; the server answers in well under one
SLOW_LOAD_S = 30.0
LOW_SPACE_BYTES = 500 << 20
NO_SPACE_BYTES = 50 << 20
STDERR_LINES = 12
EXPECTED_TOOL = "store_memory"
# Read straight from the environment, outside any settings model.
OTHER_VARIABLES = frozenset({"MCP_MEMORY_VAULT", "MCP_MEMORY_TESTING_CACHE"})
REPORT_BUG = (
    "This is a bug in mcp-memory doctor or in a plugin: please report it with the output of "
    "`mcp-memory doctor --json`."
)


@dataclass(frozen=True)
class Check:
    """One line of the report. ``fix`` is set for warn and fail."""

    name: str
    status: Status
    message: str
    fix: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ok(name: str, message: str, **details: Any) -> Check:
    return Check(name, "ok", message, None, details)


def warn(name: str, message: str, fix: str, **details: Any) -> Check:
    return Check(name, "warn", message, fix, details)


def fail(name: str, message: str, fix: str, **details: Any) -> Check:
    return Check(name, "fail", message, fix, details)


class NotChecked(Exception):
    """Raised inside a check that depends on something another check already reports as broken."""


# -- what the checks share ------------------------------------------------------------------------
class Context:
    """Settings, plugins, store, diagnosis and embedder, each built once on first use. A step that
    failed raises :class:`NotChecked` in every later check that needs it (its own check reports it)."""

    def __init__(self, plugins: PluginManager | None = None) -> None:
        self.environ = dict(os.environ)  # what the settings read, and what the spawned server gets
        self._plugins = plugins
        self._done: dict[str, Any] = {}
        self._errors: dict[str, Exception] = {}

    def _once(self, key: str, build: Callable[[], Any]) -> Any:
        if key in self._errors:
            raise self._errors[key]
        if key not in self._done:
            try:
                self._done[key] = build()
            except Exception as exc:
                self._errors[key] = exc
                raise
        return self._done[key]

    def error(self, key: str) -> Exception | None:
        return self._errors.get(key)

    def settings(self) -> Settings:
        from .config import load_settings

        def build() -> Settings:
            settings = load_settings()
            # Never create a database (nor a vault's index) at a mistyped path.
            return settings.model_copy(update={"create_database": False})

        return self._need("settings", build, "the settings are invalid (see the settings check)")  # type: ignore[no-any-return]

    def plugins(self) -> PluginManager:
        from mcp_memory_core.plugins import plugin_manager_from_settings

        def build() -> PluginManager:
            if self._plugins is not None:
                return self._plugins
            # Never strict here: every broken plugin is reported, not only the first.
            return plugin_manager_from_settings(strict=False, disabled=self.settings().disable_plugins)

        return self._need("plugins", build, "the plugins could not be loaded (see the plugins check)")  # type: ignore[no-any-return]

    def package(self, kind: str, name: str) -> str:
        """The distribution that registered backend ``name`` of ``kind`` (``?`` if unknown)."""
        for row in self.plugins().backends():
            if row.kind == kind and row.name == name:
                return row.package
        return "?"

    def store(self) -> Any:
        from .assembly import built

        def build() -> Any:
            settings = self.settings()
            return built("store", self.plugins().store(settings.store), settings)

        return self._need("store", build, "the store could not be built (see the database check)")

    def diagnosis(self) -> StoreDiagnosis | None:
        """The store's own ``diagnose()``, or None when it offers none."""

        def build() -> StoreDiagnosis | None:
            diagnose = getattr(self.store(), "diagnose", None)
            return diagnose() if callable(diagnose) else None

        return self._need("diagnosis", build, "the store could not be read (see the database check)")  # type: ignore[no-any-return]

    def embedder(self) -> Any:
        from .assembly import built

        def build() -> Any:
            settings = self.settings()
            return built("embedder", self.plugins().embedder(settings.embedder), settings)

        return self._need("embedder", build, "the embedder could not be built (see the embedder check)")

    def _need(self, key: str, build: Callable[[], Any], why: str) -> Any:
        """``_once`` for a later check: a failure already reported elsewhere is NotChecked."""
        if key in self._errors and not isinstance(self._errors[key], NotChecked):
            raise NotChecked(why) from self._errors[key]
        return self._once(key, build)


def guarded(name: str, check: Callable[[Context], Check], ctx: Context) -> Check:
    """Run one check; what it could not check, or an error nobody expected, is its answer."""
    try:
        return check(ctx)
    except NotChecked as exc:
        return warn(name, f"Not checked: {exc}.", "Fix the failing check above first, then run doctor again.")
    except Exception as exc:
        return fail(name, f"The check itself failed: {type(exc).__name__}: {exc}", REPORT_BUG)


def first_failure(ctx: Context, key: str, build: Callable[[], Any]) -> Exception | None:
    """Build ``key`` and return what went wrong (None when it worked): the check that reports ``key``."""
    known = ctx.error(key)
    if known is not None and not isinstance(known, NotChecked):
        return known
    try:
        build()
    except NotChecked:
        raise
    except Exception:
        return ctx.error(key)
    return None


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
def _env_names(model: Any) -> dict[str, str]:
    """``{ENVIRONMENT VARIABLE: field}`` of a pydantic-settings model."""
    prefix = str(model.model_config.get("env_prefix", ""))
    names = {}
    for name, info in model.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else None
        names[(alias or f"{prefix}{name}").upper()] = name
    return names


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
    for variable, name in _env_names(model).items():
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
    known: set[str] = set()
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
            if model is None:
                continue
            known |= set(_env_names(model))
            if (kind, name) in selected:
                with contextlib.suppress(Exception):  # invalid values: the embedder/store check says so
                    rows += _describe(model, model(), ctx.environ, f"{kind} {name}")
    return rows, known


def _location(ctx: Context, settings: Settings) -> str:
    """Where the selected store keeps its data (its database file, vault or redacted URL)."""
    with contextlib.suppress(Exception):  # a store that cannot be built: the database check says why
        return str(ctx.store().location)
    return str(settings.db_path)


def check_settings(ctx: Context) -> Check:
    from mcp_memory_core.settings import Settings

    problem = first_failure(ctx, "settings", ctx.settings)
    if problem is not None:
        return fail(
            "settings",
            f"{problem}.",
            "Correct or unset each MCP_MEMORY_ variable it names, where the server gets its environment "
            '(your MCP client\'s "env" in its config) and in this shell.',
        )
    settings = ctx.settings()
    rows = _describe(Settings, settings, ctx.environ, "core")
    known = set(_env_names(Settings)) | OTHER_VARIABLES
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
    unknown = sorted(
        key
        for key in ctx.environ
        if key.upper().startswith(PREFIX) and key.upper() not in known and ctx.environ[key] != ""
    )
    if unknown and complete:
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key.upper(), sorted(known), n=1, cutoff=0.8)
            hints.append(f"{key} (did you mean {close[0]}?)" if close else key)
        return warn(
            "settings",
            f"{core} ({source}); no installed plugin reads {', '.join(hints)}.",
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


# -- 3. the data directory and the database file ----------------------------------------------------
def _data_path(ctx: Context) -> Path | None:
    """The local file the store keeps its data in: its diagnosis says; else its location when that is
    an absolute path; None for data that is not a local file (a PostgreSQL URL, in memory)."""
    with contextlib.suppress(NotChecked):  # a store that cannot be read: its location still tells
        diagnosis = ctx.diagnosis()
        if diagnosis is not None:
            return Path(diagnosis.path) if diagnosis.path else None
    location = str(getattr(ctx.store(), "location", ""))
    return Path(location) if location and os.path.isabs(location) else None


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _can_open(path: Path, mode: str) -> str | None:
    """Open ``path`` for real (os.access is not enough: root, ACLs, read-only mounts); the error or None."""
    try:
        with path.open(mode):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _can_create_in(folder: Path) -> str | None:
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".mcp-memory-doctor-"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def _blocked_folder(path: Path) -> Path | None:
    """The first existing folder above ``path``, from the root down, that this user may not enter
    (no search permission: nothing inside can even be looked at), if any."""
    for folder in reversed(path.parents):
        if not folder.is_dir():
            return None
        if not os.access(folder, os.X_OK):
            return folder
    return None


def check_storage(ctx: Context) -> Check:
    settings = ctx.settings()
    path = _data_path(ctx)
    if path is None:
        where = getattr(ctx.store(), "location", "?")
        return ok("storage", f"The {settings.store} store keeps its data at {where}: not a local file.")
    moved = (
        "Set MCP_MEMORY_DB_PATH to a file in a folder you can write, or fix the permissions "
        f"(`chown -R $USER {path.parent}`)."
    )
    blocked = _blocked_folder(path)
    if blocked is not None:
        return fail(
            "storage",
            f"{path} cannot be read: this user may not enter the folder {blocked} (permission denied).",
            moved,
            path=str(path),
        )
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None:
        return fail("storage", f"No part of {path} exists.", moved)
    if existing != path:  # the file (and maybe its folder) is created on first use
        if not existing.is_dir():
            return fail(
                "storage",
                f"{path} cannot be created: {existing} is a file, not a folder.",
                "Set MCP_MEMORY_DB_PATH to a path inside a folder (or move that file away).",
                path=str(path),
            )
        why = _can_create_in(existing) if os.access(existing, os.W_OK | os.X_OK) else "permission denied"
        if why is not None:
            return fail("storage", f"{path} cannot be created: {existing} is not writable ({why}).", moved)
        state = f"{path} does not exist yet; the server creates it on first use (in {existing}, writable)"
    else:
        if path.is_dir():
            return fail(
                "storage",
                f"{path} is a folder, not a database file.",
                "Set MCP_MEMORY_DB_PATH to a file path (e.g. …/memories.db).",
            )
        access = {"read": os.access(path, os.R_OK), "write": os.access(path, os.W_OK)}
        read_error = _can_open(path, "rb") if access["read"] else "permission denied"
        if read_error is not None:
            return fail("storage", f"{path} cannot be read ({read_error}).", moved, path=str(path))
        write_error = _can_open(path, "r+b") if access["write"] else "permission denied"
        folder_error = (
            _can_create_in(path.parent) if os.access(path.parent, os.W_OK | os.X_OK) else "permission denied"
        )
        if write_error is not None or folder_error is not None:
            what = (
                f"the file ({write_error})"
                if write_error
                else f"its folder ({folder_error}; SQLite's -wal file)"
            )
            return warn(
                "storage",
                f"{path} can be read but not written: {what}. Search works; storing fails.",
                moved,
                path=str(path),
            )
        state = f"{path} is readable and writable"
    free = shutil.disk_usage(existing if existing.is_dir() else existing.parent).free
    details = {"path": str(path), "free_bytes": free}
    if free < NO_SPACE_BYTES:
        return fail(
            "storage",
            f"{state}, but only {_size(free)} free on its disk.",
            "Free some disk space.",
            **details,
        )
    if free < LOW_SPACE_BYTES:
        return warn(
            "storage", f"{state}; {_size(free)} free on its disk.", "Free some disk space soon.", **details
        )
    return ok("storage", f"{state}; {_size(free)} free.", **details)


# -- 4. integrity and schema ------------------------------------------------------------------------
def check_database(ctx: Context) -> Check:
    from mcp_memory_core.errors import UnknownBackendError

    settings = ctx.settings()
    problem = first_failure(ctx, "store", ctx.store)
    if isinstance(problem, UnknownBackendError):
        raise NotChecked("the store is not installed (see the plugins check)")
    if problem is not None:
        return fail("database", str(problem), "Correct the variables it names.")
    problem = first_failure(ctx, "diagnosis", ctx.diagnosis)
    if isinstance(problem, PermissionError):
        raise NotChecked("the database cannot be opened by this user (see the storage check)")
    if problem is not None:
        fix = (
            "Install sqlean-py (`pip install sqlean-py`), or use a Python whose sqlite3 can load extensions; "
            "MCP_MEMORY_SQLITE_BINDING forces one binding."
            if type(problem).__name__ == "BindingError"
            else REPORT_BUG
        )
        return fail("database", f"{type(problem).__name__}: {problem}", fix)
    diagnosis = ctx.diagnosis()
    store = ctx.store()
    if diagnosis is None:
        return ok(
            "database",
            f"Not checked: the {settings.store} store offers no diagnose() (integrity and schema).",
            location=str(getattr(store, "location", "?")),
        )
    details = {
        "path": diagnosis.path,
        "schema_version": diagnosis.schema_version,
        "supported_schema_version": diagnosis.supported_schema_version,
        "model_id": diagnosis.model_id,
        "dimensions": diagnosis.dimensions,
        "problems": list(diagnosis.problems),
        **diagnosis.details,
    }
    where = diagnosis.path or getattr(store, "location", "?")
    if not diagnosis.exists:
        return ok("database", f"No database yet at {where}: nothing stored so far.", **details)
    if diagnosis.problems:
        first = diagnosis.problems[0]
        if "another program" in first:
            fix = "Set MCP_MEMORY_DB_PATH to a new file (this one belongs to something else)."
        else:
            fix = (
                f"Stop every mcp-memory server using it, then restore {where} from a backup; or move it "
                f"aside (`mv {where} {where}.damaged`: the server starts a new, empty database) and "
                "`mcp-memory import` an export you have."
            )
            if callable(getattr(store, "reset_index", None)):
                fix = "It is an index derived from your notes: rebuild it with `mcp-memory reindex`."
        more = f" (and {len(diagnosis.problems) - 1} more)" if len(diagnosis.problems) > 1 else ""
        return fail("database", f"{first}{more}", fix, **details)
    found, supported = diagnosis.schema_version, diagnosis.supported_schema_version
    package = ctx.package("store", settings.store)
    if found is not None and supported is not None and found > supported:
        return fail(
            "database",
            f"{where} has schema version {found}, newer than this {package} understands ({supported}): "
            "it was written by a newer mcp-memory.",
            "Upgrade mcp-memory (`uv tool upgrade mcp-memory-stack`, `pip install -U mcp-memory-stack`, or "
            "`git pull && uv sync` in a clone), or set MCP_MEMORY_DB_PATH to another file.",
            **details,
        )
    counts = diagnosis.details
    summary = (
        f"{where}: intact, schema {found}"
        + (
            f" (upgraded to {supported} in place on the next start)"
            if found and supported and found < supported
            else ""
        )
        + (
            f", {counts['memories']} memories ({counts.get('current_memories', '?')} current)"
            if "memories" in counts
            else ""
        )
        + (f", {counts['vectors']} vectors" if "vectors" in counts else "")
        + (f", {_size(int(counts['size_bytes']))}" if "size_bytes" in counts else "")
        + "."
    )
    return ok("database", summary, **details)


# -- 6. the embedder, and vectors of another model ---------------------------------------------------
def check_embedder(ctx: Context) -> Check:
    import numpy as np

    settings = ctx.settings()
    name = settings.embedder
    problem = first_failure(ctx, "embedder", ctx.embedder)
    if problem is not None:
        from mcp_memory_core.errors import UnknownBackendError

        if isinstance(problem, UnknownBackendError):
            return fail(
                "embedder",
                str(problem),
                "Set MCP_MEMORY_EMBEDDER to one of the names listed (unset: minilm), or install the plugin "
                f"that provides {name!r}.",
            )
        return fail(
            "embedder", f"The embedder {name!r} cannot be built: {problem}", "Correct the variables it names."
        )
    embedder = ctx.embedder()
    package = ctx.package("embedder", name)
    started = time.perf_counter()
    try:
        embedder.load()
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        vector = np.asarray(embedder.embed_query("Where does mcp-memory keep its data?"))
        query_ms = (time.perf_counter() - started) * 1000
        model_id, dimensions = str(embedder.model_id), int(embedder.dimensions)
    except Exception as exc:
        return fail(
            "embedder",
            f"The embedder {name!r} ({package}) failed to load: {type(exc).__name__}: {exc}",
            f"Reinstall {package} (`pip install --force-reinstall {package}`, or `uv sync` in a clone), or "
            f"choose another embedder with MCP_MEMORY_EMBEDDER (one of: {', '.join(ctx.plugins().names('embedder'))}).",
            package=package,
        )
    details = {
        "model_id": model_id,
        "dimensions": dimensions,
        "load_seconds": round(loaded, 3),
        "query_ms": round(query_ms, 1),
    }
    norm = float(np.linalg.norm(vector)) if vector.size else 0.0
    if (
        vector.shape != (dimensions,)
        or not np.isfinite(vector).all()
        or not math.isclose(norm, 1.0, abs_tol=1e-3)
    ):
        return fail(
            "embedder",
            f"The embedder {name!r} made a vector of shape {vector.shape} and norm {norm:.3f}, not a "
            f"({dimensions},) unit vector.",
            f"Report it to the authors of {package}; meanwhile choose another embedder (MCP_MEMORY_EMBEDDER).",
            **details,
        )
    message = (
        f"{name} ({model_id}, {dimensions}-d) loaded in {loaded:.2f} s; a query embeds in {query_ms:.0f} ms."
    )
    if loaded > SLOW_LOAD_S:
        return warn(
            "embedder",
            message + " Searches wait for it after each start.",
            "Use the default embedder (minilm) or a smaller model.",
            **details,
        )
    return ok("embedder", message, **details)


def _writer_of(ctx: Context, model_id: str) -> str | None:
    """The installed embedder whose model is ``model_id`` (factories are cheap: nothing loads)."""
    from .assembly import built

    pm, settings = ctx.plugins(), ctx.settings()
    for name in pm.names("embedder"):
        with contextlib.suppress(Exception):
            if str(built("embedder", pm.embedder(name), settings).model_id) == model_id:
                return name
    return None


def check_model(ctx: Context) -> Check:
    settings = ctx.settings()
    diagnosis = ctx.diagnosis()
    if diagnosis is None:
        return ok(
            "model",
            f"Not checked: the {settings.store} store offers no diagnose(); it checks the model itself on open.",
        )
    if diagnosis.problems:
        raise NotChecked("the database cannot be read (see the database check)")
    if diagnosis.model_id is None:
        return ok(
            "model", "No vectors stored yet: the database is bound to the embedder's model on first use."
        )
    embedder = ctx.embedder()
    configured, dims = str(embedder.model_id), int(embedder.dimensions)
    details = {
        "stored": diagnosis.model_id,
        "stored_dimensions": diagnosis.dimensions,
        "configured": configured,
        "configured_dimensions": dims,
    }
    if (diagnosis.model_id, diagnosis.dimensions) == (configured, dims):
        return ok(
            "model", f"The stored vectors are from {configured}, the configured embedder's model.", **details
        )
    where = diagnosis.path or getattr(ctx.store(), "location", "?")
    writer = _writer_of(ctx, diagnosis.model_id)
    message = (
        f"{where} holds vectors of {diagnosis.model_id!r} ({diagnosis.dimensions}-d), but the configured "
        f"embedder {settings.embedder!r} makes {configured!r} ({dims}-d): the server refuses to open it "
        "(vectors of different models cannot be compared)."
    )
    back = (
        f"set MCP_MEMORY_EMBEDDER={writer} again (the embedder that wrote it)"
        if writer
        else ("install and select the embedder that wrote it")
    )
    store = ctx.store()
    capabilities = store.capabilities
    if capabilities.derived_index:
        return warn(
            "model",
            f"The newest index of {where} is of {diagnosis.model_id!r}; the configured embedder "
            f"{settings.embedder!r} makes {configured!r}, which gets an index of its own, built from "
            "the notes at the first call.",
            "Build it now, with a progress bar: `mcp-memory reindex` (the other model's index stays "
            "for servers still using it).",
            **details,
        )
    if capabilities.reembed:
        fix = (
            f"Run `mcp-memory reindex` (re-embeds every memory with {settings.embedder} in place; "
            f"resumable; servers on the old model keep working until it switches), or {back}."
        )
    else:
        old = f"MCP_MEMORY_EMBEDDER={writer} " if writer else ""
        fix = (
            f"Either {back}, or move the memories to the new model: `{old}mcp-memory export --all-namespaces "
            "-o memories.jsonl`, then set MCP_MEMORY_DB_PATH to a new file and run `mcp-memory import "
            f"memories.jsonl` (it embeds them again with {settings.embedder})."
        )
    return fail("model", message, fix, writer=writer, **details)


# -- 7. the stdio handshake -----------------------------------------------------------------------
@contextlib.contextmanager
def _quiet_sdk() -> Iterator[None]:
    """The SDK logs every unparsable stdout line with a traceback: the check reports them instead."""
    sdk = logging.getLogger("mcp")
    level = sdk.level
    sdk.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        sdk.setLevel(level)


def _stray(exc: Exception) -> str:
    """The stdout line behind a parse error of the SDK's reader."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            value = errors()[0].get("input")
            if isinstance(value, str | bytes):
                text = value.decode(errors="replace") if isinstance(value, bytes) else value
                return text[:200]
    return f"{type(exc).__name__}: {exc}"[:200]


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups of the SDK's task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _tail(text: str, lines: int = STDERR_LINES) -> str:
    kept = [line for line in text.splitlines() if line.strip()][-lines:]
    return "\n".join(kept)


def server_command() -> list[str]:
    """This same server, as the ``mcp-memory`` script runs it."""
    return [sys.executable, "-m", "mcp_memory_server"]


async def _talk(environ: Mapping[str, str], errlog: Any, stray: list[str], timeout: float) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            stray.append(_stray(message))

    command = server_command()
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(environ), cwd=os.getcwd())
    times: dict[str, Any] = {}
    with anyio.fail_after(timeout):
        started = time.perf_counter()
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            init = await session.initialize()
            times["initialize_ms"] = round((time.perf_counter() - started) * 1000, 1)
            listed = await session.list_tools()
            times["tools_list_ms"] = round((time.perf_counter() - started) * 1000 - times["initialize_ms"], 1)
            times["server"] = f"{init.server_info.name} {init.server_info.version}"
            times["protocol_version"] = str(init.protocol_version)
            times["tools"] = [tool.name for tool in listed.tools]
    return times


def check_handshake(ctx: Context, timeout: float = HANDSHAKE_TIMEOUT_S) -> Check:
    import anyio

    command = " ".join(server_command())
    stray: list[str] = []
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog, _quiet_sdk():
        error: BaseException | None = None
        result: dict[str, Any] = {}
        try:
            result = anyio.run(_talk, ctx.environ, errlog, stray, timeout)
        except TimeoutError:
            error = TimeoutError(f"no answer within {timeout:.0f} s")
        except Exception as exc:
            error = _leaf(exc)
        errlog.seek(0)
        stderr = _tail(errlog.read())
    details: dict[str, Any] = {"command": command, **result}
    quoted = f" Its stderr ends with:\n{stderr}" if stderr else " It wrote nothing to stderr."
    if stray:
        return fail(
            "handshake",
            f"`{command}` wrote to stdout what is not MCP: {stray[0]!r}"
            + (f" (and {len(stray) - 1} more lines)" if len(stray) > 1 else "")
            + ": clients fail or disconnect.",
            "Something prints to stdout when the server starts (a plugin, a sitecustomize or .pth file, "
            "a shell profile): run the command in a terminal to see it, and remove the print (logs belong "
            "on stderr).",
            stdout=stray,
            stderr=stderr,
            **details,
        )
    if error is not None:
        message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return fail(
            "handshake",
            f"`{command}` did not complete initialize + tools/list ({message}).{quoted}",
            "Run the command in a terminal with the same environment and read its error; the checks above "
            "usually name the cause.",
            stderr=stderr,
            **details,
        )
    if EXPECTED_TOOL not in result.get("tools", []):
        return fail(
            "handshake",
            f"`{command}` answered, but lists no {EXPECTED_TOOL} tool (tools: {', '.join(result.get('tools', []))}).",
            REPORT_BUG,
            stderr=stderr,
            **details,
        )
    message = (
        f"{result['server']} answered initialize in {result['initialize_ms']:.0f} ms and tools/list "
        f"({len(result['tools'])} tools) in {result['tools_list_ms']:.0f} ms (protocol {result['protocol_version']})."
    )
    if result["initialize_ms"] > SLOW_HANDSHAKE_S * 1000:
        return warn(
            "handshake",
            message + " Slow: some clients give up.",
            "Something slows the start (a slow disk, an antivirus scanning the environment, a heavy plugin "
            "import): run the command in a terminal with MCP_MEMORY_LOG_LEVEL=DEBUG.",
            **details,
        )
    return ok("handshake", message, **details)


# -- the whole run ----------------------------------------------------------------------------------
CHECKS: tuple[tuple[str, Callable[[Context], Check]], ...] = (
    ("versions", check_versions),
    ("settings", check_settings),
    ("plugins", check_plugins),
    ("storage", check_storage),
    ("database", check_database),
    ("embedder", check_embedder),
    ("model", check_model),
)


def run_checks(
    *,
    plugins: PluginManager | None = None,
    handshake: bool = True,
    timeout: float = HANDSHAKE_TIMEOUT_S,
) -> list[Check]:
    """Every check, in order (the handshake last), on this process's environment. ``plugins`` replaces
    the installed plugins (tests); the spawned server of the handshake loads its own."""
    ctx = Context(plugins)
    results = [guarded(name, check, ctx) for name, check in CHECKS]
    if handshake:
        results.append(guarded("handshake", lambda c: check_handshake(c, timeout), ctx))
    return results


def failed(results: list[Check]) -> bool:
    return any(check.status == "fail" for check in results)
