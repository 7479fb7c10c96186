"""The ``mcp-memory`` command: every subcommand, human and --json output, clean errors."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner
from server_helpers import INITIALIZE

import mcp_memory_server.runtime.assembly as assembly
from mcp_memory_core.engine import MemoryEngine
from mcp_memory_core.settings import Settings
from mcp_memory_server.cli import cli


@pytest.fixture
def engine(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> MemoryEngine:
    """One engine shared by every CLI invocation of a test (the in-memory store does not persist)."""
    shared = assembly.build_engine(Settings())
    real_build = assembly.build_engine

    def build(settings: Settings | None = None, plugins: Any = None) -> MemoryEngine:
        real_build(settings, plugins)  # still resolve the names, as the real command does
        return shared

    monkeypatch.setattr(assembly, "build_engine", build)
    return shared


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_help_lists_commands() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for command in (
        "serve",
        "list",
        "search",
        "get",
        "plugins",
        "export",
        "import",
        "gc",
        "clear",
        "namespaces",
    ):
        assert command in result.output


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0 and "0.1.0" in result.output


def test_list_empty(engine: MemoryEngine) -> None:
    result = run("list")
    assert result.exit_code == 0 and "No memories." in result.output


def test_list_human_and_json_with_paging(engine: MemoryEngine) -> None:
    ids = [engine.store_memory(f"memory number {i}").memory.id for i in range(3)]
    human = run("list", "--limit", "2")
    assert human.exit_code == 0
    assert ids[2] in human.output and ids[1] in human.output and ids[0] not in human.output
    assert "3 in total" in human.output and "--cursor" in human.output
    data = json.loads(run("list", "--limit", "2", "--json").output)
    assert data["total"] == 3 and len(data["memories"]) == 2 and data["next_cursor"]
    rest = json.loads(run("list", "--limit", "2", "--cursor", data["next_cursor"], "--json").output)
    assert [m["id"] for m in rest["memories"]] == [ids[0]] and rest["next_cursor"] is None


def test_search_human_and_json(engine: MemoryEngine) -> None:
    tea = engine.store_memory("The user likes oolong tea").memory.id
    engine.store_memory("Deploys happen on Fridays")
    human = run("search", "oolong tea")
    assert human.exit_code == 0
    first_line = human.output.splitlines()[0]
    assert tea in first_line and first_line.lstrip().startswith("1.")
    data = json.loads(run("search", "oolong tea", "--limit", "1", "--json").output)
    assert data["count"] == 1 and data["results"][0]["id"] == tea and "score" in data["results"][0]


def test_search_shows_the_matched_older_version(engine: MemoryEngine) -> None:
    old = engine.store_memory("The build uses make").memory.id
    new = engine.update_memory(old, "The build now uses just").memory.id
    data = json.loads(run("search", "build uses make", "--json").output)
    assert data["results"][0]["id"] == new and data["results"][0]["matched_id"] == old
    assert f"matched older version {old}" in run("search", "build uses make").output


def test_search_nothing(engine: MemoryEngine) -> None:
    result = run("search", "anything")
    assert result.exit_code == 0 and "No matching memories." in result.output


def test_get_human_and_json(engine: MemoryEngine) -> None:
    old = engine.store_memory("Line one", {"project": "atlas"}).memory.id
    new = engine.update_memory(old, "Line two").memory.id
    human = run("get", old)
    assert human.exit_code == 0
    assert "superseded" in human.output and new in human.output and "Line one" in human.output
    assert "atlas" in human.output
    data = json.loads(run("get", old, "--json").output)
    assert data["status"] == "superseded" and data["head_id"] == new and data["content"] == "Line one"


def test_get_shows_every_field_and_takes_a_unique_prefix(engine: MemoryEngine) -> None:
    memory = engine.store_memory(
        "Deploys go out on Fridays",
        type="procedural",
        tags=["ops", "deploy"],
        importance=0.8,
        pinned=True,
        occurred_at="2026-03-01T09:30:00+00:00",
    ).memory
    human = run("get", memory.id[:8])
    assert human.exit_code == 0, human.output
    lines = dict(line.split(":", 1) for line in human.output.splitlines() if ":" in line and line[0] != " ")
    shown = {key.strip(): value.strip() for key, value in lines.items()}
    assert shown["id"] == memory.id and shown["type"] == "procedural" and shown["tags"] == "ops, deploy"
    assert shown["namespace"] == memory.namespace and shown["importance"] == "0.8"
    assert shown["pinned"] == "yes" and shown["occurred_at"].startswith("2026-03-01T09:30:00")
    assert json.loads(run("get", memory.id[:13].upper(), "--json").output)["id"] == memory.id


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("get", "not-a-uuid"), "is not a memory id"),
        (("get", "00000000-0000-4000-8000-000000000000"), "No memory with id"),
        (("list", "--limit", "0"), "limit must be an integer"),
        (("list", "--cursor", "zzz"), "cursor is not valid"),
        (("search", "  "), "query must be a non-empty string"),
        (("search", "x", "--limit", "500"), "limit must be an integer from 1 to 100"),
    ],
)
def test_expected_errors_are_one_line_without_traceback(
    engine: MemoryEngine, args: tuple[str, ...], message: str
) -> None:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 1
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert result.stderr.startswith("mcp-memory: error: ") and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_unknown_backend_is_a_clean_error(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_MEMORY_STORE", "postgres-of-dreams")
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 1
    assert "postgres-of-dreams" in result.stderr and "Choose one of" in result.stderr
    assert "Traceback" not in result.output


def test_invalid_settings_are_a_clean_error(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_STRICT_PLUGINS", "perhaps")
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 2
    assert "MCP_MEMORY_STRICT_PLUGINS" in result.stderr


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"MCP_MEMORY_STORE": "sqlite-vec", "MCP_MEMORY_SQLITE_VECTOR_CACHE_MAX_MB": "lots"},
            "Invalid settings of the store 'sqlite-vec': MCP_MEMORY_SQLITE_VECTOR_CACHE_MAX_MB: ",
        ),
        (
            {
                "MCP_MEMORY_STORE": "postgres",
                "MCP_MEMORY_DATABASE_URL": "postgresql://u@h/db",
                "MCP_MEMORY_POSTGRES_POOL_SIZE": "1",
            },
            "Invalid settings of the store 'postgres': MCP_MEMORY_POSTGRES_POOL_SIZE: ",
        ),
        ({"MCP_MEMORY_STORE": "postgres"}, "MCP_MEMORY_STORE=postgres needs MCP_MEMORY_DATABASE_URL"),
    ],
)
def test_a_store_plugin_misconfigured_is_one_sentence(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    """A plugin's own settings (not core's) that do not validate, or a missing database URL: one line
    naming the variable, never a traceback."""
    monkeypatch.delenv("MCP_MEMORY_DATABASE_URL", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 1
    assert result.stderr.startswith("mcp-memory: error: ") and expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_plugins_table_and_json(fake_env: dict[str, str]) -> None:
    human = run("plugins")
    assert human.exit_code == 0
    lines = human.output.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "PACKAGE", "VERSION", "DESCRIPTION"]
    assert any(line.split()[:4] == ["*", "hash", "embedder", "mcp-memory-testing"] for line in lines)
    assert any(line.split()[:3] == ["*", "memory", "store"] for line in lines)
    assert any(line.split()[:3] == ["*", "similarity", "ranker"] for line in lines)
    data = json.loads(run("plugins", "--json").output)
    rows = {(b["kind"], b["name"]): b for b in data["backends"]}
    assert rows[("embedder", "hash")]["package"] == "mcp-memory-testing"
    assert rows[("store", "memory")]["selected"] is True
    assert rows[("ranker", "similarity")]["version"]
    assert data["failed"] == []
    assert data["selected"] == {
        "store": "memory",
        "embedder": "hash",
        "ranker": "similarity",
        "rerankers": [],
    }


def test_plugins_shows_failed_plugins(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_memory_core.plugins import PluginLoadFailure, PluginManager

    real = assembly.load_plugins

    def load(settings: Settings) -> PluginManager:
        manager = real(settings)
        manager.failures.append(PluginLoadFailure("broken", "mcp-memory-broken", "ImportError: no module x"))
        return manager

    monkeypatch.setattr(assembly, "load_plugins", load)
    human = run("plugins")
    assert "FAILED  broken (mcp-memory-broken): ImportError: no module x" in human.output
    data = json.loads(run("plugins", "--json").output)
    assert data["failed"] == [
        {"entry_point": "broken", "package": "mcp-memory-broken", "error": "ImportError: no module x"}
    ]


def test_plugins_honours_disable(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_MEMORY_DISABLE_PLUGINS", "*")
    data = json.loads(run("plugins", "--json").output)
    assert data["backends"] == []


def test_serve_rejects_an_unknown_transport() -> None:
    result = CliRunner().invoke(cli, ["serve", "--transport", "carrier-pigeon"])
    assert result.exit_code == 2 and "carrier-pigeon" in result.stderr


def test_no_subcommand_serves_stdio(fake_env: dict[str, str], tmp_path: Any) -> None:
    """``mcp-memory`` with no arguments is a stdio server: it answers initialize on stdout, logs on stderr."""
    init = INITIALIZE
    proc = subprocess.run(
        [sys.executable, "-c", "from mcp_memory_server.cli import main; main()"],
        input=json.dumps(init) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "MCP_MEMORY_LOG_LEVEL": "INFO"},
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stdout  # nothing but the protocol on stdout
    reply = json.loads(lines[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "mcp-memory"
    assert "serving over stdio" in proc.stderr


def test_http_serve_fails_fast_on_a_bad_backend(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_MEMORY_EMBEDDER", "no-such-model")
    result = CliRunner().invoke(cli, ["serve", "--transport", "http", "--port", "0"])
    assert result.exit_code == 1
    assert "no-such-model" in result.stderr and "Choose one of" in result.stderr
    assert "Traceback" not in result.output


# -- export / import -------------------------------------------------------------------------------------
EPOCH = "1767225600"  # SOURCE_DATE_EPOCH: 2026-01-01T00:00:00Z


@pytest.fixture
def sqlite_env(fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    """The real sqlite-vec store (it persists across invocations) with the fast hash embedder."""
    pytest.importorskip("mcp_memory_sqlite_vec")
    monkeypatch.setenv("MCP_MEMORY_STORE", "sqlite-vec")
    monkeypatch.setenv("MCP_MEMORY_NAMESPACE", "default")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)

    def use(name: str) -> Any:
        path = tmp_path / name
        monkeypatch.setenv("MCP_MEMORY_DB_PATH", str(path))
        return path

    return use


def populate(engine: MemoryEngine) -> None:
    a = engine.store_memory("The staging database runs PostgreSQL 13", {"team": "Zoë ☕"}).memory
    b = engine.update_memory(a.id, "Staging moved to PostgreSQL 15", tags=["db"]).memory
    engine.update_memory(b.id, "Staging runs PostgreSQL 16 since March")
    engine.delete_memory(engine.store_memory("The VPN password rotates weekly").memory.id)
    engine.pin_memory(engine.store_memory("Always answer in British English", type="procedural").memory.id)
    engine.store_memory("Sprint planning is on Mondays", namespace="work")


def test_export_import_round_trip_through_sqlite(sqlite_env: Any, tmp_path: Any) -> None:
    sqlite_env("original.db")
    engine = assembly.build_engine(Settings())
    populate(engine)
    engine.close()

    first = tmp_path / "out" / "export.jsonl"
    result = run("export", "--all-namespaces", "--output", str(first))
    assert result.exit_code == 0 and result.stdout == ""
    assert "Exported 6 memories (all namespaces)" in result.stderr
    header = json.loads(first.read_text(encoding="utf-8").splitlines()[0])
    assert header == {
        "format": "mcp-memory",
        "version": 1,
        "exported_at": "2026-01-01T00:00:00.000000+00:00",
        "count": 6,
    }
    assert run("export", "--all-namespaces").stdout_bytes == first.read_bytes()  # stdout: same bytes

    sqlite_env("fresh.db")
    imported = run("import", str(first))
    assert imported.exit_code == 0
    assert imported.stdout.strip() == "imported 6, skipped 0 (already present)"
    second = tmp_path / "again.jsonl"
    run("export", "--all-namespaces", "-o", str(second))
    assert second.read_bytes() == first.read_bytes()

    again = json.loads(run("import", str(first), "--format", "mcp-memory", "--json").stdout)
    assert again == {
        "imported": 0,
        "skipped": 6,
        "repaired": 0,
        "vectors_reused": 0,
        "refused": [],
        "chit_chat": 0,
        "redacted": [],
        "format": "mcp-memory",
        "namespace": None,
        "file": str(first),
    }
    found = json.loads(run("search", "staging PostgreSQL 13", "--json").stdout)["results"]
    assert found[0]["content"] == "Staging runs PostgreSQL 16 since March"


def test_export_with_vectors_is_imported_without_embedding(sqlite_env: Any, tmp_path: Any) -> None:
    sqlite_env("original.db")
    engine = assembly.build_engine(Settings())
    populate(engine)
    engine.close()
    first = tmp_path / "vectors.jsonl"
    assert run("export", "--all-namespaces", "--vectors", "-o", str(first)).exit_code == 0
    header = json.loads(first.read_text(encoding="utf-8").splitlines()[0])
    assert header["version"] == 2 and header["embedder"] == {"model": "hash-64", "dimensions": 64}

    sqlite_env("fresh.db")
    imported = run("import", str(first))
    assert imported.exit_code == 0, imported.output
    assert imported.stdout.strip() == (
        "imported 6, skipped 0 (already present); reused the file's vectors for 6 (not embedded again)"
    )
    assert run("export", "--all-namespaces", "--vectors").stdout_bytes == first.read_bytes()
    found = json.loads(run("search", "staging PostgreSQL 13", "--json").stdout)["results"]
    assert found[0]["content"] == "Staging runs PostgreSQL 16 since March"


def test_export_one_namespace(sqlite_env: Any) -> None:
    sqlite_env("one.db")
    engine = assembly.build_engine(Settings())
    populate(engine)
    engine.close()
    default = run("export").stdout.splitlines()  # the current namespace by default
    assert json.loads(default[0])["count"] == 5
    work = run("export", "--namespace", "work").stdout.splitlines()
    assert (
        json.loads(work[0])["count"] == 1
        and json.loads(work[1])["content"] == "Sprint planning is on Mondays"
    )
    both = CliRunner().invoke(cli, ["export", "--namespace", "work", "--all-namespaces"])
    assert both.exit_code == 2 and "exclude each other" in both.stderr
    bad = CliRunner().invoke(cli, ["export", "--namespace", "Not Valid"])
    assert bad.exit_code == 1 and "namespace 'Not Valid' is not valid" in bad.stderr


def chatgpt_file(tmp_path: Any, days_ago: float) -> Any:
    when = __import__("time").time() - days_ago * 86_400
    conversation = {
        "title": "Kitchen remodel",
        "create_time": when,
        "id": "conv-kitchen",
        "mapping": {
            "root": {"id": "root", "message": None, "parent": None, "children": ["u1"]},
            "u1": {
                "id": "u1",
                "message": {
                    "author": {"role": "user"},
                    "create_time": when + 1,
                    "content": {"content_type": "text", "parts": ["Our kitchen cabinets are walnut."]},
                },
                "parent": "root",
                "children": ["a1"],
            },
            "a1": {
                "id": "a1",
                "message": {
                    "author": {"role": "assistant"},
                    "create_time": when + 2,
                    "content": {"content_type": "text", "parts": ["Walnut pairs well with brass."]},
                },
                "parent": "u1",
                "children": [],
            },
        },
    }
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conversation]), encoding="utf-8")
    return path


def test_import_chatgpt_with_progress_and_idempotency(engine: MemoryEngine, tmp_path: Any) -> None:
    path = chatgpt_file(tmp_path, days_ago=2)
    result = run("import", str(path), "--namespace", "chats")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "imported 1 into namespace 'chats', skipped 0 (already present)"
    assert "Importing" in result.stderr  # the progress bar lives on stderr
    data = json.loads(
        run("import", str(path), "--namespace", "chats", "--include-assistant", "--json").stdout
    )
    assert data == {
        "imported": 1,
        "skipped": 1,
        "repaired": 0,
        "vectors_reused": 0,
        "refused": [],
        "chit_chat": 0,
        "redacted": [],
        "format": "chatgpt",
        "namespace": "chats",
        "file": str(path),
    }
    memories = {m.content: m for m in engine.store.iter_all()}
    assert set(memories) == {"Our kitchen cabinets are walnut.", "Walnut pairs well with brass."}
    assert memories["Our kitchen cabinets are walnut."].metadata["source"] == "chatgpt"
    assert {m.namespace for m in memories.values()} == {"chats"}


def test_old_history_is_kept_by_default_and_refused_as_episodic(engine: MemoryEngine, tmp_path: Any) -> None:
    path = chatgpt_file(tmp_path, days_ago=400)
    refused = CliRunner().invoke(cli, ["import", str(path), "--type", "episodic"])
    assert refused.exit_code == 1
    assert "1 of 1 memories are older than the episodic lifetime (90d)" in refused.stderr
    assert "--type semantic" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert list(engine.store.iter_all()) == []
    kept = run("import", str(path))  # default type: semantic, kept until deleted
    assert kept.exit_code == 0 and "imported 1" in kept.stdout
    assert [m.type.value for m in engine.store.iter_all()] == ["semantic"]


def test_a_chatgpt_import_goes_to_user_and_leaves_chit_chat_out(engine: MemoryEngine, tmp_path: Any) -> None:
    """What a person told ChatGPT is about them: it lands in ``user`` (read from every project), not in
    the project the command ran in, without its greetings and thanks; the summary says both."""
    path = chatgpt_file(tmp_path, days_ago=2)
    export = json.loads(path.read_text(encoding="utf-8"))
    mapping = export[0]["mapping"]
    for node, text in (("c1", "hi"), ("c2", "thanks!"), ("c3", "ok")):
        mapping[node] = {**mapping["u1"], "id": node, "children": []}
        mapping[node]["message"] = {
            **mapping["u1"]["message"],
            "content": {"content_type": "text", "parts": [text]},
        }
    path.write_text(json.dumps(export), encoding="utf-8")
    assert engine.default_scope.default_namespace != "user"  # the command runs inside a project

    result = run("import", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == (
        "imported 1 into namespace 'user', skipped 0 (already present); "
        "left out 3 chit-chat turns (greetings, thanks, one-word replies)"
    )
    assert [(m.content, m.namespace) for m in engine.store.iter_all()] == [
        ("Our kitchen cabinets are walnut.", "user")
    ]
    data = json.loads(run("import", str(path), "--json").stdout)
    assert (data["namespace"], data["chit_chat"], data["skipped"]) == ("user", 3, 1)
    elsewhere = json.loads(run("import", str(path), "--namespace", "kitchen", "--json").stdout)
    assert (elsewhere["namespace"], elsewhere["imported"]) == ("kitchen", 1)


KNOWLEDGE_GRAPH = (
    '{"type": "entity", "name": "Ada", "entityType": "person", "observations": ["Writes Rust", "Lives in Oslo"]}\n'
    '{"type": "relation", "from": "Ada", "to": "Acme", "relationType": "works_at"}\n'
)


def test_import_knowledge_graph_then_namespaces(engine: MemoryEngine, tmp_path: Any) -> None:
    path = tmp_path / "memory.jsonl"
    path.write_text(KNOWLEDGE_GRAPH, encoding="utf-8")
    data = json.loads(run("import", str(path), "--namespace", "kg", "--json").stdout)
    assert data["format"] == "mcp-knowledge-graph" and data["imported"] == 3
    listed = json.loads(run("namespaces", "--json").stdout)
    assert listed["namespaces"] == {"kg": 3} and listed["current"] == engine.namespace
    table = run("namespaces").output.splitlines()
    assert table[0].split() == ["NAMESPACE", "MEMORIES"] and table[1].split() == ["kg", "3"]


@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        ('{"format": "mcp-memory", "version": 1}\n{"id": 1}\n', (), "line 2: invalid memory"),
        ('{"type": "entity", "name": "x"}\n{"type": "blob"}\n', (), "line 2: unknown record type 'blob'"),
        ("just text\n", (), "Cannot tell the format"),
        ('{"format": "mcp-memory", "version": 9}\n', (), "unsupported export version 9"),
    ],
)
def test_import_errors_are_one_line(
    engine: MemoryEngine, tmp_path: Any, content: str, args: Any, message: str
) -> None:
    path = tmp_path / "input.jsonl"
    path.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", str(path), *args])
    assert result.exit_code == 1, result.output
    assert message in result.stderr and result.stderr.startswith("mcp-memory: error: ")
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output


@pytest.mark.parametrize("args", [(), ("--format", "chatgpt"), ("--format", "mcp-memory")])
def test_import_of_a_device_is_one_sentence_not_an_endless_read(engine: MemoryEngine, args: Any) -> None:
    result = CliRunner().invoke(cli, ["import", "/dev/zero", *args])
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        "mcp-memory: error: /dev/zero is not a regular file: save what you want to import to a file and "
        "import that.\n"
    )


def test_import_of_a_zip_bomb_is_one_sentence_and_imports_nothing(
    engine: MemoryEngine, zip_bomb: Any
) -> None:
    result = CliRunner().invoke(cli, ["import", str(zip_bomb)])
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        f"mcp-memory: error: {zip_bomb}: its conversations.json inflates to 513.0 MiB, more than the "
        "512.0 MiB an import reads from a zip; unzip it and import the conversations.json file itself.\n"
    )
    assert list(engine.store.iter_all()) == []


def export_lines(*records: dict[str, Any]) -> str:
    """An mcp-memory export of ``records`` (each a few fields over a valid default memory)."""
    base = {
        "content": "hello",
        "created_at": "2026-01-01T00:00:00.000000+00:00",
        "updated_at": "2026-01-01T00:00:00.000000+00:00",
        "namespace": "default",
    }
    header = {"format": "mcp-memory", "version": 1, "count": len(records)}
    return "".join(json.dumps(r) + "\n" for r in [header, *({**base, **r} for r in records)])


def record_id(number: int) -> str:
    return f"6f1c1f8e-2f55-4a55-8a55-{number:012d}"


@pytest.mark.parametrize(
    ("records", "message"),
    [
        (
            [{"id": record_id(1)}, {"id": record_id(2)}, {"id": record_id(3), "owner": "mallory"}],
            "line 4: this memory belongs to 'mallory'",
        ),
        (
            [{"id": record_id(1), "superseded_by": record_id(2)}, {"id": record_id(2), "namespace": "x"}],
            f"line 2: superseded_by names memory {record_id(2)} in namespace 'x', but this memory is in",
        ),
        (
            [{"id": record_id(1), "created_at": "9999-12-31T00:00:00+00:00"}],
            "line 2: created_at 9999-12-31T00:00:00+00:00 is outside the accepted range",
        ),
    ],
)
def test_import_refuses_a_bad_record_by_its_line_and_writes_nothing(
    engine: MemoryEngine, tmp_path: Any, records: list[dict[str, Any]], message: str
) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text(export_lines(*records), encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", str(path)])
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"mcp-memory: error: {message}"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert list(engine.store.iter_all()) == []


def test_import_reports_repaired_lone_surrogates(sqlite_env: Any, tmp_path: Any) -> None:
    sqlite_env("memories.db")  # the real store: SQLite cannot encode a lone surrogate
    path = chatgpt_file(tmp_path, days_ago=2)
    path.write_text(path.read_text(encoding="utf-8").replace("walnut.", "walnut \\ud83d."), encoding="utf-8")
    result = run("import", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == (
        "imported 1 into namespace 'user', skipped 0 (already present); repaired 1 lone surrogate "
        "(replaced with U+FFFD)"
    )
    assert json.loads(run("import", str(path), "--json").stdout)["repaired"] == 1
    found = json.loads(run("list", "--json").stdout)["memories"]
    assert [m["content"] for m in found] == ["Our kitchen cabinets are walnut \ufffd."]


def test_import_lists_each_memory_refused_for_a_nul_character(engine: MemoryEngine, tmp_path: Any) -> None:
    """A NUL (U+0000), which no store keeps: that memory is refused by line and id, the rest imported."""
    path = tmp_path / "export.jsonl"
    records = [{"id": record_id(1)}, {"id": record_id(2), "content": "x\u0000y"}, {"id": record_id(3)}]
    path.write_text(export_lines(*records), encoding="utf-8")
    result = run("import", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "imported 2, skipped 0 (already present); refused 1:",
        f"  line 3 (memory {record_id(2)}): content contains a NUL character (U+0000), which mcp-memory "
        "does not store; remove it.",
    ]
    assert sorted(m.id for m in engine.store.iter_all()) == [record_id(1), record_id(3)]
    again = json.loads(run("import", str(path), "--json").stdout)
    assert (again["imported"], again["skipped"]) == (0, 2)
    assert again["refused"] == [
        {
            "id": record_id(2),
            "where": "line 3",
            "reason": "content contains a NUL character (U+0000), which mcp-memory does not store; remove it.",
        }
    ]


def test_import_accepts_a_byte_order_mark(engine: MemoryEngine, tmp_path: Any) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text("\ufeff" + export_lines({"id": record_id(1)}), encoding="utf-8")
    result = run("import", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "imported 1, skipped 0 (already present)"


def test_import_option_mismatches_are_usage_errors(engine: MemoryEngine, tmp_path: Any) -> None:
    path = tmp_path / "export.jsonl"
    path.write_text('{"format": "mcp-memory", "version": 1, "count": 0}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["import", str(path), "--namespace", "x"])
    assert result.exit_code == 2 and "keeps each memory's namespace" in result.stderr
    result = CliRunner().invoke(cli, ["import", str(path), "--include-assistant"])
    assert result.exit_code == 2 and "chatgpt and claude imports only" in result.stderr
    assert run("import", str(path)).stdout.strip() == "imported 0, skipped 0 (already present)"


# -- lifecycle -----------------------------------------------------------------------------------------
def test_gc_tombstones_expired_memories(engine: MemoryEngine) -> None:
    from datetime import timedelta

    from mcp_memory_core import Memory, utcnow

    old = utcnow() - timedelta(days=3)
    stale = Memory(
        content="scratch note", type="working", created_at=old, updated_at=old, namespace=engine.namespace
    )
    pinned = stale.model_copy(update={"id": "6f1c1f8e-2f55-4a55-8a55-0000000000aa", "pinned": True})
    engine.import_memories([stale, pinned])
    engine.store_memory("fresh working note", type="working")
    result = run("gc")
    assert result.exit_code == 0 and result.stdout.strip() == "1 expired memories removed"
    assert json.loads(run("gc", "--json").stdout) == {"removed": 0}
    assert engine.store.get([stale.id])[stale.id].deleted_at is not None
    assert engine.store.get([pinned.id])[pinned.id].deleted_at is None


def test_clear_asks_first(engine: MemoryEngine) -> None:
    engine.store_memory("one", namespace="scratch")
    kept = engine.store_memory("kept elsewhere").memory
    no_stdin = CliRunner().invoke(cli, ["clear", "--namespace", "scratch"])
    assert no_stdin.exit_code == 1 and "Aborted" in no_stdin.stderr
    declined = CliRunner().invoke(cli, ["clear", "--namespace", "scratch"], input="n\n")
    assert declined.exit_code == 1 and "1 current memories" in declined.stderr
    assert engine.list_namespaces().get("scratch") == 1
    confirmed = CliRunner().invoke(cli, ["clear", "--namespace", "scratch"], input="y\n")
    assert confirmed.exit_code == 0 and "1 memories purged from namespace 'scratch'" in confirmed.stdout
    assert "scratch" not in engine.list_namespaces()
    engine.store_memory("two", namespace="scratch")
    assert json.loads(run("clear", "--namespace", "scratch", "--yes", "--json").stdout) == {
        "namespace": "scratch",
        "purged": 1,
    }
    assert engine.get_memory(kept.id).status == "current"


def test_clear_requires_a_namespace(engine: MemoryEngine) -> None:
    result = CliRunner().invoke(cli, ["clear", "--yes"])
    assert result.exit_code == 2 and "--namespace" in result.stderr


def test_namespaces_empty(engine: MemoryEngine) -> None:
    result = run("namespaces")
    assert result.exit_code == 0 and "No namespaces yet" in result.stdout


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        (["serve", "--transport", "http"], "stop what listens there or pass --port N."),
        (["ui", "--no-browser"], "pass --port N (or --port 0 for any free port)."),
    ],
    ids=["serve", "ui"],
)
def test_a_taken_port_is_one_sentence(command: list[str], hint: str, fake_env: dict[str, str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, [*command, "--port", str(port)])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"mcp-memory: error: port {port} on 127.0.0.1 is in use: {hint}\n"
