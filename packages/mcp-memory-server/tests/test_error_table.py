"""One table maps each error mcp-memory raises to its MCP error, HTTP status and exit status, and every
surface answers with it: a tool call, a resource, the prompt, a web page, a command."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from mcp_memory_core import errors
from mcp_memory_core.settings import Settings
from mcp_memory_server.cli.common import expected_errors
from mcp_memory_server.mcp.toolbox import ToolBox
from mcp_memory_server.operations.errors import error_table, rule_for
from mcp_memory_server.web.routes import PageError, UiApp

MEMORY_ID = "6f1c1f8e-2f55-4a55-8a55-000000000001"
CASES = [  # (error, MCP code, HTTP status, exit status)
    (errors.MemoryNotFoundError(MEMORY_ID), INVALID_PARAMS, 404, 1),
    (errors.NotOwnerError(MEMORY_ID, "delete"), INVALID_PARAMS, 403, 1),
    (errors.MemoryStateError("The memory was deleted."), INVALID_PARAMS, 409, 1),
    (errors.InvalidInputError("limit must be from 1 to 100."), INVALID_PARAMS, 400, 1),
    (errors.StorageError("The disk is full."), INTERNAL_ERROR, 503, 1),
    (errors.UnavailableError("PostgreSQL at db:5432 refused."), INTERNAL_ERROR, 503, 1),
    (errors.PluginError("The plugin x broke."), INTERNAL_ERROR, 400, 1),
]


def _subclasses(kind: type[BaseException]) -> set[type[BaseException]]:
    found = set(kind.__subclasses__())
    return found.union(*(_subclasses(k) for k in found))


def test_every_error_of_the_core_has_a_rule_and_no_rule_hides_behind_an_earlier_one():
    for kind in _subclasses(errors.MemoryServerError) | {errors.MemoryServerError}:
        assert any(issubclass(kind, listed) for listed, _ in error_table()), kind
    kinds = [kind for kind, _ in error_table()]
    for i, kind in enumerate(kinds):
        assert not any(issubclass(kind, earlier) for earlier in kinds[:i]), f"{kind} is never reached"


def test_an_error_mcp_memory_did_not_raise_on_purpose_has_no_rule():
    assert rule_for(KeyError("x")) is None


@pytest.mark.parametrize(("exc", "code", "status", "exit_code"), CASES)
def test_the_table_gives_each_error_its_code_status_and_exit_status(exc, code, status, exit_code):
    rule = rule_for(exc)
    assert rule is not None
    assert (rule.mcp_code, rule.http_status, rule.exit_code) == (code, status, exit_code)


def test_an_invalid_setting_exits_with_the_usage_status(monkeypatch, capsys):
    from mcp_memory_server.cli.common import load_settings

    monkeypatch.setenv("MCP_MEMORY_MAX_RESULT_TOKENS", "many")
    with pytest.raises(SystemExit) as exited:
        load_settings()
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith(
        "mcp-memory: error: invalid settings: MCP_MEMORY_MAX_RESULT_TOKENS"
    )


def _raising(exc: BaseException) -> Any:
    async def call_scoped(fn: Any, access: Any) -> Any:
        raise exc

    return SimpleNamespace(call_scoped=call_scoped)


@pytest.mark.anyio
@pytest.mark.parametrize(("exc", "code", "status", "exit_code"), CASES)
async def test_a_web_page_answers_the_tables_status(exc, code, status, exit_code):
    ui = SimpleNamespace(service=_raising(exc))
    with pytest.raises(PageError) as refused:
        await UiApp.scoped(ui, SimpleNamespace(access=None), lambda engine, scope: None)  # type: ignore[arg-type]
    assert refused.value.status == status
    assert refused.value.message == rule_for(exc).mcp_message(exc)  # type: ignore[union-attr]


@pytest.mark.anyio
@pytest.mark.parametrize(("exc", "code", "status", "exit_code"), CASES)
async def test_a_tool_call_answers_the_tables_message(exc, code, status, exit_code):
    box = ToolBox(_raising(exc))
    with pytest.raises(ToolError) as refused:
        await box.run(lambda engine, scope: None)
    assert str(refused.value) == rule_for(exc).mcp_message(exc)  # type: ignore[union-attr]


@pytest.mark.parametrize(("exc", "code", "status", "exit_code"), CASES)
def test_a_command_exits_with_the_tables_status(exc, code, status, exit_code, capsys):
    with pytest.raises(SystemExit) as exited, expected_errors():
        raise exc
    assert exited.value.code == exit_code
    assert capsys.readouterr().err == f"mcp-memory: error: {rule_for(exc).command_message(exc)}\n"  # type: ignore[union-attr]


def test_an_unavailable_database_is_said_first_except_by_the_cli_which_says_where():
    exc = errors.UnavailableError("PostgreSQL at db:5432 refused.")
    rule = rule_for(exc)
    assert rule is not None
    assert rule.mcp_message(exc) == f"{errors.DATABASE_UNAVAILABLE} PostgreSQL at db:5432 refused."
    assert rule.command_message(exc) == "PostgreSQL at db:5432 refused."


def test_a_command_names_its_own_listing_commands_for_an_unknown_id():
    exc = errors.MemoryNotFoundError(MEMORY_ID)
    rule = rule_for(exc)
    assert rule is not None
    assert "`mcp-memory list`" in rule.command_message(exc)
    assert "search_memories" in rule.mcp_message(exc)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (errors.InvalidInputError("query must not be empty."), INVALID_PARAMS),
        (errors.StorageError("full"), INTERNAL_ERROR),
    ],
)
async def test_the_prompt_answers_the_tables_code(settings: Settings, monkeypatch, exc, code):
    """A storage failure is the server's (internal error), not the caller's (invalid params)."""
    from mcp import Client

    from mcp_memory_server.mcp.app import build_app

    app = build_app(settings)
    service = app.memory_service  # type: ignore[attr-defined]
    try:
        monkeypatch.setattr(service.engine(), "recall", lambda *a, **k: (_ for _ in ()).throw(exc))
        async with Client(app) as client:
            with pytest.raises(MCPError) as refused:
                await client.get_prompt("memory_injection", {"query": "deploy"})
    finally:
        service.close()
    assert refused.value.error.code == code


@pytest.mark.anyio
async def test_a_resource_read_answers_the_tables_code(settings: Settings):
    """An id that is no memory id is the caller's mistake (invalid params), as an unknown id is."""
    from mcp import Client

    from mcp_memory_server.mcp.app import build_app

    app = build_app(settings)
    try:
        async with Client(app) as client:
            with pytest.raises(MCPError) as unknown:
                await client.read_resource(f"memory://{MEMORY_ID}")
            with pytest.raises(MCPError) as malformed:
                await client.read_resource("memory://not-an-id")
    finally:
        app.memory_service.close()  # type: ignore[attr-defined]
    assert unknown.value.error.code == INVALID_PARAMS
    assert malformed.value.error.code == INVALID_PARAMS
