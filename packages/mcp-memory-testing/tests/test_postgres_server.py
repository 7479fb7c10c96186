"""The real PostgreSQL 16 + pgvector test server and its fixtures (one server for the whole file)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from mcp_memory_testing import postgres as postgres_module
from mcp_memory_testing.postgres import PostgresError, PostgresServer

pytest_plugins = ["pytester"]


def _as_list(value: Any) -> list[float]:
    """A loaded vector (pgvector's `Vector`, or an ndarray in older adapters) as a list."""
    return list(value.to_list()) if hasattr(value, "to_list") else [float(x) for x in value]


def _alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie awaiting its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _processes_using(directory: Path) -> list[int]:
    """Pids whose command line mentions `directory` (the postmaster's does: `-D DIR/data`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(directory) in cmdline and _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def test_server_is_postgres_16_with_pgvector(postgres_server: PostgresServer) -> None:
    assert postgres_server.url == f"postgresql://postgres@127.0.0.1:{postgres_server.port}/postgres"
    with psycopg.connect(postgres_server.url) as conn:
        assert conn.execute("SHOW server_version_num").fetchone()[0].startswith("16")  # type: ignore[index]
        assert conn.execute("SHOW fsync").fetchone() == ("off",)
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        assert row is not None and row[0] >= "0.6"


def test_fresh_database_is_empty_and_has_vector(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM pg_extension WHERE extname = 'vector'").fetchone() == (1,)
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        assert tables.fetchall() == []


def test_hnsw_cosine_nearest_neighbour(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        register_vector(conn)
        conn.execute("CREATE TABLE items (id int PRIMARY KEY, embedding vector(3) NOT NULL)")
        conn.execute("CREATE INDEX items_embedding ON items USING hnsw (embedding vector_cosine_ops)")
        rows = [(1, [1.0, 0.0, 0.0]), (2, [0.0, 1.0, 0.0]), (3, [0.0, 0.0, 1.0]), (4, [1.0, 1.0, 0.0])]
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO items VALUES (%s, %s)", [(i, np.array(v, dtype=np.float32)) for i, v in rows]
            )
        conn.execute("SET enable_seqscan = off")  # make the planner use the HNSW index on 4 rows
        query = np.array([0.1, 0.9, 0.05], dtype=np.float32)
        sql = (
            "SELECT id, embedding, embedding <=> %s AS distance FROM items ORDER BY embedding <=> %s LIMIT 2"
        )
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, (query, query)).fetchall())
        assert "items_embedding" in plan
        (first_id, first_vec, first_dist), (second_id, _, second_dist) = conn.execute(
            sql, (query, query)
        ).fetchall()
    assert (first_id, second_id) == (2, 4)
    assert _as_list(first_vec) == [0.0, 1.0, 0.0]
    expected = 1 - float(query[1]) / float(np.linalg.norm(query))
    assert first_dist == pytest.approx(expected, abs=1e-6)
    assert first_dist < second_dist


def test_full_text_gin_ts_rank_cd(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        conn.execute(
            "CREATE TABLE docs (id int PRIMARY KEY, body text NOT NULL,"
            " tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED)"
        )
        conn.execute("CREATE INDEX docs_tsv ON docs USING gin (tsv)")
        conn.cursor().executemany(
            "INSERT INTO docs (id, body) VALUES (%s, %s)",
            [
                (1, "The cat sat on the mat"),
                (2, "Cats and dogs: a cat chased a dog, the dog chased the cat"),
                (3, "Stock markets fell sharply today"),
            ],
        )
        conn.execute("SET enable_seqscan = off")
        sql = (
            "SELECT id, ts_rank_cd(tsv, q) AS rank FROM docs, websearch_to_tsquery('english', %s) q"
            " WHERE tsv @@ q ORDER BY rank DESC, id"
        )
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, ("cats",)).fetchall())
        assert "docs_tsv" in plan
        ranked = conn.execute(sql, ("cats",)).fetchall()
    assert [doc_id for doc_id, _ in ranked] == [2, 1]  # "cat" three times beats once; doc 3 has none
    assert ranked[0][1] > ranked[1][1] > 0


def test_databases_are_isolated(postgres_server: PostgresServer, postgres_url: str) -> None:
    other_url = postgres_server.create_database("isolation_other")
    try:
        assert other_url != postgres_url
        for url, value in ((postgres_url, "mine"), (other_url, "theirs")):
            with psycopg.connect(url) as conn:
                conn.execute("CREATE TABLE t (v text)")
                conn.execute("INSERT INTO t VALUES (%s)", (value,))
        for url, value in ((postgres_url, "mine"), (other_url, "theirs")):
            with psycopg.connect(url) as conn:
                assert conn.execute("SELECT v FROM t").fetchall() == [(value,)]
    finally:
        postgres_server.drop_database("isolation_other")
    with psycopg.connect(postgres_server.url) as conn:
        names = conn.execute("SELECT datname FROM pg_database").fetchall()
    assert ("isolation_other",) not in names


def test_connection_pool(postgres_url: str) -> None:
    with ConnectionPool(postgres_url, min_size=2, max_size=2, configure=register_vector, open=True) as pool:
        pool.wait(timeout=10)
        with pool.connection() as conn:
            conn.execute("CREATE TABLE v (id int, e vector(2))")
            conn.execute("INSERT INTO v VALUES (1, %s)", (np.array([3.0, 4.0]),))
        results: list[Any] = []

        def work() -> None:
            with pool.connection() as conn:
                conn.execute("SELECT pg_sleep(0.05)")
                results.append(conn.execute("SELECT pg_backend_pid(), e FROM v").fetchone())

        threads = [threading.Thread(target=work) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(results) == 2
    assert {_as_list(e) == [3.0, 4.0] for _, e in results} == {True}
    assert len({pid for pid, _ in results}) == 2  # two connections at once


def test_stop_leaves_no_process_and_no_data() -> None:
    with PostgresServer() as server:
        pid, directory = server.pid, server.data_dir.parent
        assert _alive(pid) and _processes_using(directory)
        client = psycopg.connect(server.url)  # an open client must not hold up the shutdown
        client.execute("SELECT 1")
        server.stop()
        client.close()
    server.stop()  # idempotent
    assert not _alive(pid)
    assert _processes_using(directory) == []
    assert not directory.exists()


def test_postmaster_dies_with_a_killed_test_process() -> None:
    # postgres.py alone (stdlib only), not the package: its __init__ imports the suites, ~2 s here.
    script = textwrap.dedent(
        f"""
        import importlib.util, time
        spec = importlib.util.spec_from_file_location("pg", {postgres_module.__file__!r})
        pg = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(pg)
        server = pg.PostgresServer().start()
        print(server.pid, server.data_dir.parent, flush=True)
        time.sleep(120)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    pid_text, directory_text = child.stdout.readline().split()
    pid, directory = int(pid_text), Path(directory_text)
    try:
        assert _alive(pid)
        child.send_signal(signal.SIGKILL)  # no atexit, no finalizer: only the parent-death signal is left
        child.wait()
        deadline = time.monotonic() + 10
        while _processes_using(directory) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_using(directory) == []
        assert directory.exists()  # nobody could delete it ...
        postgres_module._remove_abandoned_directories()  # ... until the next start() does
        assert not directory.exists()
    finally:
        for leftover in _processes_using(directory):
            os.kill(leftover, signal.SIGKILL)
        shutil.rmtree(directory, ignore_errors=True)


def test_start_failure_raises_with_the_log_tail() -> None:
    server = PostgresServer(settings={"no_such_setting": "1"})
    with pytest.raises(PostgresError, match=r"(?s)exited with code .*no_such_setting"):
        server.start()
    with pytest.raises(PostgresError, match="not started"):
        server.data_dir  # noqa: B018 (cleaned up after the failure)


def test_bad_database_name_is_refused(postgres_server: PostgresServer) -> None:
    with pytest.raises(ValueError, match="database name"):
        postgres_server.create_database('x"; DROP DATABASE postgres; --')


def test_fixture_fails_clearly_without_pgserver(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('import sys\n\nsys.modules["pgserver"] = None\n')
    pytester.makepyfile("def test_needs_postgres(postgres_url):\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)  # an error, never a skip
    result.stdout.fnmatch_lines(
        [
            "The PostgreSQL test server needs pgserver, which cannot be imported: *uv sync --all-packages --group dev*"
        ]
    )
