"""Choosing a SQLite binding that can load sqlite-vec and has FTS5.

Many Pythons cannot load SQLite extensions: Debian's and Ubuntu's ``python3``, and pyenv builds made
without ``--enable-loadable-sqlite-extensions`` lack ``sqlite3.Connection.enable_load_extension``.
Order of preference: the stdlib ``sqlite3`` when it can load sqlite-vec and has FTS5, then
``sqlean`` (sqlean.py, a declared dependency), then ``pysqlite3`` (pysqlite3-binary, if installed).
``MCP_MEMORY_SQLITE_BINDING`` (``stdlib`` | ``sqlean`` | ``pysqlite3``) forces one.
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from mcp_memory_core.errors import PluginError

BINDINGS: dict[str, str] = {"stdlib": "sqlite3", "sqlean": "sqlean", "pysqlite3": "pysqlite3.dbapi2"}
ENV_VAR = "MCP_MEMORY_SQLITE_BINDING"

_lock = threading.Lock()
_cache: dict[str | None, Binding] = {}


class BindingError(PluginError, RuntimeError):
    """No usable SQLite binding: none can load sqlite-vec with FTS5 (or the one asked for is unknown)."""


@dataclass(frozen=True)
class Binding:
    """A DB-API module that can load sqlite-vec, with the versions it runs."""

    name: str
    module: ModuleType
    sqlite_version: str
    vec_version: str

    def connect(self, database: str, timeout: float) -> Any:
        """A connection in autocommit mode (we issue BEGIN ourselves), usable from any thread
        (callers serialize access), with sqlite-vec loaded."""
        conn = self.module.connect(database, timeout=timeout, isolation_level=None, check_same_thread=False)
        try:
            load_vec(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def describe(self) -> str:
        return f"{self.name} (SQLite {self.sqlite_version}), sqlite-vec {self.vec_version}"


def load_vec(conn: Any) -> None:
    import sqlite_vec  # type: ignore[import-untyped]

    conn.enable_load_extension(True)
    try:
        sqlite_vec.load(conn)
    finally:
        conn.enable_load_extension(False)


def _probe(name: str) -> Binding:
    """Import binding ``name`` and prove it works: load sqlite-vec, create an FTS5 table."""
    module = importlib.import_module(BINDINGS[name])
    if not hasattr(module.Connection, "enable_load_extension"):
        raise BindingError(f"{name}: this build cannot load SQLite extensions (no enable_load_extension)")
    conn = module.connect(":memory:", isolation_level=None)
    try:
        load_vec(conn)
        (vec_version,) = conn.execute("SELECT vec_version()").fetchone()
        conn.execute("CREATE VIRTUAL TABLE temp.probe USING fts5(x, tokenize='porter unicode61')")
        (sqlite_version,) = conn.execute("SELECT sqlite_version()").fetchone()
    finally:
        conn.close()
    return Binding(name=name, module=module, sqlite_version=sqlite_version, vec_version=vec_version)


def select_binding(preferred: str | None = None) -> Binding:
    """The first binding that works (``preferred`` or ``$MCP_MEMORY_SQLITE_BINDING`` forces one).

    Raises :class:`BindingError` naming every binding tried and why it failed.
    """
    preferred = (preferred or os.environ.get(ENV_VAR) or "").strip().lower() or None
    with _lock:
        if preferred in _cache:
            return _cache[preferred]
        if preferred is not None and preferred not in BINDINGS:
            raise BindingError(
                f"{ENV_VAR}={preferred!r} is not a SQLite binding. Choose one of: {', '.join(BINDINGS)}."
            )
        order = [preferred] if preferred else list(BINDINGS)
        failures: list[str] = []
        for name in order:
            try:
                binding = _probe(name)
            except Exception as exc:  # ImportError, missing load_extension, no FTS5, sqlite-vec failed
                failures.append(f"{name}: {type(exc).__name__}: {exc}")
                continue
            _cache[preferred] = binding
            return binding
        raise BindingError(
            "No SQLite binding can load sqlite-vec with FTS5 here. Tried: "
            + "; ".join(failures)
            + ". Install sqlean-py (`pip install sqlean-py`), or use a Python built with loadable "
            "SQLite extensions."
        )
