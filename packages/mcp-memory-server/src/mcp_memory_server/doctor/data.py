"""Checks 3, 4 and 6: the data folder and file, the database's integrity and schema, the embedder
and vectors of another model."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


from .report import (
    LOW_SPACE_BYTES,
    NO_SPACE_BYTES,
    REPORT_BUG,
    SLOW_LOAD_S,
    Check,
    Context,
    NotChecked,
    fail,
    first_failure,
    ok,
    warn,
)


# -- 3. the data directory and the database file ----------------------------------------------------
def _data_path(ctx: Context) -> Path | None:
    """The local file the store keeps its data in: its diagnosis says; else its location when that is
    an absolute path; None for data that is not a local file (a PostgreSQL URL, in memory)."""
    with contextlib.suppress(NotChecked):  # a store that cannot be read: its location still tells
        diagnosis = ctx.diagnosis()
        if diagnosis is not None:
            return Path(diagnosis.path) if diagnosis.path else None
    location = str(ctx.store().location)
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
        where = ctx.store().location
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
        if not path.is_file():  # /dev/null: SQLite would open it, keep a journal beside it, store nothing
            return fail(
                "storage",
                f"{path} is a device or other special file, not a database file: nothing stored would be kept.",
                "Set MCP_MEMORY_DB_PATH to a file path (e.g. …/memories.db).",
                path=str(path),
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
    from mcp_memory_core.protocols import IndexRebuilding

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
            location=str(store.location),
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
    where = diagnosis.path or store.location
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
            if isinstance(store, IndexRebuilding):
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
        + (
            f", {counts['pending_passages']} long "
            f"{'memory' if counts['pending_passages'] == 1 else 'memories'} waiting for their sentences' "
            "vectors (a running server adds them when idle; the next start does otherwise)"
            if counts.get("pending_passages")
            else ""
        )
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
    from ..runtime.assembly import built

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
    where = diagnosis.path or ctx.store().location
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
