"""SqliteVecStore: memories in one SQLite file — rows, sqlite-vec vectors and an FTS5 keyword index.

Schema (version 4)::

    meta(key, value)              schema_version, model_id, dimensions, created_by
    namespaces(id, name)          small integer ids, so vec0 filters on an integer (see below)
    memories(seq, id, …)          the source of truth; seq INTEGER PRIMARY KEY is a stable rowid
                                  (an implicit rowid may be renumbered by VACUUM), id is the UUID
    memories_fts                  FTS5 external content over memories.content, kept in sync by triggers
    memory_tags(tag, seq)         one row per (tag, memory), kept in sync with memories.tags by triggers
    passages(vrow, seq, embedding) one row per vector of a memory (its whole text, then its passages):
                                  vrow is the vec0 rowid, seq the owning memory, embedding a float32 copy
    cache_log(id, seq)            memories whose vectors or filter columns changed (triggers on
                                  passages and memories; the newest CACHE_LOG_KEEP entries): how a
                                  vector cache in another process catches up without a reload
    vectors                       vec0(embedding float[D] distance_metric=cosine, ns integer,
                                       deleted integer, superseded integer, type integer,
                                       created integer), rowid = passages.vrow
    pending_passages(seq)         memories stored with their whole text's vector only, whose
                                  passages' vectors are still to come (``passage_backlog.py``)

Older versions are upgraded in place when a file opens (``opening.py``): version 3 added
``memories.owner`` and ``memories.privacy_scope`` (who may read a memory: the engine's Scope; an
older file's memories are the local user's), version 4 ``memories.occurred_at`` (when the
remembered thing happened; an older file's memories get their ``created_at``) and
``memories.thread`` (the conversation; none for older ones), both filtered on the rows table like tags.

Scope filters (``owner``, ``visible_to``) are resolved on the rows table like tags (see below),
except when every memory in the file belongs to the one user asking (the single-user case: checked
with two index lookups), where they cannot exclude anything and KNN stays on its fast path.
Several namespaces (``namespaces``, the project and ``user``) are a vec0 ``ns IN (…)`` condition and
a mask in the vector cache.

Datetimes are stored as integer microseconds since the Unix epoch (UTC): exact round trips, correct
ordering and comparison, and they come back as timezone-aware UTC datetimes.

KNN filtering: sqlite-vec applies JOIN/WHERE conditions on other tables AFTER its top-k, so every
filter must act inside the vec0 query or before it. Namespace, tombstone and superseded flags, type
(a small integer code) and created_at are vec0 *metadata* columns (updatable, unlike partition keys:
a tombstone is set after insert). Filters vec0 cannot express (tags, metadata, ids) are resolved
first on the rows table (tags through ``memory_tags``); the matching vectors are then either scanned
exactly with numpy from the ``passages`` copies (small sets, see ``_exact_limit``) or handed to vec0
as ``rowid IN (…)``, which vec0 also applies before its top-k.

Passages: vec0 returns vector rows, several of which may belong to one memory. ``knn`` asks for more
rows than ``k``, keeps each memory's best row, and grows the row count (×4, up to vec0's 4096) until
it has ``k`` distinct memories or the matching rows are exhausted; if 4096 rows still hold fewer than
``k`` memories it falls back to an exact scan of every matching vector (correct, slower).

Vector cache (``vector_cache.py``, on unless ``MCP_MEMORY_SQLITE_VECTOR_CACHE=0``): on the first
KNN every passage vector and the filterable columns are loaded into numpy arrays (through a second
connection without mmap); KNN is then exact float32 brute force (``matrix @ q``) up to
``exact_threshold`` rows (default 50k), an int8 pass up to ``coarse_threshold`` rows (default 200k)
and a sign-bit pass above it, both with an exact rerank of their candidates read from ``passages``.
SQLite stays the source of truth: every commit (this process's and other processes') reaches the
cache through ``cache_log``, a table filled by triggers: before a KNN the cache connection's
``PRAGMA data_version`` and ``total_changes`` tell whether anything committed since the cache last
looked; if so the cache replays ``cache_log`` (drops the rows of every memory logged since it was
built or last caught up, and reads their current rows again; a commit that logged nothing, such as
access statistics, costs one query) or reloads when the log was pruned past it or names too many
memories. A rolled-back write logged nothing. KNN inside a transaction that has written uses vec0
(it must see the uncommitted writes; before the first write the cache is exact, since BEGIN
IMMEDIATE keeps every other connection from committing), and a cache over ``MCP_MEMORY_SQLITE_VECTOR_CACHE_MAX_MB`` is not built (vec0
answers).

Concurrency (``capabilities.thread_safe``: the server calls it from many threads at once, without a
lock of its own): writes go through one writer connection, guarded by an RLock that
``transaction()`` holds from BEGIN IMMEDIATE to COMMIT; reads run on a connection per thread
(``query_only``), so in WAL mode they never wait for a writer or for each other; the reads of the
thread inside a transaction use the writer's connection (they must see its uncommitted writes). The
vector cache has a lock and a connection of its own, held only while it catches up and scans. An
in-memory database is one connection: every call takes the writer's lock there.
Several processes share the file through WAL, ``busy_timeout`` and BEGIN IMMEDIATE (a writer waits
for the write lock up front instead of failing on a read→write upgrade). synchronous=FULL``: an
acknowledged commit survives a process crash and a power loss.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np

from mcp_memory_core.errors import MemoryNotFoundError, ModelMismatchError, StorageError
from mcp_memory_core.filter_terms import matches_nothing
from mcp_memory_core.models import Memory, MemoryFilter, MemoryType
from mcp_memory_core.protocols import StoreCapabilities, StoreDiagnosis, Vector
from mcp_memory_core.row_codec import COLUMNS, to_micros
from mcp_memory_core.sql_reads import SqlReads, SqlTagCounts
from mcp_memory_core.store_writes import check_update, checked_insert, updated

from .binding import Binding, select_binding
from .cache_sync import VectorCacheSync
from .dialect import DIALECT
from .errors import (
    Action,
    check_database_path,
    check_same_file,
    create_private_file,
    file_identity,
    read_only_error,
    refuse_foreign,
    storage_error,
)
from .keywords import fts_query
from .opening import begin_immediate, check_read_only, enable_wal, init_schema
from .passage_backlog import PassageBacklogTable
from .reembed import Reembedding
from .schema import TYPE_CODES
from .sql_filters import needs_rows, where_sql
from .vector_cache import (
    COARSE_THRESHOLD,
    EXACT_THRESHOLD,
    VectorCache,
)

log = logging.getLogger("mcp_memory_sqlite_vec")

MAX_K = 4096  # sqlite-vec 0.1.9 refuses k > 4096
BUSY_TIMEOUT_S = 10.0
# vec0 scans every vector chunk per KNN; through the default 2 MB page cache a 100k x 384-d file
# (150 MB of vectors) costs 54 ms per query, memory-mapped 43 ms (= an in-memory database). With the
# vector cache on, vec0 only serves the rare fallbacks, and the mapped pages would count in the
# process's RSS (at 100k: 699 MB with the map, 462 MB without), so the map is only used without it.
MMAP_SIZE = 1 << 30
# Filters vec0 cannot express (tags, metadata, ids) are resolved on the rows table first. When the
# matching vectors are few, reading their float32 copies from ``passages`` and scanning them with
# numpy beats a vec0 scan with ``rowid IN (…)`` (which still visits every vector chunk): measured at
# 100k x 384-d, 2 000 copies read + scanned ≈ 5-15 ms vs ≈ 35-50 ms for vec0; at 20 000 vec0 wins.
EXACT_SCAN_MAX_ROWS = 4000
EXACT_SCAN_MIN_ROWS = 256

# The in-process vector cache (see vector_cache.py): on unless MCP_MEMORY_SQLITE_VECTOR_CACHE=0;
# skipped (vec0 answers) when it would take more than MCP_MEMORY_SQLITE_VECTOR_CACHE_MAX_MB.
VECTOR_CACHE_ENV = "MCP_MEMORY_SQLITE_VECTOR_CACHE"
VECTOR_CACHE_MAX_MB_ENV = "MCP_MEMORY_SQLITE_VECTOR_CACHE_MAX_MB"
VECTOR_CACHE_MAX_MB = 1024
VECTOR_CACHE_COARSE_ENV = "MCP_MEMORY_SQLITE_VECTOR_CACHE_COARSE_ROWS"
VECTOR_CACHE_EXACT_ENV = "MCP_MEMORY_SQLITE_VECTOR_CACHE_EXACT_ROWS"

_COLUMNS = ", ".join(COLUMNS)
_PLACEHOLDERS = ", ".join("?" * len(COLUMNS))

_row_values = DIALECT.codec.encode
_memory = DIALECT.codec.decode


class SqliteVecStore(SqlTagCounts, SqlReads, VectorCacheSync, Reembedding, PassageBacklogTable):
    """The default mcp-memory store. See the module docstring for the schema and design."""

    _dialect = DIALECT

    def __init__(
        self,
        path: str | Path,
        *,
        binding: str | None = None,
        vector_cache: bool | None = None,
        vector_cache_max_mb: int | None = None,
        coarse_threshold: int | None = None,
        exact_threshold: int | None = None,
        create: bool = True,
    ) -> None:
        self._create = create  # False: open() refuses a missing file instead of creating it
        self._identity: tuple[int, int] | None = None  # the file open() opened (device, inode)
        self._read_only = False  # the file could not be written when it was opened: reads only
        self._path: str | Path = ":memory:" if str(path) == ":memory:" else Path(path).expanduser()
        self._binding_name = binding
        if vector_cache is None:
            vector_cache = os.environ.get(VECTOR_CACHE_ENV, "1").strip().lower() not in (
                "0",
                "false",
                "no",
                "off",
            )
        if vector_cache_max_mb is None:
            vector_cache_max_mb = int(os.environ.get(VECTOR_CACHE_MAX_MB_ENV, VECTOR_CACHE_MAX_MB))
        self._cache_enabled = vector_cache
        self._cache_max_bytes = vector_cache_max_mb << 20
        if coarse_threshold is None:
            coarse_threshold = int(os.environ.get(VECTOR_CACHE_COARSE_ENV, COARSE_THRESHOLD))
        self._coarse_threshold = coarse_threshold
        if exact_threshold is None:
            exact_threshold = int(os.environ.get(VECTOR_CACHE_EXACT_ENV, EXACT_THRESHOLD))
        self._exact_threshold = min(exact_threshold, coarse_threshold)
        self._cache: VectorCache | None = None
        self._cache_stamp: tuple[int, int] | None = (
            None  # the cache connection's (data_version, total_changes)
        )
        self._cache_log_id = 0  # the newest cache_log entry the cache has caught up with
        self._cache_refused_at: int | None = None  # row count at which the cap refused a load
        self._cache_conn: Any = None  # reads for the cache only, under _cache_lock (no mmap)
        self._cache_lock = threading.RLock()  # the cache and its connection; taken after _lock, never before
        self._binding: Binding | None = None
        self._conn: Any = None  # the writer: transactions, and every statement on an in-memory database
        self._lock = threading.RLock()  # the writer connection, from BEGIN IMMEDIATE to COMMIT
        self._depth = 0
        self._tx_thread: int | None = None  # the thread inside transaction(), if any
        self._tx_changes = 0  # the writer's total_changes at BEGIN: more later = this transaction wrote
        # What this transaction read that cannot change while it holds the write lock (the model check,
        # namespace ids): read once per transaction, forgotten at its end (a rollback included).
        self._tx_known: dict[str, Any] = {}
        self._local = threading.local()  # each thread's read connection
        self._readers: list[Any] = []  # every read connection, closed by close()
        self._readers_lock = threading.Lock()
        self._generation = 0  # bumped by close(): read connections of an earlier open are stale
        self._model_id: str | None = None
        self._dims: int | None = None
        self._reembed_target: tuple[str, int] | None = None  # reembed.py: the model being written
        self._reembed_cursor = 0

    # -- protocol: description -------------------------------------------------------------------
    @property
    def capabilities(self) -> StoreCapabilities:
        # An in-memory database is one connection: safe from any thread, but serialized.
        parallel = isinstance(self._path, Path)
        return StoreCapabilities(
            keyword_search=True,
            concurrent_processes=True,
            thread_safe=parallel,
            read_vectors=True,
            reembed=True,
            group_commit=True,  # BEGIN IMMEDIATE: one writer; reads before a write use the vector cache
        )

    @property
    def location(self) -> str:
        return str(self._path)

    @property
    def binding(self) -> Binding | None:
        """The SQLite binding in use (None until opened)."""
        return self._binding

    def __repr__(self) -> str:
        return f"SqliteVecStore({self.location!r})"

    # -- lifecycle -------------------------------------------------------------------------------
    def open(self, model_id: str, dimensions: int) -> None:
        """Connect, create or migrate the schema, and bind the file to ``model_id``.

        Idempotent for the same model. Raises ModelMismatchError when the file holds vectors of another
        model (or of another dimension count).
        """
        if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
            raise ValueError(f"dimensions must be a positive integer; got {dimensions!r}")
        with self._lock:
            if self._conn is not None:
                if (model_id, dimensions) != (self._model_id, self._dims):
                    raise ModelMismatchError(self.location, f"{self._model_id}", model_id)
                return
            binding = select_binding(self._binding_name)
            if isinstance(self._path, Path):
                check_database_path(self._path)
                if not self._path.exists() and not self._create:
                    raise StorageError(
                        f"There is no memory database at {self._path}: nothing was stored there yet, or "
                        "the path is mistyped (check MCP_MEMORY_DB_PATH)."
                    )
                create_private_file(self._path)
            with self._errors("open", binding):
                conn = binding.connect(str(self._path), timeout=BUSY_TIMEOUT_S)
                try:
                    refuse_foreign(conn, self.location)  # before anything is written
                    try:
                        mode = enable_wal(conn, binding, BUSY_TIMEOUT_S)
                        if str(mode).lower() != "wal" and str(self._path) != ":memory:":
                            log.warning(
                                "SQLite refused WAL mode for %s (journal_mode=%s)", self.location, mode
                            )
                        self._tune(conn)
                        begin = functools.partial(self._begin_immediate, conn, binding)
                        init_schema(conn, begin, binding, self.location, model_id, dimensions)
                    except binding.module.OperationalError as exc:
                        if "readonly" not in str(exc).lower():
                            raise
                        self._tune(conn)
                        check_read_only(conn, self.location, model_id, dimensions)
                        self._read_only = True  # every write raises StorageError; search skips its statistics
                        log.warning("%s is read-only: searching works, storing does not", self.location)
                except BaseException:
                    conn.close()
                    raise
            if isinstance(self._path, Path):
                self._identity = file_identity(self._path)
            self._binding, self._conn = binding, conn
            self._model_id, self._dims = model_id, dimensions
            log.info(
                "sqlite-vec store %s: binding %s; model %s (%d-d)",
                self.location,
                binding.describe(),
                model_id,
                dimensions,
            )

    def _tune(self, conn: Any) -> None:
        conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute(f"PRAGMA mmap_size={0 if self._cache_enabled else MMAP_SIZE}")

    @contextlib.contextmanager
    def _errors(self, action: Action, binding: Binding | None = None) -> Iterator[None]:
        """SQLite's errors (other than a duplicate id or a closed connection) as StorageError."""
        try:
            yield
        except StorageError:
            raise
        except Exception as exc:
            used = binding or self._binding
            module = used.module if used is not None else None
            if (
                module is None
                or not isinstance(exc, module.DatabaseError)
                or isinstance(exc, module.IntegrityError | module.ProgrammingError)
            ):
                raise
            raise storage_error(exc, self.location, action, BUSY_TIMEOUT_S) from exc

    def close(self) -> None:
        with self._lock, self._cache_lock, self._readers_lock:
            conn, self._conn = self._conn, None
            self._depth, self._tx_thread = 0, None
            self._generation += 1
            self._drop_cache()
            others = [c for c in (self._cache_conn, *self._readers) if c is not None]
            self._cache_conn, self._readers = None, []
            for other in others:
                with contextlib.suppress(Exception):
                    other.close()
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.execute("PRAGMA optimize")
                conn.close()

    def diagnose(self) -> StoreDiagnosis:
        """The file's integrity (``PRAGMA quick_check``), schema version and embedding model, read
        through a read-only connection of its own: callable on a store that is not open, and it
        never creates, migrates or writes the file (``mcp-memory doctor``; see ``diagnosis.py``)."""
        from .diagnosis import diagnose

        return diagnose(self._path, self._binding_name)

    def meta(self) -> dict[str, str]:
        """The ``meta`` table (schema_version, model_id, dimensions, created_by)."""
        with self._reading() as conn:
            return dict(conn.execute("SELECT key, value FROM meta").fetchall())

    @contextlib.contextmanager
    def sql(self) -> Iterator[Any]:
        """A connection for the SQL of a store built on this one (the markdown vault keeps its file
        table in this database): inside ``transaction()``, the writer, whose statements commit or roll
        back with the transaction; outside, this thread's read connection (it cannot write). Tables of
        its own must not start with ``memories``, ``passages``, ``vectors``, ``meta`` or ``cache_``."""
        with self._reading() as conn:
            yield conn

    def _db(self) -> Any:
        if self._conn is None:
            raise RuntimeError(f"{self!r} is not open: call open(model_id, dimensions) first.")
        return self._conn

    # -- connections -----------------------------------------------------------------------------
    def _in_transaction(self) -> bool:
        """True in the thread that is inside ``transaction()`` (its reads must see its own writes)."""
        return self._tx_thread == threading.get_ident()

    def _wrote_in_transaction(self) -> bool:
        """True in the thread inside ``transaction()`` once it has written: only SQL sees those rows.
        Before its first write the vector cache is exact: BEGIN IMMEDIATE holds SQLite's write lock,
        so no other connection commits meanwhile (a check-then-write runs on the cache)."""
        return (
            self._in_transaction() and self._conn is not None and self._conn.total_changes != self._tx_changes
        )

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Any]:
        """The connection a read runs on: this thread's own read connection, so reads run alongside
        other threads' reads and (WAL) alongside a writer; the writer's connection, under its lock,
        inside this thread's transaction (to see its uncommitted writes) or on an in-memory database
        (one connection is the whole database)."""
        with self._errors("read"):
            if self._in_transaction() or not isinstance(self._path, Path):
                with self._lock:
                    yield self._db()
                return
            yield self._reader()

    def _reader(self) -> Any:
        """This thread's read connection to the file, opened on first use (query_only: it cannot write)."""
        local = self._local
        if getattr(local, "generation", None) == self._generation and local.conn is not None:
            return local.conn
        with self._readers_lock:
            self._db()  # not open (or closed meanwhile): the same RuntimeError as every other call
            conn = self._read_connection(mmap=not self._cache_enabled)
            self._readers.append(conn)
            local.conn, local.generation = conn, self._generation
        return conn

    def _read_connection(self, *, mmap: bool) -> Any:
        assert self._binding is not None
        conn = self._binding.connect(str(self._path), timeout=BUSY_TIMEOUT_S)
        try:
            conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute(f"PRAGMA mmap_size={MMAP_SIZE if mmap else 0}")
            conn.execute("PRAGMA query_only=1")
        except BaseException:
            conn.close()
            raise
        return conn

    def _begin_immediate(self, conn: Any, binding: Binding | None = None) -> None:
        module = (binding or self._binding or select_binding(self._binding_name)).module
        begin_immediate(conn, module, BUSY_TIMEOUT_S)

    # -- transactions ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together, or none on an exception. Nested blocks are no-ops.

        Holds the writer's lock throughout, so other threads' writes wait (their reads do not: they
        have connections of their own); BEGIN IMMEDIATE takes SQLite's write lock up front (waiting up
        to busy_timeout for other processes).
        """
        with self._lock, self._errors("write"):
            conn = self._db()
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            if self._read_only:
                raise read_only_error(self.location)
            self._begin_immediate(conn)
            self._depth, self._tx_thread, self._tx_changes = 1, threading.get_ident(), conn.total_changes
            self._tx_known = {}
            try:
                yield
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            else:
                try:
                    if isinstance(self._path, Path):
                        check_same_file(self._path, self._identity)  # never acknowledge a lost write
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            finally:
                self._depth, self._tx_thread, self._tx_known = 0, None, {}

    # -- writes ----------------------------------------------------------------------------------
    def insert(
        self, memories: Sequence[Memory], vectors: Vector, owners: Sequence[int] | None = None
    ) -> None:
        """Insert memories with their vectors, atomically.

        Without ``owners`` row i of ``vectors`` belongs to ``memories[i]``; with ``owners`` (one entry
        per row) row i belongs to ``memories[owners[i]]``, and every memory needs at least one row.
        """
        memories, array, owner_list = checked_insert(memories, vectors, owners, int(self._dims or 0))
        if not memories:
            return
        with self.transaction():
            conn = self._db()
            self._check_model(conn)  # never rows of another model beside a re-embedded file's
            seqs: list[int] = []
            for memory in memories:
                try:
                    cursor = conn.execute(
                        f"INSERT INTO memories ({_COLUMNS}) VALUES ({_PLACEHOLDERS})",
                        _row_values(memory),
                    )
                except self._binding.module.IntegrityError as exc:  # type: ignore[union-attr]
                    raise ValueError(f"A memory with id {memory.id} already exists") from exc
                seqs.append(int(cursor.lastrowid))
            flags = [self._vector_flags(m) for m in memories]
            for row, owner in enumerate(owner_list):
                self._add_vector(conn, seqs[owner], flags[owner], array[row])

    def _add_vector(self, conn: Any, seq: int, flags: tuple[int, ...], row: Vector) -> None:
        """One vector of memory ``seq``: its float32 copy in ``passages``, and in ``vectors`` (vec0)
        with the memory's filter columns (``_vector_flags``)."""
        blob = row.tobytes()
        vrow = conn.execute("INSERT INTO passages (seq, embedding) VALUES (?, ?)", (seq, blob)).lastrowid
        conn.execute(
            "INSERT INTO vectors (rowid, embedding, ns, deleted, superseded, type, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (vrow, blob, *flags),
        )

    def _vector_flags(self, m: Memory) -> tuple[int, int, int, int, int]:
        """The vec0 metadata columns of a memory: ns, deleted, superseded, type, created."""
        ns = self._namespace_id(m.namespace, create=True)
        assert ns is not None
        return (
            ns,
            int(m.deleted_at is not None),
            int(m.superseded_by is not None),
            TYPE_CODES[MemoryType(m.type)],
            to_micros(m.created_at),
        )

    def update_fields(self, memory_id: str, fields: Mapping[str, Any]) -> None:
        """Set fields of one memory (validated as a Memory). Raises MemoryNotFoundError if absent.

        The vec0 metadata columns of EVERY vector of the memory follow the row."""
        check_update(memory_id, fields)
        with self.transaction():
            conn = self._db()
            row = conn.execute(f"SELECT seq, {_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row is None:
                raise MemoryNotFoundError(memory_id)
            seq, old = row[0], _memory(row[1:])
            new = updated(old, fields)
            values = _row_values(new)[1:]
            assignments = ", ".join(f"{name} = ?" for name in _COLUMNS.split(", ")[1:])
            if new.content == old.content:  # don't fire the FTS trigger for nothing
                assignments = assignments.replace("content = ?, ", "")
                values = values[1:]
            conn.execute(f"UPDATE memories SET {assignments} WHERE seq = ?", (*values, seq))
            flags = self._vector_flags(new)
            if flags != self._vector_flags(old):
                vrows = [r[0] for r in conn.execute("SELECT vrow FROM passages WHERE seq = ?", (seq,))]
                conn.executemany(
                    "UPDATE vectors SET ns = ?, deleted = ?, superseded = ?, type = ?, created = ? "
                    "WHERE rowid = ?",
                    [(*flags, vrow) for vrow in vrows],
                )

    def record_access(self, counts: Mapping[str, int], when: datetime) -> None:
        """Add ``counts[id]`` to ``access_count`` (an SQL increment, so concurrent processes never lose
        counts) and set ``last_accessed = when``, in one transaction. Unknown ids are ignored."""
        items = [(int(n), to_micros(when), memory_id) for memory_id, n in counts.items()]
        if any(n < 0 for n, _, _ in items):
            raise ValueError("record_access counts must be >= 0")
        if not items:
            return
        with self.transaction():
            self._db().executemany(
                "UPDATE memories SET access_count = access_count + ?, last_accessed = ? WHERE id = ?",
                items,
            )

    def purge(self, ids: Sequence[str]) -> int:
        """Hard delete: remove rows, every vector and keyword-index entries. Returns how many rows
        were removed."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        with self.transaction():
            conn = self._db()
            seqs = [
                r[0]
                for r in conn.execute(
                    "SELECT seq FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(ids),),
                )
            ]
            for seq in seqs:
                vrows = [r[0] for r in conn.execute("SELECT vrow FROM passages WHERE seq = ?", (seq,))]
                conn.executemany("DELETE FROM vectors WHERE rowid = ?", [(v,) for v in vrows])
                conn.execute("DELETE FROM passages WHERE seq = ?", (seq,))
                conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))
            return len(seqs)

    def _namespace_id(self, name: str, *, create: bool, conn: Any = None) -> int | None:
        conn = self._db() if conn is None else conn
        known = self._tx_known if self._in_transaction() and conn is self._conn else {}
        if f"ns:{name}" in known:
            return int(known[f"ns:{name}"])
        row = conn.execute("SELECT id FROM namespaces WHERE name = ?", (name,)).fetchone()
        if row is not None:
            found = int(row[0])
        elif create:
            found = int(conn.execute("INSERT INTO namespaces (name) VALUES (?)", (name,)).lastrowid)
        else:
            return None
        known[f"ns:{name}"] = found
        return found

    # -- reads -----------------------------------------------------------------------------------
    def knn(self, vector: Vector, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        """Up to ``k`` distinct memories matching ``where``, best cosine similarity over each memory's
        vectors first. Every filter field applies before the top-k (see the module docstring)."""
        k = min(int(k), MAX_K)
        if k <= 0 or matches_nothing(where):
            return []
        query = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(-1))
        if query.shape[0] != self._dims:
            raise ValueError(f"knn needs a {self._dims}-d vector; got {query.shape[0]}-d")
        with self._reading() as conn:
            # A file re-embedded with another model (mcp-memory reindex) is refused, checked once,
            # after the query (a switch committed before it made its answer another model's), or
            # when the query failed (another model's dimensions, in vec0 or a reloaded cache).
            try:
                found = self._knn(conn, query, k, where)
            except Exception:
                self._check_model(conn)
                raise
            self._check_model(conn)
            return found

    def _knn(self, conn: Any, query: Vector, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        """The KNN of ``knn`` on ``conn`` (the model checks are knn's): the vector cache when it can
        answer, else vec0 (or an exact scan) with every filter applied before the top-k."""
        where = self._without_trivial_scope(conn, where)
        cached = self._cache_knn(conn, query, k, where)
        if cached is not None:
            return cached
        vec = self._vec0_conditions(conn, where)
        if vec is None:
            return []
        conditions, params = vec
        if needs_rows(where):
            clause, row_params = where_sql(where, alias="m")
            vrows = [
                r[0]
                for r in conn.execute(
                    f"SELECT p.vrow FROM memories m JOIN passages p ON p.seq = m.seq WHERE {clause}",
                    row_params,
                )
            ]
            if not vrows:
                return []
            vrow_json = json.dumps(vrows)
            if len(vrows) <= self._exact_limit(conn):
                return self._exact_knn(
                    conn, query, k, "p.vrow IN (SELECT value FROM json_each(?))", [vrow_json]
                )
            conditions.append("rowid IN (SELECT value FROM json_each(?))")
            params.append(vrow_json)
        row_k = min(MAX_K, max(2 * k, k + 16))
        while True:
            rows = conn.execute(
                "WITH hits AS MATERIALIZED (SELECT rowid, distance FROM vectors WHERE "
                "embedding MATCH ? AND k = ? "
                + "".join(f"AND {c} " for c in conditions)
                + ") SELECT m.id, hits.distance FROM hits LEFT JOIN passages p ON p.vrow = hits.rowid "
                "LEFT JOIN memories m ON m.seq = p.seq ORDER BY hits.distance, m.id",
                [query.tobytes(), row_k, *params],
            ).fetchall()
            best: dict[str, float] = {}
            for memory_id, distance in rows:
                if memory_id is not None and memory_id not in best:
                    best[memory_id] = 1.0 - float(distance)
            if len(best) >= k or len(rows) < row_k:
                return list(best.items())[:k]
            if row_k >= MAX_K:
                # 4096 vector rows hold fewer than k memories: scan every matching vector exactly.
                clause, row_params = where_sql(where, alias="m")
                return self._exact_knn(conn, query, k, clause or "1", row_params)
            row_k = min(MAX_K, row_k * 4)

    @staticmethod
    def _without_trivial_scope(conn: Any, where: MemoryFilter) -> MemoryFilter:
        """``where`` without its owner / visibility conditions when every memory in the file belongs
        to that user (one person's database): they exclude nothing, and would force the slower
        row-resolved KNN. Two index lookups (``memories_owner``)."""
        user = where.owner if where.owner is not None else getattr(where.visible_to, "principal", None)
        if user is None or (where.owner is not None and where.visible_to is not None):
            return where
        low, high = conn.execute(
            "SELECT (SELECT min(owner) FROM memories), (SELECT max(owner) FROM memories)"
        ).fetchone()
        if low is None or (low == user and high == user):
            return dataclasses.replace(where, owner=None, visible_to=None)
        return where

    def _namespace_ids(self, conn: Any, where: MemoryFilter) -> int | tuple[int, ...] | Literal[False] | None:
        """The namespace condition as namespace ids: one id, a tuple (any of), None (no condition),
        or False when no memory can match (an unknown namespace)."""
        wanted: set[int] | None = None
        if where.namespace is not None:
            ns = self._namespace_id(where.namespace, create=False, conn=conn)
            if ns is None:
                return False
            wanted = {ns}
        if where.namespaces is not None:
            ids = {
                i
                for n in where.namespaces
                if (i := self._namespace_id(n, create=False, conn=conn)) is not None
            }
            wanted = ids if wanted is None else wanted & ids
        if wanted is None:
            return None
        if not wanted:
            return False
        return next(iter(wanted)) if len(wanted) == 1 else tuple(sorted(wanted))

    def _vec0_conditions(self, conn: Any, where: MemoryFilter) -> tuple[list[str], list[Any]] | None:
        """The filter fields vec0 metadata columns can apply inside the KNN; None when the namespace
        does not exist (nothing can match)."""
        conditions: list[str] = []
        params: list[Any] = []
        ns = self._namespace_ids(conn, where)
        if ns is False:
            return None
        if isinstance(ns, int):
            conditions.append("ns = ?")
            params.append(ns)
        elif isinstance(ns, tuple):
            conditions.append(f"ns IN ({', '.join(str(i) for i in ns)})")  # integers: safe inline
        if not where.include_deleted:
            conditions.append("deleted = 0")
        if not where.include_superseded:
            conditions.append("superseded = 0")
        if where.types is not None:
            codes = sorted(TYPE_CODES[MemoryType(t)] for t in where.types)
            conditions.append(f"type IN ({', '.join(str(c) for c in codes)})")  # integers: safe inline
        if where.created_after is not None:
            conditions.append("created >= ?")
            params.append(to_micros(where.created_after))
        if where.created_before is not None:
            conditions.append("created < ?")
            params.append(to_micros(where.created_before))
        return conditions, params

    def _exact_limit(self, conn: Any) -> int:
        """How many matching vectors are cheaper to scan exactly than to hand to vec0."""
        (top,) = conn.execute("SELECT max(vrow) FROM passages").fetchone()
        return min(EXACT_SCAN_MAX_ROWS, max(EXACT_SCAN_MIN_ROWS, int(top or 0) // 8))

    def _exact_knn(
        self, conn: Any, query: Vector, k: int, clause: str, params: Sequence[Any]
    ) -> list[tuple[str, float]]:
        """Exact top-k over the vectors of ``passages p JOIN memories m`` matching ``clause``."""
        rows = conn.execute(
            f"SELECT m.id, p.embedding FROM passages p JOIN memories m ON m.seq = p.seq WHERE {clause}",
            params,
        ).fetchall()
        if not rows:
            return []
        dims = int(self._dims or query.shape[0])
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dims)
        norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
        sims = (matrix @ query) / np.maximum(norms, np.float32(1e-30))
        ids, inverse = np.unique(np.array([r[0] for r in rows], dtype=object), return_inverse=True)
        best = np.full(len(ids), -np.inf, dtype=np.float64)
        np.maximum.at(best, inverse.reshape(-1), sims.astype(np.float64))
        order = np.argsort(-best, kind="stable")[:k]  # ids are sorted: ties go to the smaller id
        return [(str(ids[i]), float(best[i])) for i in order]

    def keyword_search(self, query: str, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        match = fts_query(query)
        k = int(k)
        if match is None or k <= 0 or matches_nothing(where):
            return []
        clause, params = where_sql(where, alias="m")
        sql = (
            "SELECT m.id, bm25(memories_fts) AS score FROM memories_fts "
            "JOIN memories m ON m.seq = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? {'AND ' + clause if clause else ''} "
            "ORDER BY score, m.id LIMIT ?"
        )
        with self._reading() as conn:
            try:
                rows = conn.execute(sql, (match, *params, k)).fetchall()
            except self._binding.module.OperationalError as exc:  # type: ignore[union-attr]
                # Cannot happen with fts_query's quoting; never let a query string crash a search.
                log.warning("FTS5 rejected keyword query %r (%s); returning no keyword hits", query, exc)
                return []
        return [(memory_id, -float(score)) for memory_id, score in rows]
