"""Imports started from the web UI: the CLI's reader and writer (``mcp_memory_core.transfer``), run
in a background thread whose progress the page polls.

The uploaded file is read and checked in the request (``read_memories`` + ``check_records``, with the
request's Scope: a refused record is an error page and nothing is written); only then does a job
write it in batches (``import_records``, the same Scope), counting what it has done. A job belongs
to the user who started it: anyone else asking for it gets a missing page.
"""

from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope

    from ..runtime.service import MemoryService

log = logging.getLogger(__name__)

FORMATS = ("auto", "mcp-memory", "chatgpt", "mcp-knowledge-graph")
MAX_JOBS = 100  # finished jobs kept for their pages; the oldest finished one goes first


@dataclass
class ImportJob:
    id: str
    owner: str
    filename: str
    format: str
    total: int
    done: int = 0
    state: str = "running"  # running | done | failed
    result: dict[str, Any] | None = None
    error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def advance(self, count: int) -> None:
        with self._lock:
            self.done = min(self.total, self.done + count)

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "id": self.id,
                "state": self.state,
                "done": self.done,
                "total": self.total,
                "filename": self.filename,
                "format": self.format,
                "result": self.result,
                "error": self.error,
            }


@dataclass(frozen=True)
class PreparedImport:
    """A file read and checked, ready to write: its memories (an ``ImportFile``) and format."""

    memories: Any
    format: str
    namespace: str | None


def prepare_import(
    engine: MemoryEngine,
    scope: Scope,
    path: Path,
    fmt: str,
    namespace: str | None,
    include_assistant: bool,
) -> PreparedImport:
    """Read and validate the whole file as ``mcp-memory import`` does, owned by the scope's user,
    and let the engine refuse what it would refuse (before anything is written)."""
    from mcp_memory_core.errors import InvalidInputError
    from mcp_memory_core.transfer import check_records, detect_format, read_memories

    chosen = detect_format(path) if fmt == "auto" else fmt
    if chosen not in FORMATS[1:]:
        raise InvalidInputError(f"Unknown import format {fmt!r}; choose one of: {', '.join(FORMATS)}.")
    if include_assistant and chosen != "chatgpt":
        raise InvalidInputError("'Include the assistant's replies' applies to ChatGPT exports only.")
    target = scope.write_namespace(namespace or None)
    memories = read_memories(
        path,
        chosen,  # type: ignore[arg-type]  # checked against FORMATS above
        namespace=target,
        now=engine.clock(),
        include_assistant=include_assistant,
        owner=scope.principal,
        limits=engine.limits,
    )
    check_records(engine, memories, scope=scope)
    return PreparedImport(memories, chosen, None if chosen == "mcp-memory" else target)


class ImportJobs:
    """The import jobs of this process."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self._jobs: dict[str, ImportJob] = {}
        self._lock = threading.Lock()

    def start(self, prepared: PreparedImport, scope: Scope, filename: str) -> ImportJob:
        job = ImportJob(
            id=secrets.token_urlsafe(12),
            owner=scope.principal,
            filename=filename,
            format=prepared.format,
            total=len(prepared.memories),
        )
        with self._lock:
            finished = [j for j in self._jobs.values() if j.state != "running"]
            while len(self._jobs) >= MAX_JOBS and finished:
                del self._jobs[finished.pop(0).id]
            self._jobs[job.id] = job
        threading.Thread(
            target=self._run, args=(job, prepared, scope), name=f"mcp-memory-import-{job.id}", daemon=True
        ).start()
        return job

    def get(self, job_id: str, principal: str) -> ImportJob | None:
        """The job, if ``principal`` started it (anyone else: None, as for an unknown id)."""
        with self._lock:
            job = self._jobs.get(job_id)
        return job if job is not None and job.owner == principal else None

    def _run(self, job: ImportJob, prepared: PreparedImport, scope: Scope) -> None:
        from mcp_memory_core.transfer import import_records, refused_records

        from ..operations.errors import rule_for

        try:
            outcome = self.service.call_sync(
                lambda engine: import_records(engine, prepared.memories, on_batch=job.advance, scope=scope)
            )
        except Exception as exc:
            rule = rule_for(exc)
            if rule is not None:
                with job._lock:
                    job.state, job.error = "failed", rule.mcp_message(exc)
                return
            log.exception("Import %s failed", job.id)
            with job._lock:
                job.state, job.error = "failed", f"The import failed: {type(exc).__name__}: {exc}"
            return
        with job._lock:
            job.done = job.total
            job.state = "done"
            job.result = {
                "imported": outcome.inserted,
                "skipped": outcome.skipped,
                "repaired": outcome.repaired,
                "vectors_reused": outcome.reused,
                "refused": refused_records(prepared.memories, outcome),
                "namespace": prepared.namespace,
            }
