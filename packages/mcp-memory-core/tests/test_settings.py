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
