"""A real PostgreSQL 16 with pgvector for tests, started by the tests themselves (no apt, no docker).

The ``pgserver`` wheel (extra ``mcp-memory-testing[postgres]``) bundles PostgreSQL 16 and pgvector.
Its own starter creates a system user and changes permissions up the tree, so it is not used; the
bundled binaries are run directly:

1. ``pgserver/pginstall`` and ``pgserver.libs`` are copied side by side into a world-readable cache
   directory (the binaries find their libraries at ``$ORIGIN/../../../pgserver.libs``), once per
   pgserver version (an atomic rename makes concurrent first runs safe);
2. ``initdb`` and ``pg_ctl start`` run in a fresh temporary directory — as an unprivileged user
   (uid 65534) when the tests run as root, because postgres refuses to run as root;
3. the server listens on 127.0.0.1 and a unix socket in that directory, with ``fsync=off`` (test data);
4. :meth:`PostgresServer.stop` (also at interpreter exit) stops it with ``pg_ctl stop -m immediate``
   and removes the directory.

pytest fixtures (registered by the testing package's pytest plugin; nothing starts unless a test asks):
``postgres_server`` (one server per test session) and ``postgres_url`` (a fresh database per test,
with the ``vector`` extension created).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

UNPRIVILEGED = 65534  # "nobody"
START_TIMEOUT_S = 60


class PostgresUnavailableError(RuntimeError):
    """The bundled PostgreSQL could not be found or started."""


def _pgserver_dirs() -> tuple[Path, Path]:
    """The wheel's ``pginstall`` and ``pgserver.libs`` directories (found without importing pgserver,
    whose own start-up code is not wanted here)."""
    import importlib.util

    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailableError(
            "The PostgreSQL tests need the pgserver wheel: install mcp-memory-testing[postgres] "
            "(uv sync --all-packages --group dev does)."
        )
    package = Path(next(iter(spec.submodule_search_locations))).resolve()
    install, libs = package / "pginstall", package.parent / "pgserver.libs"
    if not (install / "bin" / "pg_ctl").exists():
        raise PostgresUnavailableError(f"pgserver at {package} has no pginstall/bin/pg_ctl.")
    return install, libs


def installed_binaries() -> Path:
    """A world-readable copy of the bundled PostgreSQL (its ``bin`` directory), made once per
    pgserver version under the system temp directory."""
    install, libs = _pgserver_dirs()
    from importlib.metadata import version

    root = Path(tempfile.gettempdir()) / f"mcp-memory-pgserver-{version('pgserver')}"
    bin_dir = root / "pgserver" / "pginstall" / "bin"
    if (bin_dir / "pg_ctl").exists():
        return bin_dir
    staging = Path(tempfile.mkdtemp(prefix="mcp-memory-pgserver-", dir=tempfile.gettempdir()))
    try:
        shutil.copytree(install, staging / "pgserver" / "pginstall", symlinks=True)
        if libs.exists():
            shutil.copytree(libs, staging / "pgserver.libs", symlinks=True)
        for path in [staging, *staging.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o755 if path.is_dir() else path.stat().st_mode | 0o444)
        try:
            staging.rename(root)  # atomic: a concurrent first run keeps whichever copy landed first
        except OSError:
            if not (bin_dir / "pg_ctl").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return bin_dir


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """One throwaway PostgreSQL server (see the module docstring). Use as a context manager, or call
    :meth:`start` and :meth:`stop`."""

    def __init__(self) -> None:
        self.port = 0
        self.directory: Path | None = None
        self._bin: Path | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The ``postgres`` maintenance database, as superuser ``postgres`` (trust auth, loopback)."""
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def _run(self, *args: str, log: Path | None = None) -> None:
        assert self._bin is not None
        as_user: dict[str, Any] = (
            {"user": UNPRIVILEGED, "group": UNPRIVILEGED, "extra_groups": []} if os.geteuid() == 0 else {}
        )
        done = subprocess.run(
            [str(self._bin / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            cwd=self.directory,
            **as_user,
        )
        if done.returncode != 0:
            tail = log.read_text(errors="replace")[-2000:] if log is not None and log.exists() else ""
            raise PostgresUnavailableError(
                f"{args[0]} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-2000:]}"
                + (f"\nserver log:\n{tail}" if tail else "")
            )

    def start(self) -> PostgresServer:
        self._bin = installed_binaries()
        self.directory = Path(tempfile.mkdtemp(prefix="mcp-memory-pg-"))
        data, sockets, log = (
            self.directory / "data",
            self.directory / "sockets",
            self.directory / "server.log",
        )
        data.mkdir()
        sockets.mkdir()
        log.touch()
        if os.geteuid() == 0:
            self.directory.chmod(0o755)
            for path in (data, sockets, log):
                os.chown(path, UNPRIVILEGED, UNPRIVILEGED)
        data.chmod(0o700)
        self._run(
            "initdb",
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        self.port = _free_port()
        options = f"-p {self.port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run(
            "pg_ctl",
            "-D",
            str(data),
            "-w",
            "-t",
            str(START_TIMEOUT_S),
            "-l",
            str(log),
            "-o",
            options,
            "start",
            log=log,
        )
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        with self._lock:
            directory, self.directory = self.directory, None
        if directory is None:
            return
        with contextlib.suppress(Exception):
            self._run("pg_ctl", "-D", str(directory / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(directory, ignore_errors=True)

    def create_database(self) -> str:
        """A fresh database with the ``vector`` extension; returns its URL."""
        import psycopg

        name = f"test_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        url = self.database_url(name)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return url

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL 16 + pgvector for the test session (fails, never skips, without it)."""
    try:
        server = PostgresServer().start()
    except PostgresUnavailableError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A fresh database (with the vector extension) on the session's server."""
    return postgres_server.create_database()
