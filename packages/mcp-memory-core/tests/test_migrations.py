"""The migration plan every store shares: steps in order from the database's version, one clear
sentence for a database newer than the code, and a gap in the steps refused."""

from __future__ import annotations

import pytest

from mcp_memory_core.migrations import Migration, SchemaTooNewError, pending, run

STEPS = [
    Migration(2, "add b", ("ALTER b",)),
    Migration(1, "create", ("CREATE a", "CREATE b")),
    Migration(3, "fill", apply=lambda conn: conn.append("filled")),
]


def test_a_fresh_database_gets_every_step_in_order() -> None:
    assert [m.version for m in pending(0, STEPS, location="db", package="pkg")] == [1, 2, 3]
    assert [m.version for m in pending(2, STEPS, location="db", package="pkg")] == [3]
    assert pending(3, STEPS, location="db", package="pkg") == []


def test_run_executes_statements_then_apply() -> None:
    executed: list[str] = []
    run(executed.append, pending(0, STEPS, location="db", package="pkg"), executed, location="db")
    assert executed == ["CREATE a", "CREATE b", "ALTER b", "filled"]


def test_a_newer_database_is_one_sentence() -> None:
    with pytest.raises(SchemaTooNewError) as info:
        pending(4, STEPS, location="postgresql://h/db", package="mcp-memory-postgres")
    assert str(info.value) == (
        "The database postgresql://h/db has schema version 4, newer than this mcp-memory-postgres "
        "understands (3). Upgrade mcp-memory-postgres."
    )


@pytest.mark.parametrize("versions", [[1, 3], [2], [1, 1]])
def test_steps_must_number_from_one_without_gaps(versions: list[int]) -> None:
    with pytest.raises(ValueError, match="without gaps"):
        pending(0, [Migration(v, "x") for v in versions], location="db", package="pkg")
