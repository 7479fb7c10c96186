"""The HNSW index of ``passages``: built when the store outgrows exact scans, never before.

Up to ``exact_rows`` vectors every KNN scans exactly (:class:`~.store.PostgresStore`), so an index
there answers nothing, and keeping its graph up to date cost PostgreSQL about 1 ms of CPU an insert
(1.2 ms against 0.2 ms for a store's ``INSERT INTO passages`` on this machine kind: most of a team
store's database work). So a store holds no index until a KNN counts more than ``exact_rows``
vectors; :class:`IndexKeeper` then builds it in a thread of its own, on a connection of its own,
with ``CREATE INDEX CONCURRENTLY`` (every server keeps reading and writing; their KNNs scan, still
exactly, until it is ready). Once built it stays, whatever the store's size later.

Several servers may notice at once: the one that takes the session-level advisory lock
``BUILD_LOCK`` builds, the others leave it to that one (and look again later). An index left invalid
by an interrupted build is dropped only by the lock's holder: another server's build in progress
looks invalid too, and must not be dropped under it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .schema import BUILD_LOCK, BUILD_MEMORY, SCHEMA, VECTOR_INDEX, vector_index_ddl

log = logging.getLogger("mcp_memory_postgres")

# Seconds between two looks at an index another server is building (a KNN past exact_rows asks),
# and after a build of this process failed (the user may not create indexes; the database was down).
RECHECK_SECONDS = 5.0
RETRY_AFTER_FAILURE_SECONDS = 60.0


def index_valid(conn: Any) -> bool | None:
    """Whether the HNSW index is usable: None when it does not exist, False while it is being built
    concurrently or when an interrupted build left it invalid."""
    row = conn.execute(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s",
        (SCHEMA, VECTOR_INDEX),
    ).fetchone()
    return None if row is None else bool(row[0])


@contextlib.contextmanager
def _build_lock(conn: Any) -> Iterator[bool]:
    """Hold ``BUILD_LOCK`` (session-level) for the block if no other server does; yields whether it
    is held (``conn`` in autocommit mode)."""
    (held,) = conn.execute("SELECT pg_try_advisory_lock(%s)", (BUILD_LOCK,)).fetchone()
    try:
        yield bool(held)
    finally:
        if held:
            conn.execute("SELECT pg_advisory_unlock(%s)", (BUILD_LOCK,))


def _drop_index(conn: Any) -> None:
    conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {SCHEMA}.{VECTOR_INDEX}")


def build_index(conn: Any) -> bool:
    """Build the HNSW index without blocking other servers' writes (``conn`` in autocommit mode),
    unless another server holds ``BUILD_LOCK``. True when the index is valid afterwards."""
    import psycopg

    with _build_lock(conn) as held:
        if not held:
            return False  # another server builds it
        valid = index_valid(conn)
        if valid:
            return True
        started = time.perf_counter()
        if valid is False:  # nobody else builds (we hold the lock): an interrupted build's leftover
            _drop_index(conn)
        # The graph is built in memory when it fits: far faster than the 64 MB default allows.
        conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (BUILD_MEMORY,))
        try:
            conn.execute(vector_index_ddl(concurrently=True))
        except (psycopg.errors.DuplicateTable, psycopg.errors.UniqueViolation):
            pass  # created meanwhile by a server of an older version (no lock)
        finally:
            conn.execute("RESET maintenance_work_mem")
        log.info("vector index built in %.1f s", time.perf_counter() - started)
        return bool(index_valid(conn))


def drop_leftover(conn: Any) -> None:
    """Drop an invalid index an interrupted build left (``conn`` in autocommit mode), unless another
    server is building it right now."""
    with _build_lock(conn) as held:
        if held and index_valid(conn) is False:
            _drop_index(conn)


class IndexKeeper:
    """Builds the index in the background the first time a KNN counts more than ``exact_rows``
    vectors (:meth:`wanted`), at most one build thread a process, looking again at most every
    ``recheck_seconds`` while another server builds it."""

    def __init__(
        self,
        connect: Callable[[], Any],
        *,
        recheck_seconds: float = RECHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._connect = connect  # a new autocommit connection (a build holds it for minutes)
        self._recheck = recheck_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._ready = False
        self._thread: threading.Thread | None = None
        self._next_look = float("-inf")
        self._failures = 0

    @property
    def ready(self) -> bool:
        return self._ready

    def known_ready(self) -> None:
        """The index was seen valid (or just built) by the store itself."""
        self._ready = True

    def forget(self) -> None:
        """The index was dropped (a bulk load): the next KNN past ``exact_rows`` looks again."""
        with self._lock:
            self._ready = False
            self._next_look = float("-inf")

    def wanted(self) -> None:
        """A KNN counted more than ``exact_rows`` vectors: make sure the index exists or is coming.
        Returns at once (the KNN scans exactly meanwhile)."""
        if self._ready:
            return
        with self._lock:
            if self._ready or (self._thread is not None and self._thread.is_alive()):
                return
            if self._clock() < self._next_look:
                return
            self._next_look = self._clock() + self._recheck
            self._thread = threading.Thread(target=self._build, name="mcp-memory-vector-index", daemon=True)
            self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        """Wait for a build this process started (tests; closing the store)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _build(self) -> None:
        try:
            with self._connect() as conn:
                if build_index(conn):
                    self._ready = True
        except Exception as exc:  # a KNN past exact_rows tries again later; meanwhile they scan
            with self._lock:
                self._failures += 1
                self._next_look = self._clock() + RETRY_AFTER_FAILURE_SECONDS
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            log.log(
                logging.WARNING if self._failures == 1 else logging.DEBUG,
                "Building the vector index failed (%s); searches scan every vector until it exists, "
                "and it is tried again every %.0f s.",
                first,
                RETRY_AFTER_FAILURE_SECONDS,
            )
