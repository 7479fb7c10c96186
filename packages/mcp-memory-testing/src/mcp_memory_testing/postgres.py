"""A real PostgreSQL 16 + pgvector server for tests, from the `pgserver` wheel (the `postgres` extra).

The wheel bundles PostgreSQL 16.2 and pgvector 0.6.2; only its binaries are used, not its Python starter
(which calls `useradd` and chmods parent directories when run as root). PostgreSQL refuses to run as root,
so when the tests run as root the server runs as uid/gid 65534 (nobody). The binaries are copied once
per pgserver version into a cache directory that user can read (see `cache_root`); every server gets a
fresh temporary data directory, removed again by `stop`.

    with PostgresServer() as server:
        url = server.create_database("t1")  # postgresql://postgres@127.0.0.1:PORT/t1, vector installed

The postmaster is a child of this process: `stop` (also registered with `atexit`) shuts it down, and on
Linux it gets SIGQUIT (immediate shutdown) if the thread that started it dies, even by SIGKILL. The
temporary directory such a death leaves behind is deleted by the next `start`.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.machinery
import importlib.metadata
import importlib.util
import io
import os
import platform
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "INSTALL_HINT",
    "PostgresError",
    "PostgresServer",
    "cache_root",
    "cached_install",
    "locate_pgserver",
    "missing_requirements",
]

INSTALL_HINT = (
    "install mcp-memory-testing's `postgres` extra (in the mcp-memory workspace: "
    "`uv sync --all-packages --group dev`; elsewhere: `pip install 'mcp-memory-testing[postgres]'`); "
    "pgserver has wheels only for CPython 3.11/3.12 on Linux x86-64, macOS and Windows"
)
NOBODY = 65534  # the uid and gid the server runs as when the tests run as root
_PR_SET_PDEATHSIG = 1
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_DIR_PREFIX = "mcp-memory-testing-pg-"
_OWNER_FILE = "owner.pid"
_PORT_TAKEN = ("could not bind", "could not create any TCP/IP sockets", "Address already in use")


class PostgresError(RuntimeError):
    """The server could not be installed, started or used."""


def missing_requirements() -> str | None:
    """One sentence saying what to install if the `postgres` extra is missing, else None (imports nothing)."""
    missing = [name for name in ("pgserver", "psycopg", "psycopg_pool", "pgvector") if not _importable(name)]
    if not missing:
        return None
    return f"The PostgreSQL test server needs {', '.join(missing)}, which cannot be imported: {INSTALL_HINT}."


def locate_pgserver() -> Path:
    """The `pginstall` directory (bin, lib, share) of the installed pgserver wheel, without importing it.

    `pgserver.libs` (libpq & co, which the binaries find through RPATH `$ORIGIN/../../../pgserver.libs`)
    sits two levels up, next to the `pgserver` package.
    """
    spec = _find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresError(f"pgserver cannot be imported: {INSTALL_HINT}.")
    pginstall = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (pginstall / "bin" / "postgres").is_file():
        raise PostgresError(f"{pginstall} has no bin/postgres: reinstall pgserver==0.1.4.")
    return pginstall


def cache_root() -> Path:
    """Where the copies of pginstall live: $MCP_MEMORY_TESTING_CACHE, else a per-user cache directory.

    As root that is /var/cache/mcp-memory-testing, because root's home is usually private and the
    server, running as nobody, must be able to reach its binaries.
    """
    if override := os.environ.get("MCP_MEMORY_TESTING_CACHE"):
        return Path(override)
    if _is_root():
        return Path("/var/cache/mcp-memory-testing")
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mcp-memory-testing"


def cached_install(root: Path | None = None) -> Path:
    """The `bin` directory of a cached copy of pgserver's PostgreSQL, made on first use.

    The copy is keyed by pgserver's version and the machine; it is built in a private staging directory
    and renamed into place, so concurrent test processes never see half a copy (the loser of the race
    throws its copy away).
    """
    pginstall = locate_pgserver()
    libs = pginstall.parent.parent / "pgserver.libs"
    root = root or cache_root()
    target = root / f"pgserver-{importlib.metadata.version('pgserver')}-{platform.machine()}"
    bin_dir = target / "pgserver" / "pginstall" / "bin"
    if bin_dir.is_dir():
        return bin_dir
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=root))
    try:
        (staging / "pgserver").mkdir()
        shutil.copytree(pginstall, staging / "pgserver" / "pginstall")
        if libs.is_dir():
            shutil.copytree(libs, staging / "pgserver.libs")
        for directory in (staging, staging / "pgserver"):
            directory.chmod(0o755)
        try:
            staging.rename(target)
        except OSError:
            if not bin_dir.is_dir():  # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already after a successful rename
    return bin_dir


class PostgresServer:
    """One PostgreSQL server on 127.0.0.1 (trust auth, user `postgres`, fsync off), for tests.

    `start` copies the binaries into the cache if needed, runs initdb in a new temporary directory,
    starts the postmaster on a free port and installs pgvector in `template1` and `postgres`, so every
    database created afterwards has it. `stop` shuts the server down and deletes the directory; it is
    idempotent, registered with `atexit`, and called on leaving a `with` block.
    """

    def __init__(self, settings: Mapping[str, str] | None = None, start_timeout: float = 60.0) -> None:
        """`settings`: extra server parameters (`-c name=value`); `start_timeout`: seconds per step."""
        self.settings = dict(settings or {})
        self.start_timeout = start_timeout
        self._dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._port = 0

    # -- where it is ------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The TCP port on 127.0.0.1."""
        self._require_running()
        return self._port

    @property
    def url(self) -> str:
        """`postgresql://postgres@127.0.0.1:PORT/postgres`."""
        return self.database_url("postgres")

    @property
    def data_dir(self) -> Path:
        """The cluster's data directory (inside a temporary directory that `stop` removes)."""
        return self._require_dir() / "data"

    @property
    def log_path(self) -> Path:
        """The file receiving initdb's and the server's output."""
        return self._require_dir() / "server.log"

    @property
    def pid(self) -> int:
        """The postmaster's process id."""
        return self._require_running().pid

    def database_url(self, name: str) -> str:
        """The URL of database `name` on this server (which need not exist)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{_check_name(name)}"

    # -- databases --------------------------------------------------------------------------------

    def create_database(self, name: str) -> str:
        """Create an empty database (with the `vector` extension installed) and return its URL."""
        from psycopg import sql

        with self._connect("postgres") as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(_check_name(name))))
        return self.database_url(name)

    def drop_database(self, name: str) -> None:
        """Drop a database if it exists, disconnecting whoever is still connected to it."""
        from psycopg import sql

        with self._connect("postgres") as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(_check_name(name)))
            )

    # -- life cycle -------------------------------------------------------------------------------

    def start(self) -> PostgresServer:
        """Start the server (see the class docstring); raise PostgresError, with the log's tail, on failure.

        Call it from a thread that outlives the server (pytest fixtures run in the main thread): on Linux
        the postmaster gets SIGQUIT when the thread that started it exits.
        """
        if self._dir is not None:
            raise PostgresError("this PostgresServer is already started")
        if problem := missing_requirements():
            raise PostgresError(problem)
        bin_dir = cached_install()
        _remove_abandoned_directories()
        self._dir = Path(tempfile.mkdtemp(prefix=_DIR_PREFIX))
        atexit.register(self.stop)
        try:
            (self._dir / _OWNER_FILE).write_text(str(os.getpid()))
            self._log_file().close()  # created by us, so it stays readable whoever the server runs as
            if _is_root():
                os.chown(self._dir, NOBODY, NOBODY)
                for path in (bin_dir, self._dir):
                    _check_reachable(path)
            self._initdb(bin_dir)
            for attempt in range(3):
                self._port = _free_port()
                try:
                    self._launch(bin_dir)
                    break
                except PostgresError as error:  # the port was taken between choosing and binding it
                    if attempt == 2 or not any(s in str(error) for s in _PORT_TAKEN):
                        raise
            for database in ("template1", "postgres"):
                with self._connect(database) as conn:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Shut the server down (fast, then immediate, then SIGKILL) and delete its directory."""
        process, self._process = self._process, None
        if process is not None:
            for sig, patience in ((signal.SIGINT, 15.0), (signal.SIGQUIT, 5.0), (signal.SIGKILL, 5.0)):
                if process.poll() is not None:
                    break
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=patience)
        directory, self._dir = self._dir, None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        atexit.unregister(self.stop)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- internals --------------------------------------------------------------------------------

    def _initdb(self, bin_dir: Path) -> None:
        command = [str(bin_dir / "initdb"), "-D", str(self.data_dir), "-U", "postgres", "--auth=trust"]
        command += ["-E", "UTF8", "--locale=C", "--no-sync"]
        with self._log_file() as log:
            try:
                done = subprocess.run(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=self.start_timeout,
                    check=False,
                    **_server_user(),
                )
            except subprocess.TimeoutExpired:
                raise self._failure(f"initdb took longer than {self.start_timeout:g} s") from None
        if done.returncode != 0:
            raise self._failure(f"initdb exited with code {done.returncode}")

    def _launch(self, bin_dir: Path) -> None:
        options = {"listen_addresses": "127.0.0.1", "fsync": "off", **self.settings}
        command = [str(bin_dir / "postgres"), "-D", str(self.data_dir), "-p", str(self._port)]
        command += ["-k", str(self._require_dir())]
        for name, value in options.items():
            command += ["-c", f"{name}={value}"]
        with self._log_file() as log:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C at the terminal reaches pytest, which then calls stop()
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
                **_server_user(),
            )
        deadline = time.monotonic() + self.start_timeout
        pid_file = self.data_dir / "postmaster.pid"
        while True:
            code = self._process.poll()
            if code is not None:
                self._process = None
                raise self._failure(f"the server exited with code {code} while starting")
            with contextlib.suppress(OSError):  # line 8 of postmaster.pid is the status pg_ctl waits for
                lines = pid_file.read_text().splitlines()
                if len(lines) >= 8 and lines[7].strip() == "ready":
                    return
            if time.monotonic() > deadline:
                raise self._failure(f"the server was not ready after {self.start_timeout:g} s")
            time.sleep(0.02)

    def _connect(self, database: str) -> psycopg.Connection[Any]:
        import psycopg

        return psycopg.connect(self.database_url(database), autocommit=True, connect_timeout=10)

    def _failure(self, what: str) -> PostgresError:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()[-30:]
        except OSError:
            lines = ["(no log)"]
        tail = "\n".join("    " + line for line in lines)
        return PostgresError(f"PostgreSQL failed to start: {what}. Last lines of the server log:\n{tail}")

    def _log_file(self) -> io.BufferedWriter:
        return self.log_path.open("ab")

    def _require_dir(self) -> Path:
        if self._dir is None:
            raise PostgresError("this PostgresServer is not started")
        return self._dir

    def _require_running(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise PostgresError("this PostgresServer is not running")
        return self._process


def _check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ValueError(f"database name {name!r}: use 1-63 letters, digits and underscores")
    return name


def _find_spec(name: str) -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def _importable(name: str) -> bool:
    return _find_spec(name) is not None


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _server_user() -> dict[str, Any]:
    """subprocess arguments that drop root to nobody (PostgreSQL will not run as root)."""
    return {"user": NOBODY, "group": NOBODY, "extra_groups": []} if _is_root() else {}


def _check_reachable(path: Path) -> None:
    """As root: the server, running as nobody, must be able to reach `path` through every parent."""
    for directory in (path, *path.parents):
        info = directory.stat()
        if not (info.st_mode & stat.S_IXOTH or (info.st_uid == NOBODY and info.st_mode & stat.S_IXUSR)):
            raise PostgresError(
                f"{directory} is not searchable by other users, so the server (uid {NOBODY}) cannot reach "
                f"{path}: chmod o+x it, or point MCP_MEMORY_TESTING_CACHE / TMPDIR elsewhere"
            )


def _remove_abandoned_directories() -> None:
    """Delete the temporary directories of servers whose test process died without `stop` (SIGKILL,
    SIGTERM): their postmaster died with it (parent-death signal), only the files are left."""
    for directory in Path(tempfile.gettempdir()).glob(_DIR_PREFIX + "*"):
        try:
            owner = int((directory / _OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue  # being set up right now, or not ours
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(directory, ignore_errors=True)
        except OSError:
            pass  # alive, under another user


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


_libc: Any = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def _die_with_parent() -> None:
    """Runs in the child between fork and exec (after the uid change, which would reset it)."""
    _libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGQUIT), 0, 0, 0)
