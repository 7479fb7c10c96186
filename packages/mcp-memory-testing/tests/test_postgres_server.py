"""The test PostgreSQL itself: pgvector works (HNSW, cosine), databases are isolated, and stopping
leaves no process and no directory behind."""

from __future__ import annotations

from pathlib import Path

import psycopg

from mcp_memory_testing.postgres import PostgresServer


def test_pgvector_hnsw_and_full_text_work(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, v vector(3), body text)")
        conn.execute("CREATE INDEX ON t USING hnsw (v vector_cosine_ops)")
        conn.execute(
            "INSERT INTO t VALUES (1, '[1,0,0]', 'alpha beta'), (2, '[0,1,0]', 'gamma'), (3, '[0,0,1]', 'beta')"
        )
        (nearest,) = conn.execute("SELECT id FROM t ORDER BY v <=> '[0.1,0.9,0]' LIMIT 1").fetchone()
        assert nearest == 2
        ranked = conn.execute(
            "SELECT id FROM t WHERE to_tsvector('english', body) @@ to_tsquery('english', 'beta') ORDER BY id"
        ).fetchall()
        assert ranked == [(1,), (3,)]


def test_each_test_database_is_fresh(postgres_url: str, postgres_server: PostgresServer) -> None:
    other = postgres_server.create_database()
    assert other != postgres_url
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE only_here (x int)")
    with psycopg.connect(other, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('only_here')").fetchone() == (None,)


def test_stop_leaves_nothing_behind() -> None:
    server = PostgresServer().start()
    directory = server.directory
    assert directory is not None
    pid_file = directory / "data" / "postmaster.pid"
    pid = int(pid_file.read_text().splitlines()[0])
    with psycopg.connect(server.url, autocommit=True) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    server.stop()
    assert not Path(directory).exists()
    assert not Path(f"/proc/{pid}").exists() or _is_zombie(pid)
    server.stop()  # twice is harmless


def _is_zombie(pid: int) -> bool:
    try:
        return " Z " in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
