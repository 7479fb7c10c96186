"""``SqliteVecStore.diagnose()``: what ``mcp-memory doctor`` asks of the file, read without changing it.

A read-only connection (``mode=ro``: nothing is created, migrated or written) runs ``PRAGMA
quick_check`` (every page, index and constraint but not index contents against their tables: fast
enough for a large file) and reads the ``meta`` table: the schema version and the embedding model the
vectors are from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_memory_core.errors import StorageError
from mcp_memory_core.protocols import StoreDiagnosis

from .binding import select_binding
from .errors import refuse_foreign
from .schema import SCHEMA_VERSION

BUSY_TIMEOUT_S = 5.0
MAX_PROBLEMS = 10  # quick_check lists up to 100 findings: the first few say enough


def diagnose(path: str | Path, binding_name: str | None = None) -> StoreDiagnosis:
    """Check the database at ``path`` (see the module docstring). Damage becomes ``problems``; an
    error of the SQLite binding itself (none can load sqlite-vec) is raised."""
    if str(path) == ":memory:":
        return StoreDiagnosis(exists=False, supported_schema_version=SCHEMA_VERSION, details={"memory": True})
    path = Path(path)
    binding = select_binding(binding_name)
    details: dict[str, Any] = {"binding": binding.describe()}
    if not path.is_file():
        return StoreDiagnosis(
            exists=False, path=str(path), supported_schema_version=SCHEMA_VERSION, details=details
        )
    details["size_bytes"] = path.stat().st_size
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        details["wal_bytes"] = wal.stat().st_size

    def found(problems: list[str], meta: dict[str, str] | None = None) -> StoreDiagnosis:
        meta = meta or {}
        version = meta.get("schema_version")
        dimensions = meta.get("dimensions")
        return StoreDiagnosis(
            exists=True,
            path=str(path),
            problems=tuple(problems),
            schema_version=int(version) if version and version.isdigit() else None,
            supported_schema_version=SCHEMA_VERSION,
            model_id=meta.get("model_id"),
            dimensions=int(dimensions) if dimensions and dimensions.isdigit() else None,
            details=details,
        )

    module = binding.module
    try:
        conn = module.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None
        )
    except module.Error as exc:
        return found([f"{path} cannot be opened: {exc}."])
    try:
        try:
            findings = [str(row[0]) for row in conn.execute("PRAGMA quick_check").fetchall()]
        except module.DatabaseError as exc:
            return found([f"{path} is damaged or is not a SQLite database ({exc})."])
        if findings != ["ok"]:
            shown = findings[:MAX_PROBLEMS]
            more = len(findings) - len(shown)
            return found([*shown, *([f"… and {more} more"] if more > 0 else [])])
        try:
            refuse_foreign(conn, str(path))
        except StorageError as exc:
            return found([str(exc)])
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables:  # an empty file: the first open sets it up
            return found([])
        meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}
        if "memories" in tables:
            total, current = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE superseded_by IS NULL AND deleted_at IS NULL) "
                "FROM memories"
            ).fetchone()
            details.update(memories=int(total), current_memories=int(current))
        if "passages" in tables:
            details["vectors"] = int(conn.execute("SELECT count(*) FROM passages").fetchone()[0])
        if "pending_passages" in tables:  # long memories whose sentences' vectors are still to come
            details["pending_passages"] = int(
                conn.execute("SELECT count(*) FROM pending_passages").fetchone()[0]
            )
        details["journal_mode"] = str(conn.execute("PRAGMA journal_mode").fetchone()[0])
        if "created_by" in meta:
            details["created_by"] = meta["created_by"]
        return found([], meta)
    except module.DatabaseError as exc:  # busy past the timeout, or damage quick_check did not see
        return found([f"{path} could not be read: {exc}."])
    finally:
        conn.close()
