import dataclasses
from pathlib import Path

from mcp_memory_core import Settings


def test_defaults_are_absolute_and_zero_config(monkeypatch):
    for var in ("MCP_MEMORY_DB_PATH", "MCP_MEMORY_STORE", "MCP_MEMORY_EMBEDDER", "MCP_MEMORY_RANKER"):
        monkeypatch.delenv(var, raising=False)
    settings = Settings()
    assert settings.db_path.is_absolute()
    assert settings.db_path.name == "memories.db" and "mcp-memory" in settings.db_path.parts
    assert (settings.store, settings.embedder, settings.ranker) == ("sqlite-vec", "minilm", "hybrid")


def test_environment_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(tmp_path / "x.db"))
    monkeypatch.setenv("MCP_MEMORY_RANKER", " Similarity ")
    settings = Settings()
    assert settings.db_path == tmp_path / "x.db"
    assert settings.ranker == "similarity"


def test_relative_db_path_is_made_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", "rel/m.db")
    assert Settings().db_path == Path(tmp_path, "rel", "m.db").resolve()


def test_the_relevance_floor_is_the_embedders_calibration_with_settings_on_top(monkeypatch):
    from mcp_memory_core.relevance import ALL_MINILM_L6_V2, RelevanceFloor

    class Calibrated:
        relevance_floor = ALL_MINILM_L6_V2

    class Uncalibrated:
        pass

    for var in (
        "RELEVANCE_FLOOR",
        "FLOOR_SIMILARITY",
        "FLOOR_STANDOUT",
        "FLOOR_KEYWORD_SIMILARITY",
        "FLOOR_BEST_SIMILARITY",
        "FLOOR_EXTRA_SIMILARITY",
    ):
        monkeypatch.delenv(f"MCP_MEMORY_{var}", raising=False)
    assert Settings().floor(Calibrated()) == ALL_MINILM_L6_V2
    assert Settings().floor(Uncalibrated()) is None  # no scale known: no floor
    monkeypatch.setenv("MCP_MEMORY_FLOOR_STANDOUT", "0.2")
    assert Settings().floor(Calibrated()) == dataclasses.replace(ALL_MINILM_L6_V2, min_standout=0.2)
    assert Settings().floor(Uncalibrated()) is None  # one value is not a calibration
    monkeypatch.setenv("MCP_MEMORY_FLOOR_SIMILARITY", "0.5")
    monkeypatch.setenv("MCP_MEMORY_FLOOR_KEYWORD_SIMILARITY", "0.4")
    assert Settings().floor(Uncalibrated()) == RelevanceFloor(0.5, 0.2, 0.4)  # the best: as any other
    monkeypatch.setenv("MCP_MEMORY_FLOOR_BEST_SIMILARITY", "0.1")
    assert Settings().floor(Uncalibrated()) == RelevanceFloor(0.5, 0.2, 0.4, 0.1)
    monkeypatch.setenv("MCP_MEMORY_FLOOR_EXTRA_SIMILARITY", "0.45")
    assert Settings().floor(Uncalibrated()) == RelevanceFloor(0.5, 0.2, 0.4, 0.1, 0.45)
    assert Settings().floor(Calibrated()).min_extra_similarity == 0.45
    monkeypatch.setenv("MCP_MEMORY_RELEVANCE_FLOOR", "false")
    assert Settings().floor(Calibrated()) is None


def test_rerankers_are_off_unless_named_and_read_comma_separated(monkeypatch):
    import pytest
    from pydantic import ValidationError

    monkeypatch.delenv("MCP_MEMORY_RERANKERS", raising=False)
    monkeypatch.delenv("MCP_MEMORY_RERANKER_TIMEOUT", raising=False)
    assert Settings().rerankers == () and Settings().reranker_timeout == 2.0
    monkeypatch.setenv("MCP_MEMORY_RERANKERS", " Phrases, cross-encoder ,")
    monkeypatch.setenv("MCP_MEMORY_RERANKER_TIMEOUT", "0.5")
    settings = Settings()
    assert settings.rerankers == ("phrases", "cross-encoder") and settings.reranker_timeout == 0.5
    monkeypatch.setenv("MCP_MEMORY_RERANKERS", "phrases,PHRASES")
    with pytest.raises(ValidationError, match="names the reranker 'phrases' more than once"):
        Settings()
    monkeypatch.setenv("MCP_MEMORY_RERANKERS", "")
    monkeypatch.setenv("MCP_MEMORY_RERANKER_TIMEOUT", "0")
    with pytest.raises(ValidationError, match="greater than 0"):
        Settings()


def test_the_core_settings_hold_no_server_or_single_plugin_field():
    """The core keeps what the engine and plugin selection read: the HTTP server's fields live in the
    server (``ServerSettings``) and the sentence-transformers model in that plugin's own settings."""
    moved = {"tokens_path", "allowed_hosts", "public_url", "max_result_tokens", "model"}
    assert moved.isdisjoint(Settings.model_fields)
    assert not hasattr(Settings(), "resolved_tokens_path")


def test_the_secret_policy_is_redact_unless_set(monkeypatch):
    import pytest
    from pydantic import ValidationError

    monkeypatch.delenv("MCP_MEMORY_SECRETS", raising=False)
    monkeypatch.delenv("MCP_MEMORY_SECRETS_PII", raising=False)
    policy = Settings().secret_policy()
    assert (policy.mode, policy.pii) == ("redact", frozenset())
    monkeypatch.setenv("MCP_MEMORY_SECRETS", "refuse")
    monkeypatch.setenv("MCP_MEMORY_SECRETS_PII", " Email, phone ")
    policy = Settings().secret_policy()
    assert (policy.mode, policy.pii) == ("refuse", frozenset({"email", "phone"}))
    monkeypatch.setenv("MCP_MEMORY_SECRETS_PII", "email,ssn")
    with pytest.raises(ValidationError, match="takes email and/or phone"):
        Settings()


def test_long_memories_defer_their_sentences_unless_told_not_to(monkeypatch):
    import pytest
    from pydantic import ValidationError

    for var in ("MCP_MEMORY_DEFER_PASSAGES", "MCP_MEMORY_PASSAGE_BACKLOG", "MCP_MEMORY_PASSAGE_FILL_IDLE"):
        monkeypatch.delenv(var, raising=False)
    settings = Settings()
    assert (settings.defer_passages, settings.passage_backlog, settings.passage_fill_idle) == (True, 256, 0.1)
    monkeypatch.setenv("MCP_MEMORY_DEFER_PASSAGES", "false")
    monkeypatch.setenv("MCP_MEMORY_PASSAGE_BACKLOG", "8")
    monkeypatch.setenv("MCP_MEMORY_PASSAGE_FILL_IDLE", "3600")
    settings = Settings()
    assert (settings.defer_passages, settings.passage_backlog, settings.passage_fill_idle) == (
        False,
        8,
        3600.0,
    )
    monkeypatch.setenv("MCP_MEMORY_PASSAGE_BACKLOG", "-1")
    with pytest.raises(ValidationError, match="passage_backlog"):
        Settings()
