"""``mcp-memory doctor``: a healthy setup passes (exit 0), and each broken one fails in the check that
names it, with the fix to apply; nothing is written, and no check ends in a traceback."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcp_memory_core import EmbedderSpec
from mcp_memory_core.plugins import PluginManager, module_plugin, plugin_manager_from_settings
from mcp_memory_server import doctor
from mcp_memory_server.cli import cli
from mcp_memory_testing.fakes import HashEmbedder


@pytest.fixture
def sqlite_env(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The real sqlite-vec store with the hash embedder (fast: no model loads)."""
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")
    return fake_env


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["doctor", *args])


def checks(*args: str, exit_code: int) -> dict[str, dict[str, Any]]:
    """``doctor --json ARGS`` (without the handshake unless asked), by check name."""
    extra = () if "--handshake" in args else ("--no-handshake",)
    result = invoke("--json", *extra, *(a for a in args if a != "--handshake"))
    assert result.exit_code == exit_code, (result.output, result.exception)
    data = json.loads(result.stdout)
    assert data["ok"] is (exit_code == 0)
    return {check["name"]: check for check in data["checks"]}


def only_failures(found: dict[str, dict[str, Any]]) -> set[str]:
    return {name for name, check in found.items() if check["status"] == "fail"}


def create_database(embedder: str = "hash") -> None:
    """Create the database of the current settings, bound to ``embedder``'s model (``mcp-memory gc``)."""
    result = CliRunner().invoke(cli, ["gc"], env={"MCP_MEMORY_EMBEDDER": embedder})
    assert result.exit_code == 0, result.output


# -- healthy ------------------------------------------------------------------------------------------
def test_a_healthy_setup_passes_with_a_real_stdio_handshake(sqlite_env: dict[str, str]) -> None:
    create_database()
    found = checks("--handshake", exit_code=0)
    assert list(found) == [
        "versions",
        "settings",
        "plugins",
        "storage",
        "database",
        "embedder",
        "model",
        "handshake",
    ]
    assert all(check["status"] in ("ok", "warn") for check in found.values()), found
    assert all(check["fix"] is None for check in found.values() if check["status"] == "ok")
    handshake = found["handshake"]
    # A loaded machine can make the handshake slower than the "Slow" warning's mark: that is the
    # one warning this check may give here, never a failure.
    assert handshake["status"] == "ok" or "Slow" in handshake["message"], handshake
    assert "store_memory" in handshake["details"]["tools"] and handshake["details"]["initialize_ms"] > 0
    assert (
        found["database"]["details"]["schema_version"]
        == found["database"]["details"]["supported_schema_version"]
    )
    assert found["model"]["details"]["stored"] == found["model"]["details"]["configured"] == "hash-64"
    assert found["embedder"]["details"]["load_seconds"] >= 0
    versions = found["versions"]["details"]
    assert "mcp-memory-app" in versions["packages"] and "mcp" in versions["packages"]
    assert "sqlite-vec" in versions["sqlite_binding"]
    by_variable = {row["variable"]: row for row in found["settings"]["details"]["settings"]}
    assert by_variable["MCP_MEMORY_EMBEDDER"]["source"] == "environment"
    assert by_variable["MCP_MEMORY_TTL_WORKING"]["source"] == "default"
    assert by_variable["MCP_MEMORY_SQLITE_VECTOR_CACHE"]["of"] == "store sqlite-vec"


def test_people_get_a_table_and_doctor_creates_nothing(sqlite_env: dict[str, str], tmp_path: Path) -> None:
    result = invoke("--no-handshake")
    assert result.exit_code == 0, result.output
    for name in ("versions", "settings", "plugins", "storage", "database", "embedder", "model"):
        assert name in result.stdout
    assert "0 failed." in result.stdout
    assert not Path(sqlite_env["MCP_MEMORY_DB_PATH"]).exists()  # "does not exist yet": still not


def test_no_password_is_shown() -> None:
    url = "postgresql://mcp:hunter2@db.internal/memory"
    assert doctor._shown("MCP_MEMORY_DATABASE_URL", url) == "postgresql://mcp:***@db.internal/memory"
    assert doctor._shown("MCP_MEMORY_DATABASE_URL", "host=db password=hunter2") == "host=db password=***"
    assert doctor._shown("MCP_MEMORY_API_KEY", "abc") == "(set, hidden)"
    assert doctor._shown("MCP_MEMORY_TOKENS_PATH", "/x/tokens.db") == "/x/tokens.db"


