"""Versioned schema migrations: which steps a database needs, in order, and the one sentence for a
database newer than the code. A store runs the steps inside its own transaction, under a lock that
makes two servers starting at once take turns (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: an advisory
lock), reads the version again under that lock, and records the new version in the same transaction:
a step either happens once, completely, or not at all.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("mcp_memory_core.migrations")


class SchemaTooNewError(RuntimeError):
    """The database was written by a newer version of the store."""

    def __init__(self, location: str, found: int, supported: int, package: str) -> None:
        super().__init__(
            f"The database {location} has schema version {found}, newer than this {package} "
            f"understands ({supported}). Upgrade {package}."
        )


@dataclass(frozen=True)
class Migration:
    """One step: what brings a database from ``version - 1`` to ``version`` (0 is an empty database).
    ``statements`` run in order, then ``apply`` (for steps SQL alone cannot say)."""

    version: int
    description: str
    statements: tuple[str, ...] = ()
    apply: Callable[[Any], None] | None = field(default=None, compare=False)


def pending(current: int, migrations: Sequence[Migration], *, location: str, package: str) -> list[Migration]:
    """The steps a database at ``current`` needs, in order, to reach the newest in ``migrations``
    (which must number 1, 2, … without gaps)."""
    versions = sorted(m.version for m in migrations)
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migrations must number 1..n without gaps or repeats; got {versions}")
    target = len(versions)
    if current > target:
        raise SchemaTooNewError(location, current, target, package)
    return sorted((m for m in migrations if m.version > current), key=lambda m: m.version)


def run(execute: Callable[[str], Any], steps: Sequence[Migration], connection: Any, *, location: str) -> None:
    """Run ``steps`` in order through ``execute`` (and each step's ``apply(connection)``), inside the
    caller's transaction."""
    for step in steps:
        log.info("migrating %s to schema %d (%s)", location, step.version, step.description)
        for statement in step.statements:
            execute(statement)
        if step.apply is not None:
            step.apply(connection)
