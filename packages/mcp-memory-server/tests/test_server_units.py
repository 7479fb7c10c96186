"""Results as surfaces render them, assembly, logging and import weight."""

from __future__ import annotations

import inspect
import logging
import subprocess
import sys
import textwrap
from datetime import UTC, datetime

import pytest

from mcp_memory_core.errors import UnknownBackendError
from mcp_memory_core.models import Memory, SearchHit
from mcp_memory_core.settings import Settings
from mcp_memory_server.operations.results import Hit, MemoryDetail, MemoryPage, MemoryRecord
from mcp_memory_server.runtime.assembly import build_engine
from mcp_memory_server.runtime.logging_setup import configure_logging, parse_level

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
A = "11111111-1111-4111-8111-111111111111"
B = "22222222-2222-4222-8222-222222222222"


def test_a_memory_in_full() -> None:
    memory = Memory(id=A, content="c", metadata={"k": [1, 2]}, created_at=T0, updated_at=T0, superseded_by=B)
    assert MemoryRecord.of(memory).full() == {
        "id": A,
        "content": "c",
        "metadata": {"k": [1, 2]},
        "created_at": "2025-01-02T03:04:05+00:00",
        "updated_at": "2025-01-02T03:04:05+00:00",
        "type": "semantic",
        "tags": [],
        "importance": 0.5,
        "access_count": 0,
        "last_accessed": None,
        "superseded_by": B,
        "deleted": False,
        "deleted_at": None,
        "namespace": "default",
        "pinned": False,
        "owner": "local",
        "privacy_scope": "private",
        "occurred_at": "2025-01-02T03:04:05+00:00",
        "thread": None,
    }


def test_deleted_memory() -> None:
    data = MemoryRecord.of(Memory(id=A, content="c", created_at=T0, updated_at=T0, deleted_at=T0)).full()
    assert data["deleted"] is True and data["deleted_at"] == "2025-01-02T03:04:05+00:00"


def test_one_memory_with_its_status() -> None:
    memory = MemoryRecord.of(Memory(id=A, content="c", created_at=T0, updated_at=T0, superseded_by=B))
    data = MemoryDetail(memory=memory, head_id=B, status="superseded", history=None, can_change=True).full()
    assert data["status"] == "superseded" and data["head_id"] == B and data["content"] == "c"


def test_a_full_hit_has_a_matched_id_only_when_it_differs() -> None:
    memory = Memory(id=B, content="new", created_at=T0, updated_at=T0)
    via_old = Hit.of(
        SearchHit(memory=memory, score=0.9, matched_id=A, similarity=0.8, parts={"sim": 0.8})
    ).full()
    assert via_old["matched_id"] == A and via_old["score"] == 0.9 and via_old["similarity"] == 0.8
    assert "score_parts" not in via_old  # only with explain
    explained = Hit.of(
        SearchHit(memory=memory, score=0.9, matched_id=A, similarity=0.8, parts={"sim": 0.8})
    ).full(explain=True)
    assert explained["score_parts"] == {"sim": 0.8}
    direct = Hit.of(SearchHit(memory=memory, score=0.5, matched_id=B, similarity=None, parts={})).full()
    assert direct["matched_id"] is None and direct["similarity"] is None and "score_parts" not in direct


def test_a_page_in_full() -> None:
    memory = MemoryRecord.of(Memory(id=A, content="c", created_at=T0, updated_at=T0))
    data = MemoryPage(memories=[memory], next_cursor="abc", total=7, capped=False).full()
    assert data["next_cursor"] == "abc" and data["total"] == 7 and data["memories"][0]["id"] == A


def test_build_engine_from_settings(settings: Settings) -> None:
    engine = build_engine(settings)
    assert type(engine.store).__name__ == "InMemoryStore"
    assert type(engine.embedder).__name__ == "HashEmbedder"
    assert engine.store_memory("hello").status == "stored"


