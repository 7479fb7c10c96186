"""Spawning the real server and talking to it through the MCP SDK's own clients.

A uniquely named module (not conftest) so tests can import it whatever else pytest collects.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

DEFAULT_PLUGINS = ("mcp_memory_sqlite_vec", "mcp_memory_minilm", "mcp_memory_rankers")


def require_default_plugins() -> None:
    missing = [name for name in DEFAULT_PLUGINS if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"the default plugins are not installed: {', '.join(missing)}")


def server_env(db_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a spawned server: ours minus any MCP_MEMORY_* we happen to have, plus a db."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_MEMORY_")}
    env.update({"MCP_MEMORY_DB_PATH": str(db_path), "MCP_MEMORY_LOG_LEVEL": "INFO", "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


@contextlib.contextmanager
def ctrl_c_reaches_children() -> Iterator[None]:
    """Processes started inside take Ctrl-C (SIGINT) as they would from a terminal, whatever this run
    was given. A run started with SIGINT ignored (a script's background job, nohup) passes that on to
    every child, and Python then leaves Ctrl-C ignored: a test sending it would wait in vain. Handled
    here for the while (by Python's own handler), SIGINT is at its default in each child exec'd."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def module_command() -> list[str]:
    return [sys.executable, "-m", "mcp_memory_server"]


def script_command() -> list[str]:
    """The ``mcp-memory`` console script of this environment (the one ``uvx --from mcp-memory-stack mcp-memory`` runs)."""
    script = Path(sys.executable).parent / "mcp-memory"
    if not script.exists():
        pytest.skip(f"no mcp-memory script next to {sys.executable}")
    return [str(script)]


def payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    text = result.content[0].text
    data = json.loads(text)
    if result.structured_content is not None:
        assert data == result.structured_content
    return dict(data)


def error_text(result: Any) -> str:
    assert result.is_error, result.content
    return " ".join(block.text for block in result.content)


@contextlib.asynccontextmanager
async def stdio_session(command: Sequence[str], env: dict[str, str], errlog_path: Path) -> AsyncIterator[Any]:
    """An initialized ClientSession over stdio with a freshly spawned server."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=env)
    with errlog_path.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(command: Sequence[str], env: dict[str, str], errlog_path: Path, *args: str) -> Iterator[str]:
    """Run ``<command> serve --transport http --port N [args]``; yield its /mcp URL once it accepts
    connections (``--no-auth`` for a loopback server without tokens)."""
    port = free_port()
    with errlog_path.open("w") as errlog:
        proc = subprocess.Popen(
            [*command, "serve", "--transport", "http", "--port", str(port), *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errlog,
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    raise AssertionError(f"server exited with {proc.returncode}: {errlog_path.read_text()}")
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
                if time.monotonic() > deadline:
                    raise AssertionError(f"server did not listen on {port}: {errlog_path.read_text()}")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            stdout = proc.stdout.read() if proc.stdout else b""
            if proc.stdout:
                proc.stdout.close()
            assert stdout == b"", f"the HTTP server wrote to stdout: {stdout[:500]!r}"


def rpc_line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "mcp-memory-tests", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def loaded_libraries(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


def model_runtime_loaded(pid: int) -> dict[str, bool]:
    maps = loaded_libraries(pid)
    return {"onnxruntime": "onnxruntime" in maps, "torch": "libtorch" in maps}


class RawServer:
    """The server as a bare subprocess speaking newline-delimited JSON-RPC (for timing the handshake)."""

    def __init__(self, command: Sequence[str], env: dict[str, str], errlog_path: Path) -> None:
        import queue
        import threading

        self.errlog = errlog_path.open("w")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            list(command), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errlog
        )
        self.lines: queue.Queue[bytes] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.put(line)

        threading.Thread(target=pump, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(rpc_line(message))

    def send_line(self, line: bytes) -> None:
        """Write raw bytes to the server's stdin (a malformed message, say)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, Any]:
        return dict(json.loads(self.lines.get(timeout=timeout)))

    def request(self, message: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        self.send(message)
        while True:
            reply = self.receive(timeout)
            if reply.get("id") == message["id"]:
                return reply

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.errlog.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``mcp-memory ARGS`` in a subprocess with ``env``, no stdin."""
    return subprocess.run(
        [*module_command(), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def create_token(env: dict[str, str], user: str, *teams: str) -> str:
    """A bearer token for ``user`` (in ``teams``), from `mcp-memory token create`."""
    args = ["token", "create", user]
    for team in teams:
        args += ["--team", team]
    done = cli(env, *args)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcpm_"), done.stdout  # one line: the token
    return lines[0]
