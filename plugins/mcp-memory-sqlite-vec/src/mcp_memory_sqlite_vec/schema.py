"""The SQLite file's schema: tables, indexes, triggers and the vec0 table (see the store's module
docstring for what each holds), the schema version, and the on-disk codes of memory types."""

from __future__ import annotations

from mcp_memory_core.models import MemoryType

SCHEMA_VERSION = 4

# Memory types as small integers for the vec0 ``type`` metadata column (never renumber: on disk).
TYPE_CODES: dict[MemoryType, int] = {
    MemoryType.WORKING: 1,
    MemoryType.EPISODIC: 2,
    MemoryType.SEMANTIC: 3,
    MemoryType.PROCEDURAL: 4,
}

# cache_log keeps the newest entries only (a trigger prunes older ones): a vector cache that fell
# further behind than this reloads in full instead of replaying the log.
CACHE_LOG_KEEP = 100_000
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS namespaces (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS memories (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    content       TEXT NOT NULL,
    metadata      TEXT NOT NULL DEFAULT '{}',
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    superseded_by TEXT,
    deleted_at    INTEGER,
    namespace     TEXT NOT NULL,
    type          TEXT NOT NULL,
    tags          TEXT NOT NULL DEFAULT '[]',
    importance    REAL NOT NULL,
    pinned        INTEGER NOT NULL DEFAULT 0,
    access_count  INTEGER NOT NULL DEFAULT 0,
    last_accessed INTEGER,
    owner         TEXT NOT NULL DEFAULT 'local',
    privacy_scope TEXT NOT NULL DEFAULT 'private',
    occurred_at   INTEGER NOT NULL,
    thread        TEXT
);
CREATE INDEX IF NOT EXISTS memories_ns_created ON memories (namespace, created_at, id);
CREATE INDEX IF NOT EXISTS memories_created ON memories (created_at, id);
CREATE INDEX IF NOT EXISTS memories_superseded_by ON memories (superseded_by);
CREATE INDEX IF NOT EXISTS memories_owner ON memories (owner, privacy_scope);
CREATE INDEX IF NOT EXISTS memories_thread ON memories (thread, occurred_at) WHERE thread IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_occurred ON memories (occurred_at);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5 (
    content, content='memories', content_rowid='seq', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_au AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
CREATE TABLE IF NOT EXISTS memory_tags (
    tag TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (tag, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memory_tags_seq ON memory_tags (seq);
CREATE TRIGGER IF NOT EXISTS memory_tags_ai AFTER INSERT ON memories BEGIN
    INSERT OR IGNORE INTO memory_tags (tag, seq) SELECT value, new.seq FROM json_each(new.tags);
END;
CREATE TRIGGER IF NOT EXISTS memory_tags_ad AFTER DELETE ON memories BEGIN
    DELETE FROM memory_tags WHERE seq = old.seq;
END;
CREATE TRIGGER IF NOT EXISTS memory_tags_au AFTER UPDATE OF tags ON memories BEGIN
    DELETE FROM memory_tags WHERE seq = old.seq;
    INSERT OR IGNORE INTO memory_tags (tag, seq) SELECT value, new.seq FROM json_each(new.tags);
END;
CREATE TABLE IF NOT EXISTS passages (
    vrow      INTEGER PRIMARY KEY,
    seq       INTEGER NOT NULL,
    embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS passages_seq ON passages (seq);
CREATE TABLE IF NOT EXISTS cache_log (
    id  INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS cache_log_passage_ai AFTER INSERT ON passages BEGIN
    INSERT INTO cache_log (seq) VALUES (new.seq);
END;
CREATE TRIGGER IF NOT EXISTS cache_log_passage_ad AFTER DELETE ON passages BEGIN
    INSERT INTO cache_log (seq) VALUES (old.seq);
END;
CREATE TRIGGER IF NOT EXISTS cache_log_memory_au
AFTER UPDATE OF deleted_at, superseded_by, namespace, type, created_at ON memories
WHEN old.deleted_at IS NOT new.deleted_at OR old.superseded_by IS NOT new.superseded_by
    OR old.namespace IS NOT new.namespace OR old.type IS NOT new.type
    OR old.created_at IS NOT new.created_at
BEGIN
    INSERT INTO cache_log (seq) VALUES (new.seq);
END;
CREATE TABLE IF NOT EXISTS pending_passages (
    seq INTEGER PRIMARY KEY
);
CREATE TRIGGER IF NOT EXISTS pending_passages_ad AFTER DELETE ON memories BEGIN
    DELETE FROM pending_passages WHERE seq = old.seq;
END;
CREATE TRIGGER IF NOT EXISTS cache_log_prune AFTER INSERT ON cache_log WHEN new.id % 1000 = 0 BEGIN
    DELETE FROM cache_log WHERE id <= new.id - CACHE_LOG_KEEP;
END;
""".replace("CACHE_LOG_KEEP", str(CACHE_LOG_KEEP))

TYPE_CASE = (
    "CASE {col} "
    + " ".join(f"WHEN '{t.value}' THEN {code}" for t, code in TYPE_CODES.items())
    + " ELSE 0 END"
)


# ``vectors`` (vec0) filled from ``passages`` and each row's memory: schema 1 -> 2, and a re-embedding.
FILL_VECTORS = (
    "INSERT INTO vectors (rowid, embedding, ns, deleted, superseded, type, created) "
    "SELECT p.vrow, p.embedding, n.id, m.deleted_at IS NOT NULL, m.superseded_by IS NOT NULL, "
    f"{TYPE_CASE.format(col='m.type')}, m.created_at "
    "FROM passages p JOIN memories m ON m.seq = p.seq JOIN namespaces n ON n.name = m.namespace"
)


def vectors_ddl(dimensions: int) -> str:
    return (
        "CREATE VIRTUAL TABLE IF NOT EXISTS vectors USING vec0 ("
        f"embedding float[{int(dimensions)}] distance_metric=cosine, "
        "ns integer, deleted integer, superseded integer, type integer, created integer)"
    )


def split_sql(script: str) -> list[str]:
    """Split a schema script into statements (triggers contain ';' inside BEGIN … END)."""
    statements, current = [], []
    for line in script.strip().splitlines():
        current.append(line)
        text = "\n".join(current).strip()
        if text.endswith(";") and (
            not text.upper().startswith("CREATE TRIGGER") or text.upper().endswith("END;")
        ):
            statements.append(text)
            current = []
    if "\n".join(current).strip():
        statements.append("\n".join(current).strip())
    return statements
