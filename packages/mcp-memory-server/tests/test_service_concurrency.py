"""Calls run in parallel when the store says it can take them (``capabilities.thread_safe``), and one at a
time when it cannot: a small search never waits behind another client's large list on sqlite-vec."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from mcp_memory_core.settings import Settings
from mcp_memory_server.runtime.service import MemoryService

pytestmark = pytest.mark.anyio


async def _overlap(service: MemoryService, wait: float) -> tuple[bool, int]:
    """Start a call that waits (up to ``wait`` seconds) for a second call to run, then the second call.
    Returns whether the first saw the second while it was running, and the most calls seen at once."""
    first_entered, second_ran = threading.Event(), threading.Event()
    state = {"active": 0, "most": 0}
    lock = threading.Lock()

    def enter() -> None:
        with lock:
            state["active"] += 1
            state["most"] = max(state["most"], state["active"])

    def leave() -> None:
        with lock:
            state["active"] -= 1

    def first(engine: Any) -> bool:
        enter()
        first_entered.set()
        try:
            return second_ran.wait(wait)
        finally:
            leave()

    def second(engine: Any) -> None:
        enter()
        second_ran.set()
        leave()

    result: dict[str, bool] = {}

    async def run_first() -> None:
        result["overlapped"] = await service.call(first)

    await service.wait_warm()
    async with anyio.create_task_group() as tg:
        tg.start_soon(run_first)
        await anyio.to_thread.run_sync(first_entered.wait)  # the second call starts once the first runs
        await service.call(second)
    return result["overlapped"], state["most"]


async def test_a_thread_safe_store_takes_calls_in_parallel(fake_env: dict[str, str]) -> None:
    settings = Settings(store="sqlite-vec")
    service = MemoryService(settings)
    try:
        assert service.engine().store.capabilities.thread_safe
        overlapped, most = await _overlap(service, wait=30)  # a deadlock guard, not a speed limit
    finally:
        service.close()
    assert overlapped and most == 2


async def test_a_store_that_is_not_thread_safe_gets_one_call_at_a_time(settings: Settings) -> None:
    service = MemoryService(settings)  # the in-memory fake store: not thread-safe
    try:
        assert not service.engine().store.capabilities.thread_safe
        overlapped, most = await _overlap(service, wait=1)  # slowness could only make this pass
    finally:
        service.close()
    assert not overlapped and most == 1
