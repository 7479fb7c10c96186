"""PostgresStore: memories in PostgreSQL with pgvector, for several servers on one database.

Nothing is cached in the process: every read is a query, so a memory one server stores is found by
every other server the moment its transaction commits (``read committed``). What the store shares
with the SQLite store comes from core: the filter meaning and its SQL (:mod:`.sql_filters` renders
it with arrays, ``timestamptz``, ``text[]`` tags and ``jsonb`` metadata), the row codec, the write
checks and the migration plan (:mod:`.schema`).

KNN. ``passages`` has an HNSW index (cosine) once the store holds more than ``exact_rows`` vectors
(:mod:`.vector_index`: below, the index answers nothing and costs every insert). pgvector 0.6
applies a WHERE clause after the index scan, so a filtered query could return fewer than ``k``
memories although ``k`` match; and several passages may belong to one memory. So a KNN first asks the index for ``n`` rows (``hnsw.ef_search``
raised to ``n``), keeps the matching rows' best per memory, and grows ``n`` (×4, up to
``MAX_INDEX_ROWS``) until ``k`` memories are found or the index has no more rows; then it falls back
to an exact scan of the matching rows. A store with at most ``exact_rows`` passages (default 2,000),
and a filter naming its memories (``ids``), are always scanned exactly (the index gains nothing
there). A narrow filter of another kind (a tag, a thread, one user's private memories among many)
pays for up to four index probes before that fallback: not measured yet at team scale.

Keyword search: a generated ``tsvector`` (english) with a GIN index, the user's words OR-ed into a
``tsquery`` (each word a quoted lexeme, so no text is ever query syntax). PostgreSQL's own ranks
(``ts_rank_cd``) know no document frequency: "code word kw2x0" ranked every memory holding "code word"
level with the one holding the rare "kw2x0". So the score is BM25's: the inverse document frequency
of each query word the memory holds (counted through the GIN index), which is also the scale the
hybrid ranker was tuned on with SQLite's bm25.

Transactions: ``transaction()`` holds one pooled connection for the calling thread from BEGIN to
COMMIT; that thread's reads use it (they must see its uncommitted writes); every other call borrows a
connection from the pool, in autocommit mode, so threads never wait for each other's transactions.
Two transactions that check for the same text and then insert it do not exclude each other
(``read committed``): ``write_lock(key)`` serializes exactly those (an advisory lock per text), which
the engine takes before its dedup check.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from mcp_memory_core.errors import MemoryNotFoundError, ModelMismatchError, StorageError, UnavailableError
from mcp_memory_core.filter_terms import matches_nothing
from mcp_memory_core.migrations import pending, run
from mcp_memory_core.models import Memory, MemoryFilter
from mcp_memory_core.protocols import StoreCapabilities, Vector
from mcp_memory_core.query_words import MAX_QUERY_WORDS, query_words
from mcp_memory_core.row_codec import COLUMNS, utc
from mcp_memory_core.sql_reads import SqlReads, SqlTagCounts
from mcp_memory_core.store_writes import check_update, checked_insert, updated

from .dialect import DIALECT
from .passage_backlog import PassageBacklogTable
from .reembed import Reembedding
from .schema import EXACT_ROWS, MIGRATION_LOCK, SCHEMA, SCHEMA_VERSION, VECTOR_INDEX, migrations
from .sql_filters import where_sql
from .vector_index import IndexKeeper, build_index, drop_leftover, index_valid

log = logging.getLogger("mcp_memory_postgres")

PACKAGE = "mcp-memory-postgres"
MAX_K = 4096
MAX_INDEX_ROWS = 1000  # hnsw.ef_search's ceiling in pgvector
# The index's search breadth (hnsw.ef_search) at least. At 100k clustered vectors (m=16,
# ef_construction=64; tests/bench/test_postgres_bench.py, one run): 40 (pgvector's default) gave
# recall@10 0.886 at 4.1 ms, 100: 0.950 at 5.2 ms, 200: 0.990 at 7.6 ms, 400: 0.990 at 14.0 ms.
EF_SEARCH = 200
# bulk_load drops and rebuilds the vector index from this many incoming vectors (and at least as many
# as are stored), building it with schema.BUILD_MEMORY of maintenance_work_mem (pgvector builds the
# graph in memory while it fits, and much slower once it does not; 64 MB, the default, holds ~25k).
BULK_ROWS = 5_000
# IDF counts memories by the planner's estimate above this many (exact enough for a logarithm)
ESTIMATED_ROWS = 50_000
# Seconds a call waits for a free pooled connection before it fails as unavailable. While the database
# is down the pool has none to give: the caller hears so in seconds, not after the 30 s default.
POOL_WAIT = 10.0

_MEMORIES = f"{SCHEMA}.memories"
_PASSAGES = f"{SCHEMA}.passages"
_COLUMNS = ", ".join(COLUMNS)
_M_COLUMNS = ", ".join(f"m.{c}" for c in COLUMNS)


_CODEC = DIALECT.codec


def _check_url(url: str) -> None:
    """Refuse a URL libpq cannot parse (no connection made), before any method hands it to psycopg:
    psycopg's words would be a traceback, and may quote the URL, password and all."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        raise StorageError(
            "MCP_MEMORY_DATABASE_URL is not a valid PostgreSQL URL or connection string: use e.g. "
            "postgresql://mcp@db.internal/memory."
        ) from None