@pytest.mark.parametrize("kind", ["store", "embedder", "ranker"])
def test_unknown_backend_names_the_choices(
    fake_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setenv(f"MCP_MEMORY_{kind.upper()}", "nonexistent")
    with pytest.raises(UnknownBackendError, match="Choose one of") as info:
        build_engine(Settings())
    assert info.value.kind == kind and "nonexistent" in str(info.value)


def test_parse_level() -> None:
    assert parse_level("debug") == logging.DEBUG
    assert parse_level("WARNING") == logging.WARNING
    assert parse_level(15) == 15
    assert parse_level("chatty") == logging.INFO


def test_configure_logging_uses_stderr_only(monkeypatch: pytest.MonkeyPatch) -> None:
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    try:
        root.handlers = [logging.StreamHandler(sys.stdout)]
        configure_logging("DEBUG")
        configure_logging("DEBUG")  # idempotent
        streams = [getattr(h, "stream", None) for h in root.handlers]
        assert sys.stdout not in streams
        assert streams.count(sys.stderr) == 1
        assert root.level == logging.DEBUG
    finally:
        root.handlers, root.level = saved_handlers, saved_level


HEAVY = ("onnxruntime", "torch", "sentence_transformers", "tokenizers", "transformers", "detect_secrets")
# What the server may import of the core before the initialize reply: the modules that import nothing.
IMPORT_FREE = ("mcp_memory_core.limits", "mcp_memory_core.vocabulary")


def test_importing_the_server_and_building_the_app_imports_no_model_runtime() -> None:
    """Measured in a fresh interpreter, with the real default embedder selected (if installed)."""
    script = textwrap.dedent(
        f"""
        import os, sys
        os.environ["MCP_MEMORY_DB_PATH"] = ":memory:"
        import mcp_memory_server, mcp_memory_server.cli, mcp_memory_server.web.server
        from mcp_memory_server.mcp.app import build_app
        app = build_app()
        heavy = [m for m in {HEAVY!r} if m in sys.modules]
        assert not heavy, heavy
        assert not app.memory_service.built
        # the stdio path to the initialize reply imports nothing of the core but its import-free
        # limits and vocabulary
        core = [m for m in sys.modules if m.startswith("mcp_memory_core.") and m not in {IMPORT_FREE!r}]
        early = core + [m for m in ("numpy", "pydantic_settings", "rich") if m in sys.modules]
        assert not early, early
        # the typed results are built after it, by the first call (their models take ~30 ms to define)
        assert "mcp_memory_server.operations.results" not in sys.modules
        print("ok")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_importing_the_package_root_is_featherweight() -> None:
    script = "import sys, mcp_memory_server; print(sorted(m for m in ('mcp', 'mcp_memory_core', 'numpy') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stderr


def test_tool_limit_descriptions_mirror_the_engine() -> None:
    from mcp_memory_core import engine
    from mcp_memory_server.mcp import params

    assert params.MAX_SEARCH_LIMIT == engine.MAX_SEARCH_LIMIT
    assert params.MAX_LIST_LIMIT == engine.MAX_LIST_LIMIT


def test_the_surfaces_words_are_the_cores() -> None:
    from typing import get_args

    from mcp_memory_core.models import MemoryType, PrivacyScope
    from mcp_memory_core.transfer import Format
    from mcp_memory_server.operations import vocabulary

    assert tuple(MemoryType) == vocabulary.MEMORY_TYPES
    assert tuple(PrivacyScope) == vocabulary.PRIVACY
    assert get_args(Format) == vocabulary.IMPORT_FORMATS
    assert get_args(vocabulary.MemoryTypeName) == vocabulary.MEMORY_TYPES  # what the tools' schemas offer
    assert get_args(vocabulary.PrivacyName) == vocabulary.PRIVACY
    source = inspect.getsource(vocabulary)  # quoted from the core, never spelled again here
    assert not [word for word in (*vocabulary.MEMORY_TYPES, *vocabulary.PRIVACY) if f'"{word}"' in source]


def test_the_serve_command_reaches_the_event_loop_without_importing_the_core() -> None:
    """What runs before the stdio loop starts (and so before ``initialize`` can be answered) stays light:
    of the core, only its import-free limits and vocabulary."""
    script = textwrap.dedent(
        f"""
        import sys, anyio
        def fake_run(fn, *args, **kwargs):
            core = [m for m in sys.modules if m.startswith("mcp_memory_core.") and m not in {IMPORT_FREE!r}]
            print(sorted(core + [m for m in ("numpy", "pydantic_settings", "onnxruntime", "rich") if m in sys.modules]))
        anyio.run = fake_run
        from mcp_memory_server.cli import main
        main(["serve"])
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


class WarmingService:
    def __init__(self, *, started: bool, warm: bool) -> None:
        self.warmup_started = started
        self.warm = warm
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize(
    ("started", "warm", "closes"),
    [(False, False, True), (True, True, True), (True, False, False)],
    ids=["before the handshake", "warm", "while the model loads"],
)
def test_ctrl_c_on_the_stdio_server_closes_the_store_unless_the_model_is_loading(
    monkeypatch: pytest.MonkeyPatch, started: bool, warm: bool, closes: bool
) -> None:
    """The SIGINT handler exits 130; it closes the store first, except while the warm-up loads the
    model (closing would wait for the load). Run in process: signal.signal, os._exit and
    logging.shutdown are recorded, not done."""
    from mcp_memory_server.mcp import stdio_transport

    handlers: dict[int, object] = {}
    monkeypatch.setattr(
        stdio_transport.signal, "signal", lambda sig, handler: handlers.__setitem__(sig, handler)
    )
    monkeypatch.setattr(stdio_transport.logging, "shutdown", lambda: None)

    def exit_now(status: int) -> None:
        raise SystemExit(status)

    monkeypatch.setattr(stdio_transport.os, "_exit", exit_now)
    service = WarmingService(started=started, warm=warm)
    stdio_transport._stop_on_ctrl_c(service)
    stop = handlers.pop(stdio_transport.signal.SIGINT)
    with pytest.raises(SystemExit) as exited:
        stop(stdio_transport.signal.SIGINT, None)  # type: ignore[operator]
    assert exited.value.code == 130 and service.closed is closes
    assert handlers == {
        stdio_transport.signal.SIGINT: stdio_transport._exit_interrupted
    }  # a second one: exit