def test_a_misspelt_variable_is_a_warning_naming_the_right_one(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_EMBEDER", "minilm")
    settings = checks(exit_code=0)["settings"]
    assert settings["status"] == "warn"
    assert "MCP_MEMORY_EMBEDER (did you mean MCP_MEMORY_EMBEDDER?)" in settings["message"]
    assert "spelling" in settings["fix"]


# -- broken -------------------------------------------------------------------------------------------
def test_a_data_path_under_a_regular_file_fails_storage(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # chmod 000 stops nobody when the tests run as root: a folder that is a file stops everyone.
    blocker = tmp_path / "data"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(blocker / "memories.db"))
    found = checks(exit_code=1)
    assert only_failures(found) == {"storage"}
    assert f"{blocker} is a file, not a folder" in found["storage"]["message"]
    assert "Set MCP_MEMORY_DB_PATH to a path inside a folder" in found["storage"]["fix"]


@pytest.mark.skipif(
    getattr(os, "geteuid", lambda: -1)() == 0, reason="root reads and writes whatever the permission bits say"
)
def test_an_unwritable_data_folder_fails_storage(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(folder / "memories.db"))
    try:
        found = checks(exit_code=1)
    finally:
        folder.chmod(0o700)
    assert found["storage"]["status"] == "fail" and "is not writable" in found["storage"]["message"]
    assert "MCP_MEMORY_DB_PATH" in found["storage"]["fix"]


def test_an_unreadable_data_folder_fails_storage_even_for_root(
    sqlite_env: dict[str, str], tmp_path: Path
) -> None:
    """The same refusal, as a user whose data folder is not theirs to read. As root (these machines),
    ``unshare -U`` runs the doctor in a user namespace where root's own files get no override: a
    folder with mode 000 is unreadable there, as it is for any user."""
    import shutil
    import subprocess
    import sys

    if shutil.which("unshare") is None or subprocess.run(["unshare", "-U", "true"], check=False).returncode:
        pytest.skip("user namespaces (unshare -U) are not available here")
    create_database()
    folder = tmp_path / "locked"
    folder.mkdir()
    database = folder / "memories.db"
    Path(sqlite_env["MCP_MEMORY_DB_PATH"]).rename(database)
    folder.chmod(0o000)
    env = {**os.environ, "MCP_MEMORY_DB_PATH": str(database)}  # the fixtures set MCP_MEMORY_* there
    try:
        result = subprocess.run(
            [
                "unshare",
                "-U",
                sys.executable,
                "-m",
                "mcp_memory_server",
                "doctor",
                "--json",
                "--no-handshake",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        folder.chmod(0o700)
    assert result.returncode == 1, result.stderr
    found = {check["name"]: check for check in json.loads(result.stdout)["checks"]}
    assert found["storage"]["status"] == "fail", found["storage"]
    assert f"this user may not enter the folder {folder} (permission denied)" in found["storage"]["message"]
    assert "Set MCP_MEMORY_DB_PATH to a file in a folder you can write" in found["storage"]["fix"]
    assert found["database"]["status"] == "warn" and "Not checked" in found["database"]["message"]
    assert "Traceback" not in result.stderr


def test_a_corrupt_database_fails_and_is_left_as_it_was(sqlite_env: dict[str, str]) -> None:
    path = Path(sqlite_env["MCP_MEMORY_DB_PATH"])
    path.write_bytes(os.urandom(8192))
    before = path.read_bytes()
    found = checks(exit_code=1)
    assert only_failures(found) == {"database"}
    assert "is damaged or is not a SQLite database" in found["database"]["message"]
    assert "restore" in found["database"]["fix"] and "backup" in found["database"]["fix"]
    assert found["model"]["status"] == "warn" and "Not checked" in found["model"]["message"]
    assert path.read_bytes() == before


def test_a_database_newer_than_the_code_fails_with_the_upgrade(sqlite_env: dict[str, str]) -> None:
    create_database()
    with sqlite3.connect(sqlite_env["MCP_MEMORY_DB_PATH"]) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    found = checks(exit_code=1)
    assert only_failures(found) == {"database"}
    assert (
        "schema version 99, newer than this mcp-memory-sqlite-vec understands" in found["database"]["message"]
    )
    assert "Upgrade mcp-memory" in found["database"]["fix"]


def test_an_unknown_embedder_fails(sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_MEMORY_EMBEDDER", "minilmm")
    found = checks(exit_code=1)
    assert only_failures(found) == {"plugins", "embedder"}
    assert "The embedder 'minilmm' is not recognized. Choose one of:" in found["embedder"]["message"]
    assert "Set MCP_MEMORY_EMBEDDER to one of the names listed" in found["embedder"]["fix"]


class UnloadableEmbedder(HashEmbedder):
    def load(self) -> None:
        raise RuntimeError("model.onnx is missing")


def with_plugin(**hooks: Any) -> PluginManager:
    """The installed plugins plus one more, registered by hand."""
    manager = plugin_manager_from_settings()
    manager.register(module_plugin("broken-embedder", **hooks), name="broken-embedder", package="broken-pkg")
    return manager


def test_an_embedder_that_cannot_load_fails_with_the_reinstall(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def mcp_memory_embedders() -> Any:
        yield EmbedderSpec(name="unloadable", factory=lambda settings: UnloadableEmbedder(), description="")

    monkeypatch.setenv("MCP_MEMORY_EMBEDDER", "unloadable")
    found = {
        c.name: c
        for c in doctor.run_checks(
            plugins=with_plugin(mcp_memory_embedders=mcp_memory_embedders), handshake=False
        )
    }
    assert {name for name, c in found.items() if c.status == "fail"} == {"embedder"}
    assert (
        "'unloadable' (broken-pkg) failed to load: RuntimeError: model.onnx is missing"
        in found["embedder"].message
    )
    assert (
        found["embedder"].fix is not None
        and "pip install --force-reinstall broken-pkg" in found["embedder"].fix
    )


@pytest.mark.skipif(importlib.util.find_spec("mcp_memory_minilm") is None, reason="needs the minilm plugin")
def test_vectors_of_another_model_fail_with_reindex_as_the_fix(
    sqlite_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    create_database("hash")  # bound to hash-64
    monkeypatch.setenv("MCP_MEMORY_EMBEDDER", "minilm")
    found = checks(exit_code=1)
    assert only_failures(found) == {"model"}
    model = found["model"]
    assert "holds vectors of 'hash-64' (64-d), but the configured embedder 'minilm' makes" in model["message"]
    assert "Run `mcp-memory reindex` (re-embeds every memory with minilm in place" in model["fix"]
    assert "or set MCP_MEMORY_EMBEDDER=hash again" in model["fix"]
    assert model["details"]["writer"] == "hash"


def test_invalid_settings_fail_and_the_rest_is_not_checked(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_DEDUP_THRESHOLD", "5")
    found = checks(exit_code=1)
    assert only_failures(found) == {"settings"}
    assert "MCP_MEMORY_DEDUP_THRESHOLD" in found["settings"]["message"]
    assert "Correct or unset" in found["settings"]["fix"]
    assert found["embedder"]["status"] == "warn" and found["embedder"]["message"].startswith("Not checked")


def test_a_check_that_raises_is_that_checks_failure(fake_env: dict[str, str]) -> None:
    def broken(ctx: doctor.Context) -> doctor.Check:
        raise KeyError("surprise")

    check = doctor.guarded("embedder", broken, doctor.Context())
    assert check.status == "fail" and "KeyError" in check.message and "report it" in (check.fix or "")


# -- the handshake fails for real ---------------------------------------------------------------------
def sitecustomize(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    """Code every Python started with this environment runs first (the spawned server too)."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(code)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    )


def test_a_server_printing_to_stdout_fails_the_handshake(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sitecustomize(tmp_path, monkeypatch, "print('Welcome to my shell!')\n")
    check = doctor.check_handshake(doctor.Context(), timeout=60)
    assert check.status == "fail", check
    assert "wrote to stdout what is not MCP: 'Welcome to my shell!'" in check.message
    assert check.fix is not None and "logs belong on stderr" in check.fix


def test_a_crashing_server_fails_the_handshake_quoting_its_stderr(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sitecustomize(
        tmp_path,
        monkeypatch,
        "import os, sys\nsys.stderr.write('fatal: cannot start\\n')\nsys.stderr.flush()\nos._exit(3)\n",
    )
    check = doctor.check_handshake(doctor.Context(), timeout=60)
    assert check.status == "fail", check
    assert "did not complete initialize + tools/list" in check.message
    assert "fatal: cannot start" in check.message and check.details["stderr"].endswith("fatal: cannot start")


def test_the_database_check_counts_long_memories_waiting_for_their_sentences(
    sqlite_env: dict[str, str],
) -> None:
    from mcp_memory_core import MemoryEngine
    from mcp_memory_rankers import SimilarityRanker
    from mcp_memory_sqlite_vec import SqliteVecStore

    create_database()
    engine = MemoryEngine(
        SqliteVecStore(Path(sqlite_env["MCP_MEMORY_DB_PATH"])),
        HashEmbedder(),
        SimilarityRanker(),
        defer_passages=True,
        passage_fill_idle=3600,  # the filler never gets to it: the mark stays, as after a crash
    )
    engine.store_memory("Maya moved to Lisbon in March. She works as a data engineer. She surfs on Sundays.")
    engine.close()
    found = checks(exit_code=0)
    assert found["database"]["details"]["pending_passages"] == 1
    assert "1 long memory waiting for their sentences' vectors" in found["database"]["message"]
