"""The server's own settings (``ServerSettings``: the core's plus the HTTP server's and the MCP tools'),
each variable honoured by the surface that reads it: the token commands, ``serve --transport http``
and the tools' result budget."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from mcp_memory_core.settings import Settings
from mcp_memory_server.cli.main import cli
from mcp_memory_server.runtime.config import ConfigurationError, load_settings
from mcp_memory_server.runtime.service import MemoryService
from mcp_memory_server.runtime.settings import ServerSettings

HTTP_FIELDS = ("tokens_path", "allowed_hosts", "public_url", "max_result_tokens")


def test_the_server_settings_are_the_core_settings_plus_the_http_fields() -> None:
    assert set(ServerSettings.model_fields) == set(Settings.model_fields) | set(HTTP_FIELDS)
    assert ServerSettings.model_config["env_prefix"] == Settings.model_config["env_prefix"] == "MCP_MEMORY_"


def test_the_settings_every_server_surface_reads_are_the_server_settings(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MCP_MEMORY_TOKENS_PATH", str(tmp_path / "t.db"))
    monkeypatch.setenv("MCP_MEMORY_ALLOWED_HOSTS", "memory.example.com")
    monkeypatch.setenv("MCP_MEMORY_PUBLIC_URL", " https://memory.example.com ")
    monkeypatch.setenv("MCP_MEMORY_MAX_RESULT_TOKENS", "1234")
    settings = load_settings()
    assert isinstance(settings, ServerSettings)
    assert (
        settings.tokens_path,
        settings.allowed_hosts,
        settings.public_url,
        settings.max_result_tokens,
    ) == (
        tmp_path / "t.db",
        "memory.example.com",
        "https://memory.example.com",
        1234,
    )
    assert settings.store == "memory" and settings.resolved_tokens_path() == tmp_path / "t.db"


def test_a_bad_http_setting_is_still_one_sentence_naming_its_variable(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_PUBLIC_URL", "memory.example.com")
    with pytest.raises(ConfigurationError, match=r"MCP_MEMORY_PUBLIC_URL: .*is not an http\(s\) URL"):
        load_settings()


@pytest.mark.parametrize(
    "value", ["https://memory.example.com", "memory.example.com/mcp", "memory example.com", "host:port"]
)
def test_an_allowed_host_that_is_no_host_name_is_one_sentence(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("MCP_MEMORY_ALLOWED_HOSTS", f"ok.example.com, {value}")
    with pytest.raises(ConfigurationError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith("invalid settings: MCP_MEMORY_ALLOWED_HOSTS: ") and "\n" not in message
    assert "is not a host name" in message


@pytest.mark.parametrize(
    "value", ["memory.example.com", "a.example.com:8443, 10.0.0.5", "[fd00::1]:8000", ""]
)
def test_allowed_hosts_take_names_addresses_and_ports(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("MCP_MEMORY_ALLOWED_HOSTS", value)
    assert load_settings().allowed_hosts == value


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("MCP_MEMORY_SECRETS", "redcat", "'refuse', 'redact' or 'allow'"),
        ("MCP_MEMORY_SECRETS_PII", "email,ssn", "takes email and/or phone"),
    ],
)
def test_a_bad_secret_policy_is_one_sentence_naming_its_variable(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, variable: str, value: str, said: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as caught:
        load_settings()
    assert str(caught.value).startswith(f"invalid settings: {variable}: ") and said in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_engine_gets_the_secret_policy_of_the_settings(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_memory_server.runtime.assembly import build_engine

    monkeypatch.setenv("MCP_MEMORY_SECRETS", "refuse")
    monkeypatch.setenv("MCP_MEMORY_SECRETS_PII", "phone")
    engine = build_engine(load_settings())
    try:
        assert (engine.secrets.mode, engine.secrets.pii) == ("refuse", frozenset({"phone"}))
    finally:
        engine.close()


def test_a_service_given_core_settings_keeps_them_and_reads_the_budget_from_the_environment(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program (or a test) that builds the app from the core ``Settings`` still gets the tools'
    budget of MCP_MEMORY_MAX_RESULT_TOKENS; what it set itself is kept."""
    monkeypatch.setenv("MCP_MEMORY_MAX_RESULT_TOKENS", "1234")
    service = MemoryService(Settings(namespace="given"), engine_factory=lambda s: pytest.fail("no engine"))
    assert service.settings.max_result_tokens == 1234
    assert service.settings.namespace == "given" and service.settings.store == "memory"


