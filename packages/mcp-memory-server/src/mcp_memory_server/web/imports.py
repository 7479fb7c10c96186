"""Imports started from the web UI: the import operation the CLI runs (:mod:`..operations.transfer`),
written in a background thread whose progress the page polls.

The upload form becomes an ``ImportRequest``; the file is read and checked in the request
(``prepare_import``, with the request's Scope: a refused file is an error page and nothing is
written); only then does a job write it in batches (``write_import``, the same Scope), counting what
it has done. A job belongs
to the user who started it: anyone else asking for it gets a missing page.
"""

from __future__ import annotations

import logging
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..operations.transfer import ImportRequest, PreparedImport, write_import
from ..operations.vocabulary import AUTO, IMPORT_FORMATS, MEMORY_TYPES

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..runtime.service import MemoryService

log = logging.getLogger(__name__)

FORMATS = (AUTO, *IMPORT_FORMATS)
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

    def report(self, done: int, total: int) -> None:
        """The writer's progress: ``done`` of ``total`` memories written."""
        with self._lock:
            self.done = min(self.total, done)

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


def import_request(path: Path, form: Mapping[str, Any]) -> ImportRequest:
    """The import form as an :class:`ImportRequest` for the uploaded file at ``path``."""
    from mcp_memory_core.errors import InvalidInputError

    fmt = str(form.get("format", AUTO))
    if fmt not in FORMATS:
        raise InvalidInputError(f"Unknown import format {fmt!r}; choose one of: {', '.join(FORMATS)}.")
    memory_type = str(form.get("type", "")).strip() or None
    if memory_type is not None and memory_type not in MEMORY_TYPES:
        raise InvalidInputError(
            f"Unknown memory type {memory_type!r}; choose one of: {', '.join(MEMORY_TYPES)}."
        )
    return ImportRequest(
        path=path,
        format=fmt,  # type: ignore[arg-type]  # checked against FORMATS above
        namespace=str(form.get("namespace", "")).strip() or None,
        memory_type=memory_type,  # checked against MEMORY_TYPES above
        include_assistant=form.get("include_assistant") == "on",
    )


class ImportJobs:
    """The import jobs of this process."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service
        self._jobs: dict[str, ImportJob] = {}
        self._lock = threading.Lock()

    def start(self, prepared: PreparedImport, filename: str) -> ImportJob:
        job = ImportJob(
            id=secrets.token_urlsafe(12),
            owner=prepared.scope.principal,
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
            target=self._run, args=(job, prepared), name=f"mcp-memory-import-{job.id}", daemon=True
        ).start()
        return job

    def get(self, job_id: str, principal: str) -> ImportJob | None:
        """The job, if ``principal`` started it (anyone else: None, as for an unknown id)."""
        with self._lock:
            job = self._jobs.get(job_id)
        return job if job is not None and job.owner == principal else None

    def _run(self, job: ImportJob, prepared: PreparedImport) -> None:
        from ..operations.errors import rule_for

        try:
            outcome = self.service.call_sync(lambda engine: write_import(engine, prepared, job.report))
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
            # what the page shows: not the server's temporary file the upload was kept in
            job.result = outcome.model_dump(mode="json", exclude={"format", "file"})