def redact(url: str) -> str:
    """``url`` without its password (for logs, errors and ``location``)."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(url)
    except Exception:
        return "postgresql://(unparseable URL)"
    host = parts.get("host") or "localhost"
    port = f":{parts['port']}" if parts.get("port") else ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}"


def idf(df: int, total: int) -> float:
    """BM25's inverse document frequency (never negative)."""
    return math.log(1 + (max(total, df) - df + 0.5) / (df + 0.5))


class PostgresStore(SqlTagCounts, SqlReads, Reembedding, PassageBacklogTable):
    """The team store. ``url``: a libpq connection string or ``postgresql://`` URL."""

    _codec = _CODEC
    _dialect = DIALECT

    def __init__(
        self, url: str, *, pool_size: int = 10, exact_rows: int = EXACT_ROWS, ef_search: int = EF_SEARCH
    ) -> None:
        if not isinstance(url, str) or not url.strip():
            raise ValueError("The PostgreSQL store needs a database URL (MCP_MEMORY_DATABASE_URL).")
        _check_url(url)
        self._url = url
        self._location = redact(url)
        self._pool_size = max(2, int(pool_size))
        self._exact_rows = int(exact_rows)
        self._ef_search = min(MAX_INDEX_ROWS, max(1, int(ef_search)))
        self._pool: Any = None
        self._model: tuple[str, int] | None = None
        self._reembed_target: tuple[str, int] | None = None  # reembed.py: the model being written
        self._reembed_cursor = 0
        self._local = threading.local()
        self._open_lock = threading.Lock()
        self._index = IndexKeeper(self._autocommit_connection)

    @property
    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities(
            keyword_search=True,
            concurrent_processes=True,
            thread_safe=True,
            read_vectors=True,
            reembed=True,
        )

    @property
    def location(self) -> str:
        return self._location

    def __repr__(self) -> str:
        return f"PostgresStore({self._location!r})"

    # -- lifecycle -------------------------------------------------------------------------------
    def open(self, model_id: str, dimensions: int) -> None:
        with self._open_lock:
            if self._pool is not None:
                if self._model != (model_id, dimensions):
                    assert self._model is not None
                    raise ModelMismatchError(
                        self._location,
                        f"{self._model[0]} ({self._model[1]}-d)",
                        f"{model_id} ({dimensions}-d)",
                    )
                return
            import psycopg
            from psycopg_pool import ConnectionPool

            with self._errors("open"):
                with psycopg.connect(self._url, autocommit=True) as conn:
                    self._init_schema(conn, model_id, dimensions)
                    self._open_index(conn)
                pool = ConnectionPool(
                    self._url,
                    min_size=1,
                    max_size=self._pool_size,
                    kwargs={"autocommit": True},
                    configure=_configure,
                    open=False,
                    name="mcp-memory",
                    timeout=POOL_WAIT,
                )
                pool.open(wait=True, timeout=30)
            self._pool, self._model = pool, (model_id, dimensions)

    def _init_schema(self, conn: Any, model_id: str, dimensions: int) -> None:
        """Create or migrate the schema under an advisory lock (two servers starting at once take
        turns; the second finds the work done), after checking the stored model."""
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
                try:
                    with conn.transaction():
                        conn.execute("CREATE EXTENSION vector")
                except Exception as exc:
                    raise StorageError(
                        f"The pgvector extension is not installed in {self._location} and this user "
                        f"cannot install it ({exc}). Run CREATE EXTENSION vector; as a superuser, then "
                        "start the server again."
                    ) from exc
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {SCHEMA}.meta (key text PRIMARY KEY, value text NOT NULL)"
            )
            stored = dict(conn.execute(f"SELECT key, value FROM {SCHEMA}.meta").fetchall())
            version = int(stored.get("schema_version", "0"))
            steps = pending(version, migrations(dimensions), location=self._location, package=PACKAGE)
            stored_model = stored.get("model_id")
            stored_dims = int(stored["dimensions"]) if "dimensions" in stored else None
            if stored_model is not None and stored_model != model_id:
                raise ModelMismatchError(self._location, stored_model, model_id)
            if stored_dims is not None and stored_dims != dimensions:
                raise ModelMismatchError(
                    self._location, f"{stored_model} ({stored_dims}-d)", f"{model_id} ({dimensions}-d)"
                )
            run(conn.execute, steps, conn, location=self._location)
            conn.execute(
                f"INSERT INTO {SCHEMA}.meta (key, value) VALUES "
                "('schema_version', %s), ('model_id', %s), ('dimensions', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION), model_id, str(dimensions)),
            )

    def _open_index(self, conn: Any) -> None:
        """The vector index as the store's size asks: built now if the store needs it and a crash
        left it missing (a bulk import killed before its end); an invalid leftover dropped."""
        valid = index_valid(conn)
        if valid:
            self._index.known_ready()
        elif self._past_exact_scans(conn):
            log.warning(
                "The vector index of %s is missing (an interrupted bulk import?): building it now; "
                "searches scan every vector until it is ready.",
                self._location,
            )
            if build_index(conn):
                self._index.known_ready()
        elif valid is False:
            drop_leftover(conn)

    def _past_exact_scans(self, conn: Any) -> bool:
        """Whether the store holds more vectors than KNN scans exactly (it then needs the index)."""
        return row_count(conn, _PASSAGES, self._exact_rows) > self._exact_rows

    def _autocommit_connection(self) -> Any:
        """A connection of its own, outside the pool (an index build holds it for minutes)."""
        import psycopg

        return psycopg.connect(self._url, autocommit=True)

    def close(self) -> None:
        self._index.join()
        with self._open_lock:
            pool, self._pool = self._pool, None
            self._model = None
        if pool is not None:
            pool.close()

    def meta(self) -> dict[str, str]:
        with self._connection() as conn:
            return {str(k): str(v) for k, v in conn.execute(f"SELECT key, value FROM {SCHEMA}.meta")}

    @contextlib.contextmanager
    def bulk_load(self, rows: int) -> Iterator[None]:
        """Insert about ``rows`` vectors faster. Keeping the HNSW index up to date costs about 5 ms
        a row on this machine kind (under 200 rows/s), building it afresh a fraction of that: so
        when ``rows`` is at least BULK_ROWS and at least the vectors already stored, the index is
        dropped, the rows are loaded and the index is built again at the end (concurrently: other
        servers keep writing meanwhile; their searches scan exactly until it is ready), even if the
        load fails. A crash in between leaves no index: the next ``open()`` builds it."""
        if self._pool is None:
            raise RuntimeError("PostgresStore.open() must be called first.")
        with self._connection() as conn:
            stored = row_count(conn, _PASSAGES, ESTIMATED_ROWS)  # exact below: the choice is close there
        if rows < BULK_ROWS or rows < stored:
            yield
            return
        log.info("bulk load of about %d vectors: dropping the vector index, building it after", rows)
        self._index.join()  # not while this process builds it
        with self._errors("write"), self._pool.connection() as conn:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {SCHEMA}.{VECTOR_INDEX}")
        self._index.forget()
        try:
            yield
        finally:
            with self._errors("write"), self._pool.connection() as conn:
                if self._past_exact_scans(conn) and build_index(conn):
                    self._index.known_ready()

    # -- connections and transactions ------------------------------------------------------------
    @contextlib.contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """psycopg's operational errors (the server gone, a refused connection, a pool timeout) as one
        sentence naming the database, an :class:`UnavailableError` (the request may be retried);
        programming errors stay what they are (bugs, not outages)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            yield
        except (psycopg.OperationalError, PoolTimeout) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            doing = {"open": "opening", "read": "reading", "write": "writing"}[action]
            done = "; nothing was written" if action == "write" else ""
            raise UnavailableError(
                f"PostgreSQL at {self._location} failed while {doing}: {first}{done}."
            ) from exc

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        """This thread's transaction connection, or a pooled one in autocommit mode."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        if self._pool is None:
            raise RuntimeError("PostgresStore.open() must be called first.")
        with self._errors("read"), self._pool.connection() as conn:
            yield conn

    _reading = _connection  # the connection the shared reads (SqlReads) run on

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together, or none on an exception. Nested blocks are no-ops."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        if self._pool is None:
            raise RuntimeError("PostgresStore.open() must be called first.")
        with self._errors("write"), self._pool.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    def write_lock(self, key: str) -> None:
        """Inside ``transaction()``: wait until no other transaction, of any server, holds the lock of
        ``key``, then hold it until this one ends. ``read committed`` lets two transactions check
        for the same text at once and both insert it; the engine takes this lock before its dedup
        check, so the second check runs after the first write committed and finds it. A lock per
        key (a transaction-scoped advisory lock on a 64-bit hash of it): only writers of the same
        key wait for each other (two keys sharing a hash wait needlessly, never wrongly)."""
        if getattr(self._local, "conn", None) is None:
            raise RuntimeError("PostgresStore.write_lock() is only meaningful inside transaction().")
        digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        with self._connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (int.from_bytes(digest, "big", signed=True),))

    # -- writes ----------------------------------------------------------------------------------
    def insert(
        self, memories: Sequence[Memory], vectors: Vector, owners: Sequence[int] | None = None
    ) -> None:
        assert self._model is not None, "PostgresStore.open() must be called first."
        memories, array, owner_list = checked_insert(memories, vectors, owners, self._model[1])
        if not memories:
            return
        import psycopg

        with self.transaction(), self._connection() as conn:
            try:
                with conn.cursor() as cur:  # each row's seq comes back with its insert (in order)
                    cur.executemany(
                        f"INSERT INTO {_MEMORIES} ({_COLUMNS}) VALUES ({', '.join(['%s'] * len(COLUMNS))}) "
                        "RETURNING seq",
                        [_CODEC.encode(m) for m in memories],
                        returning=True,
                    )
                    seqs = [int(row[0]) for _ in cur.results() for row in cur.fetchall()]
            except psycopg.errors.UniqueViolation as exc:
                taken = next((m.id for m in memories if m.id in str(exc)), None)
                raise ValueError(
                    f"A memory with id {taken} already exists"
                    if taken
                    else "A memory with that id already exists"
                ) from exc
            self._check_model(conn)  # after the row lock: a re-embedding's switch is committed or waits
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {_PASSAGES} (seq, embedding) VALUES (%s, %s)",
                    [(seqs[owner], array[row]) for row, owner in enumerate(owner_list)],
                )

    def update_fields(self, memory_id: str, fields: Mapping[str, Any]) -> None:
        check_update(memory_id, fields)
        with self.transaction(), self._connection() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM {_MEMORIES} WHERE id = %s FOR UPDATE", (memory_id,)
            ).fetchone()
            if row is None:
                raise MemoryNotFoundError(memory_id)
            new = updated(_CODEC.decode(row), fields)
            values = _CODEC.encode(new)[1:]
            assignments = ", ".join(f"{name} = %s" for name in COLUMNS[1:])
            conn.execute(f"UPDATE {_MEMORIES} SET {assignments} WHERE id = %s", (*values, memory_id))

    def record_access(self, counts: Mapping[str, int], when: datetime) -> None:
        """Increments in SQL, so concurrent servers never lose each other's counts."""
        items = [(memory_id, int(n)) for memory_id, n in counts.items()]
        if any(n < 0 for _, n in items):
            raise ValueError("record_access counts must be >= 0")
        if not items:
            return
        with self.transaction(), self._connection() as conn:
            conn.execute(
                f"UPDATE {_MEMORIES} m SET access_count = m.access_count + v.n, last_accessed = %s "
                "FROM unnest(%s::text[], %s::bigint[]) AS v(id, n) WHERE m.id = v.id",
                (utc(when), [i for i, _ in items], [n for _, n in items]),
            )

    def purge(self, ids: Sequence[str]) -> int:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return 0
        with self.transaction(), self._connection() as conn:
            cur = conn.execute(f"DELETE FROM {_MEMORIES} WHERE id = ANY(%s)", (ids,))
            return int(cur.rowcount)

    # -- reads -----------------------------------------------------------------------------------
    def knn(self, vector: Vector, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        """Up to ``k`` distinct memories matching ``where``, best cosine similarity over each memory's
        passages first (see the module docstring for when the HNSW index answers)."""
        assert self._model is not None, "PostgresStore.open() must be called first."
        k = min(int(k), MAX_K)
        if k <= 0 or matches_nothing(where):
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self._model[1]:
            raise ValueError(f"knn needs a {self._model[1]}-d vector; got {query.shape[0]}-d")
        clause, params = where_sql(where, alias="m")
        import psycopg

        with self._connection() as conn:
            # Re-embedded with another model (mcp-memory reindex): refused. Checked before the query
            # too: inside a write transaction a failed query (other dimensions) aborts it, and no
            # check could run after. A filter naming its memories (a search's thread neighbours, a
            # chain) is few rows: scanned exactly, uncounted.
            rows = self._checked_rows(conn, count=where.ids is None)
            try:
                found = None
                if rows > self._exact_rows:
                    self._index.wanted()  # built in the background; until then the query scans
                    found = self._index_knn(conn, query, k, clause, params, rows)
                if found is None:
                    found = self._exact_knn(conn, query, k, clause, params)
            except psycopg.errors.DataException:
                self._check_model(conn)  # the switch came between the check and the query
                raise
            # And after it: a switch committed before the query made its answer another model's. In a
            # write transaction the write checks after its own lock, which covers it (one round trip
            # less a store); a transaction that writes nothing returns no vector of the other model.
            if getattr(self._local, "conn", None) is None:
                self._check_model(conn)
            return found

    def _checked_rows(self, conn: Any, *, count: bool) -> int:
        """The model check (:meth:`_check_model`) and, when ``count``, the vectors stored
        (:func:`row_count`), in one round trip: a store's dedup check runs it on every write."""
        if not count:
            self._check_model(conn)
            return 0
        stored, rows = conn.execute(
            f"SELECT (SELECT value FROM {SCHEMA}.meta WHERE key = 'model_id'), {_row_count_sql(_PASSAGES)}",
            (self._exact_rows, _PASSAGES),
        ).fetchone()
        self._refuse_another_model(stored)
        return int(rows)

    def _index_knn(
        self, conn: Any, query: Any, k: int, clause: str, params: list[Any], rows: int
    ) -> list[tuple[str, float]] | None:
        """KNN through the HNSW index; None when it cannot find ``k`` memories (a selective filter):
        the caller then scans exactly."""
        n = min(MAX_INDEX_ROWS, max(2 * k, k + 16, self._ef_search))
        while True:
            with conn.transaction():
                conn.execute(f"SET LOCAL hnsw.ef_search = {int(n)}")
                found = conn.execute(
                    "WITH near AS MATERIALIZED ("
                    f" SELECT p.seq, p.embedding <=> %s AS distance FROM {_PASSAGES} p"
                    " ORDER BY p.embedding <=> %s LIMIT %s) "
                    f"SELECT m.id, min(near.distance) AS d FROM near JOIN {_MEMORIES} m ON m.seq = near.seq "
                    f"WHERE {clause} GROUP BY m.id ORDER BY d, m.id LIMIT %s",
                    (query, query, n, *params, k),
                ).fetchall()
            if len(found) >= k or n >= rows:
                return [(str(i), 1.0 - float(d)) for i, d in found]
            if n >= MAX_INDEX_ROWS:
                return None
            n = min(MAX_INDEX_ROWS, n * 4)

    def _exact_knn(
        self, conn: Any, query: Any, k: int, clause: str, params: list[Any]
    ) -> list[tuple[str, float]]:
        """Every matching passage's distance (no index: exact), the best per memory."""
        found = conn.execute(
            f"SELECT m.id, min(p.embedding <=> %s) AS d FROM {_PASSAGES} p JOIN {_MEMORIES} m ON m.seq = p.seq "
            f"WHERE {clause} GROUP BY m.id ORDER BY d, m.id LIMIT %s",
            (query, *params, k),
        ).fetchall()
        return [(str(i), 1.0 - float(d)) for i, d in found]

    def keyword_search(self, query: str, k: int, where: MemoryFilter) -> list[tuple[str, float]]:
        """BM25-like: each query word the memory holds adds its inverse document frequency (a rare
        word outweighs common ones, as in SQLite's bm25), plus ``ts_rank_cd`` to order near-ties."""
        words = query_words(query)[:MAX_QUERY_WORDS] if isinstance(query, str) else []
        k = min(int(k), MAX_K)
        if not words or k <= 0 or matches_nothing(where):
            return []
        clause, params = where_sql(where, alias="m")
        with self._connection() as conn:
            terms = conn.execute(
                "SELECT q::text, (SELECT count(*) FROM " + _MEMORIES + " d WHERE d.search @@ q) "
                "FROM (SELECT DISTINCT to_tsquery('english', quote_literal(w)) AS q "
                "FROM unnest(%s::text[]) AS w) t WHERE numnode(q) > 0",
                (words,),
            ).fetchall()
            if not terms:
                return []  # only stopwords
            total = row_count(conn, _MEMORIES, ESTIMATED_ROWS)
            weights = [idf(int(df), total) for _, df in terms]
            lexemes = [str(q) for q, _ in terms]
            score = " + ".join(["(CASE WHEN m.search @@ %s::tsquery THEN %s ELSE 0 END)"] * len(lexemes))
            rows = conn.execute(
                f"SELECT m.id, {score} + 0.01 * ts_rank_cd(m.search, q) AS score FROM {_MEMORIES} m, "
                "to_tsquery('english', %s) q "
                f"WHERE m.search @@ q AND {clause} ORDER BY score DESC, m.id LIMIT %s",
                (
                    *[x for pair in zip(lexemes, weights, strict=True) for x in pair],
                    " | ".join(f"({q})" for q in lexemes),
                    *params,
                    k,
                ),
            ).fetchall()
        return [(str(i), float(s)) for i, s in rows]


def row_count(conn: Any, table: str, estimate_above: int) -> int:
    """The rows of ``table``: the planner's estimate when it has one above ``estimate_above`` (free;
    a count would scan the table on every search), else an exact count. One round trip: the count is
    an init plan, which PostgreSQL runs only when the CASE needs it."""
    (n,) = conn.execute(f"SELECT {_row_count_sql(table)}", (estimate_above, table)).fetchone()
    return int(n)


def _row_count_sql(table: str) -> str:
    """row_count's expression; its parameters: the estimate's floor, then ``table`` again."""
    return (
        f"(SELECT CASE WHEN c.reltuples > %s THEN c.reltuples::bigint ELSE (SELECT count(*) FROM {table}) "
        "END FROM pg_class c WHERE c.oid = %s::regclass)"
    )


def _configure(conn: Any) -> None:
    """Every pooled connection: pgvector's types (numpy arrays in and out), UTC times."""
    from pgvector.psycopg import register_vector

    register_vector(conn)
    conn.execute("SET TIME ZONE 'UTC'")
