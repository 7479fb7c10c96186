"""initialize is answered before any model loads; the model then warms in the background.

Checked on the real process: ``/proc/<pid>/maps`` shows whether onnxruntime (or libtorch) is mapped.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from e2e_helpers import INITIALIZE, INITIALIZED, RawServer, model_runtime_loaded, module_command, server_env

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.usefixtures("default_plugins"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/maps"),
]


def test_initialize_is_answered_before_the_model_loads(db_path: Path, tmp_path: Path) -> None:
    errlog = tmp_path / "server.err"
    with RawServer(module_command(), server_env(db_path), errlog) as server:
        reply = server.request(INITIALIZE)
        handshake = time.perf_counter() - server.started
        assert reply["result"]["serverInfo"]["name"] == "mcp-memory"
        at_reply = model_runtime_loaded(server.pid)
        assert at_reply == {"onnxruntime": False, "torch": False}, (
            "a model runtime was loaded before initialize"
        )

        server.send(INITIALIZED)  # the handshake is done: the server may now warm the model up
        started = time.perf_counter()
        while not model_runtime_loaded(server.pid)["onnxruntime"]:
            assert time.perf_counter() - started < 60, errlog.read_text()
            time.sleep(0.02)
        warm_seen = time.perf_counter() - started

        first = time.perf_counter()
        result = server.request(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "store_memory", "arguments": {"content": "startup test memory"}},
            }
        )
        first_call = time.perf_counter() - first
        assert result["result"].get("isError") is not True, result
        assert model_runtime_loaded(server.pid)["torch"] is False  # the default embedder never needs torch
        second = time.perf_counter()
        server.request(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "search_memories", "arguments": {"query": "startup"}},
            }
        )
        second_call = time.perf_counter() - second
    log = errlog.read_text()
    assert "Warm-up done" in log
    print(
        f"\nspawn→initialize reply {handshake * 1000:.0f} ms (no model runtime mapped); "
        f"onnxruntime mapped {warm_seen * 1000:.0f} ms after notifications/initialized; "
        f"first tool call {first_call * 1000:.0f} ms; second {second_call * 1000:.1f} ms"
    )


def test_the_model_is_not_loaded_without_a_handshake(db_path: Path, tmp_path: Path) -> None:
    """A process that is only spawned (no client yet) stays light: nothing warms before initialize."""
    with RawServer(module_command(), server_env(db_path), tmp_path / "idle.err") as server:
        time.sleep(3)
        assert server.proc.poll() is None
        assert model_runtime_loaded(server.pid) == {"onnxruntime": False, "torch": False}
        reply = server.request(INITIALIZE)
        assert "result" in reply
