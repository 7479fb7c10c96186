"""initialize never waits for the engine; the model warms once, in the background, after the handshake."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from server_helpers import error_text, payload

from mcp_memory_core.engine import MemoryEngine
from mcp_memory_core.settings import Settings
from mcp_memory_server.mcp.app import build_app
from mcp_memory_server.runtime.assembly import build_engine
from mcp_memory_server.runtime.service import MemoryService

pytestmark = pytest.mark.anyio


class SlowEmbedder:
    """Wraps an embedder: load() is slow, locked and idempotent (as real embedders are); counts loads."""

    def __init__(self, inner: Any, delay: float = 0.3) -> None:
        self.inner = inner
        self.delay = delay
        self.loads = 0
        self.load_threads: list[str] = []
        self._lock = threading.Lock()
        self._loaded = False

    @property
    def model_id(self) -> str:
        return str(self.inner.model_id)

    @property
    def dimensions(self) -> int:
        return int(self.inner.dimensions)

    def load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            self.loads += 1
            self.load_threads.append(threading.current_thread().name)
            time.sleep(self.delay)
            self._loaded = True

    def embed_documents(self, texts: Any) -> Any:
        self.load()
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        self.load()
        return self.inner.embed_query(text)


def slow_factory(
    holder: dict[str, Any], gate: threading.Event | None = None
) -> Callable[[Settings], MemoryEngine]:
    def factory(settings: Settings) -> MemoryEngine:
        if gate is not None:
            assert gate.wait(10)
        engine = build_engine(settings)
        embedder = SlowEmbedder(engine.embedder)
        holder["embedder"] = embedder
        holder["built_in"] = threading.current_thread().name
        return MemoryEngine(engine.store, embedder, engine.ranker)

    return factory


async def wait_until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)


def test_building_the_app_builds_no_engine(settings: Settings) -> None:
    app = build_app(settings)
    service = app.memory_service
    assert not service.built and not service.warmup_started


async def test_initialize_is_answered_while_the_engine_is_still_being_built(settings: Settings) -> None:
    from mcp import Client

    gate = threading.Event()
    holder: dict[str, Any] = {}
    app = build_app(settings, engine_factory=slow_factory(holder, gate))
    service = app.memory_service
    try:
        with anyio.fail_after(5):
            async with Client(app, mode="legacy") as client:  # the handshake completes with the gate shut
                assert client.server_info.name == "mcp-memory"
                assert not service.built
                await wait_until(lambda: service.warmup_started)  # notifications/initialized started it
                gate.set()
                data = payload(await client.call_tool("store_memory", {"content": "after the gate"}))
                assert data["status"] == "stored"
        assert holder["built_in"] == "mcp-memory-warmup"
        assert holder["embedder"].loads == 1
    finally:
        gate.set()
        service.close()


async def test_first_tool_call_waits_for_the_warmup_and_the_model_loads_once(settings: Settings) -> None:
    from mcp import Client

    holder: dict[str, Any] = {}
    app = build_app(settings, engine_factory=slow_factory(holder))
    service = app.memory_service
    async with Client(app, mode="legacy") as client:
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(client.call_tool, "store_memory", {"content": f"concurrent {i}"})
        assert time.perf_counter() - started < 5
        assert service.warm and service.warm_error is None
        listed = payload(await client.call_tool("list_memories", {}))
        assert listed["total"] == 3
    assert holder["embedder"].loads == 1
    assert holder["embedder"].load_threads == ["mcp-memory-warmup"]
    service.close()


async def test_a_tool_call_starts_the_warmup_when_nothing_else_did(settings: Settings) -> None:
    holder: dict[str, Any] = {}
    service = MemoryService(settings, slow_factory(holder))
    app = build_app(settings, service=service)
    result = await app.call_tool("store_memory", {"content": "direct call, no handshake"})
    assert not result.is_error
    assert service.warmup_started and service.warm
    assert holder["embedder"].loads == 1
    service.close()


async def test_a_bad_backend_name_reaches_the_client_as_a_tool_error(
    monkeypatch: pytest.MonkeyPatch, fake_env: dict[str, str]
) -> None:
    from mcp import Client

    monkeypatch.setenv("MCP_MEMORY_STORE", "no-such-store")
    app = build_app(Settings())
    async with Client(app, mode="legacy") as client:
        text = error_text(await client.call_tool("store_memory", {"content": "x"}))
        assert "no-such-store" in text and "Choose one of" in text and "memory" in text
    service = app.memory_service
    assert service.warm and service.warm_error is not None
    service.close()


async def test_a_failing_model_load_is_reported_not_hidden(settings: Settings) -> None:
    from mcp import Client

    class BrokenEmbedder(SlowEmbedder):
        def load(self) -> None:
            from mcp_memory_core.errors import MemoryServerError

            raise MemoryServerError("model file is corrupt: reinstall mcp-memory-minilm")

    def factory(s: Settings) -> MemoryEngine:
        engine = build_engine(s)
        return MemoryEngine(engine.store, BrokenEmbedder(engine.embedder), engine.ranker)

    app = build_app(settings, engine_factory=factory)
    async with Client(app) as client:
        text = error_text(await client.call_tool("search_memories", {"query": "x"}))
        assert "model file is corrupt" in text
    app.memory_service.close()


async def test_invalid_settings_reach_the_client_as_a_tool_error(
    monkeypatch: pytest.MonkeyPatch, fake_env: dict[str, str]
) -> None:
    """In stdio mode the settings are read after the handshake; a bad value is reported, not fatal."""
    from mcp import Client

    monkeypatch.setenv("MCP_MEMORY_STRICT_PLUGINS", "sometimes")
    app = build_app()  # settings read lazily, by the warm-up
    async with Client(app, mode="legacy") as client:
        text = error_text(await client.call_tool("list_memories", {}))
        assert "invalid settings" in text and "MCP_MEMORY_STRICT_PLUGINS" in text
    app.memory_service.close()