def test_the_token_commands_keep_tokens_in_the_file_of_tokens_path(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "elsewhere" / "team-tokens.db"
    path.parent.mkdir()
    monkeypatch.setenv("MCP_MEMORY_TOKENS_PATH", str(path))
    created = CliRunner().invoke(cli, ["token", "create", "alice", "--json"])
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["location"] == str(path)
    assert path.is_file() and not (tmp_path / "tokens.db").exists()


def _serve_once(monkeypatch: pytest.MonkeyPatch, requests: Callable[[TestClient], Any]) -> Any:
    """``serve_http`` as ``serve --transport http --no-auth`` runs it, with ``requests`` made to the app
    uvicorn would serve instead of serving it."""
    from mcp_memory_server.web import server

    answers: list[Any] = []

    def run(serve: Any, **options: Any) -> None:
        with TestClient(serve.__self__.config.app, base_url="http://127.0.0.1:8000") as client:
            answers.append(requests(client))

    monkeypatch.setattr(server.anyio, "run", run)
    server.serve_http(load_settings(), host="127.0.0.1", port=8000, auth=False)
    return answers[0]


def test_serve_http_answers_the_allowed_hosts_at_the_public_url(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("MCP_MEMORY_ALLOWED_HOSTS", "memory.example.com")
    monkeypatch.setenv("MCP_MEMORY_PUBLIC_URL", "https://memory.example.com")

    def requests(client: TestClient) -> dict[str, int]:
        return {
            host: client.get("/ui/login", headers={"Host": host}, follow_redirects=False).status_code
            for host in ("memory.example.com", "other.example.com")
        }

    with caplog.at_level(logging.INFO, logger="mcp_memory_server.web.server"):
        statuses = _serve_once(monkeypatch, requests)
    assert statuses["other.example.com"] == 421 and statuses["memory.example.com"] != 421
    assert "streamable HTTP at https://memory.example.com/mcp" in caplog.text


def test_the_doctor_lists_the_server_variables_and_knows_them(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_PUBLIC_URL", "https://memory.example.com")
    monkeypatch.setenv("MCP_MEMORY_MAX_RESULT_TOKENS", "2000")
    result = CliRunner().invoke(cli, ["doctor", "--json", "--no-handshake"])
    (settings,) = [check for check in json.loads(result.stdout)["checks"] if check["name"] == "settings"]
    assert settings["status"] == "ok", settings["message"]  # no variable is unknown
    rows = {row["variable"]: row for row in settings["details"]["settings"]}
    assert {f"MCP_MEMORY_{name.upper()}" for name in HTTP_FIELDS} <= set(rows)
    assert rows["MCP_MEMORY_PUBLIC_URL"] == {
        "name": "public_url",
        "variable": "MCP_MEMORY_PUBLIC_URL",
        "value": "https://memory.example.com",
        "source": "environment",
        "of": "core",
    }
    assert (
        "MCP_MEMORY_PUBLIC_URL" in settings["message"]
        and "MCP_MEMORY_MAX_RESULT_TOKENS" in settings["message"]
    )


def test_the_engine_defers_long_memories_sentences_as_the_settings_say(fake_env: dict[str, str]) -> None:
    from mcp_memory_server.runtime.assembly import build_engine

    engine = build_engine(Settings(defer_passages=True, passage_backlog=3, passage_fill_idle=0.5))
    assert (engine.defer_passages, engine.passage_backlog, engine.passage_fill_idle) == (True, 3, 0.5)
    engine = build_engine(Settings(defer_passages=False))
    assert engine.defer_passages is False
