"""The engine as the server uses it: built lazily, warmed in the background, called off the event loop.

Nothing here loads a model at import or construction. The sequence in serve mode is:

1. the transport comes up and ``initialize`` is answered (no engine exists yet; not even the core
   package, numpy or the settings are imported on that path);
2. after the handshake (``notifications/initialized``, or the first request of a handshake-less
   2026-era connection) :meth:`MemoryService.start_warmup` builds the engine and runs
   ``engine.warm()`` (open the store, load the model) in a background thread;
3. every tool call first awaits that warm-up (starting it if nobody did), so the model is never
   loaded twice and a slow first load shows up as one slow first call, not as a slow handshake.

Who is asking: :meth:`MemoryService.scope_for` turns a request's credentials into the engine's
Scope, once per request. Without a token registry (stdio, the CLI, HTTP with ``--no-auth`` on
loopback) every request is the local user's (the engine's default scope); with one (the HTTP team
server) the bearer token names the user and their teams, and a request without a valid token never
reaches a tool (the MCP SDK's auth middleware answers 401 first).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope
    from mcp_memory_core.settings import Settings
    from mcp_memory_core.tokens import TokenRegistry

    from .settings import ServerSettings

log = logging.getLogger(__name__)

T = TypeVar("T")

EngineFactory = Callable[["Settings"], "MemoryEngine"]


def _default_factory(settings: Settings) -> MemoryEngine:
    from .assembly import build_engine

    return build_engine(settings)


class MemoryService:
    """Owns one MemoryEngine for the life of the server process."""

    def __init__(
        self,
        settings: Settings | None = None,
        engine_factory: EngineFactory | None = None,
        *,
        tokens: TokenRegistry | None = None,
    ) -> None:
        self._given = settings
        self._settings: ServerSettings | None = None
        self._factory = engine_factory or _default_factory
        self.tokens = tokens
        self._engine: MemoryEngine | None = None
        self._build_lock = threading.Lock()
        # Calls into a store that is not thread-safe (``capabilities.thread_safe``) are serialized;
        # a thread-safe store (sqlite-vec) takes them in parallel: a small search does not wait
        # behind another client's large list.
        self._call_lock = threading.Lock()
        self._warm_lock = threading.Lock()
        self._warm_thread: threading.Thread | None = None
        self._warm_done = threading.Event()
        self.warm_error: BaseException | None = None
        self.warm_seconds: float | None = None

    @property
    def settings(self) -> ServerSettings:
        """The settings, read from the environment on first use, over the core settings given if any
        (ConfigurationError if invalid)."""
        if self._settings is None:
            from .config import load_settings

            self._settings = load_settings(self._given)
        return self._settings

    # -- engine ----------------------------------------------------------------------------------
    @property
    def built(self) -> bool:
        return self._engine is not None

    def engine(self) -> MemoryEngine:
        """The engine, built on first use (raises UnknownBackendError & co. for a bad configuration)."""
        if self._engine is None:
            with self._build_lock:
                if self._engine is None:
                    self._engine = self._factory(self.settings)
        return self._engine

    # -- warm-up ---------------------------------------------------------------------------------
    @property
    def warmup_started(self) -> bool:
        return self._warm_thread is not None

    @property
    def warm(self) -> bool:
        """True once the warm-up finished (successfully or not)."""
        return self._warm_done.is_set()

    def start_warmup(self) -> bool:
        """Build the engine and load the model in a background thread. Idempotent; True if it started now."""
        with self._warm_lock:
            if self._warm_thread is not None:
                return False
            self._warm_thread = threading.Thread(
                target=self._run_warmup, name="mcp-memory-warmup", daemon=True
            )
            self._warm_thread.start()
            return True

    def _run_warmup(self) -> None:
        started = time.perf_counter()
        try:
            with self._call_lock:
                self.engine().warm()
            self.warm_seconds = time.perf_counter() - started
            log.info("Warm-up done in %.2f s: store open, model loaded", self.warm_seconds)
        except BaseException as exc:  # reported again, with its message, by the first tool call
            self.warm_error = exc
            log.error("Warm-up failed: %s: %s", type(exc).__name__, exc)
        finally:
            self._warm_done.set()

    def wait_warm_sync(self, timeout: float | None = None) -> bool:
        self.start_warmup()
        return self._warm_done.wait(timeout)

    async def wait_warm(self) -> None:
        """Start the warm-up if needed and wait for it without blocking the event loop."""
        self.start_warmup()
        if not self._warm_done.is_set():
            await anyio.to_thread.run_sync(self._warm_done.wait, abandon_on_cancel=True)

    # -- calls -----------------------------------------------------------------------------------
    def call_sync(self, fn: Callable[[MemoryEngine], T]) -> T:
        engine = self.engine()
        if engine.store.capabilities.thread_safe:
            return fn(engine)
        with self._call_lock:
            return fn(engine)

    def scope_for(self, access_token: Any) -> Scope:
        """The Scope of a request: the local user's without a token registry; else the user the
        bearer token belongs to, with their teams and teammates read from the registry now (a
        revoked token or a changed team counts at once)."""
        engine = self.engine()
        if self.tokens is None:
            return engine.default_scope
        from mcp_memory_core.errors import MemoryServerError
        from mcp_memory_core.scope import Scope

        info = self.tokens.verify(access_token.token) if access_token is not None else None
        if info is None:  # the SDK's middleware refused it already; never fall back to anyone
            raise MemoryServerError("Not authenticated: send Authorization: Bearer <token>.")
        teams, teammates = self.tokens.memberships(info.user)
        base = engine.default_scope
        return Scope.for_user(
            info.user,
            project=base.default_namespace if base.default_namespace != "user" else None,
            teams=teams,
            teammates=teammates,
        )

    async def call_scoped(self, fn: Callable[[MemoryEngine, Scope], T], access_token: Any) -> T:
        """Run ``fn(engine, scope)`` in a worker thread, ``scope`` built from ``access_token``."""
        return await self.call(lambda engine: fn(engine, self.scope_for(access_token)))

    async def call(self, fn: Callable[[MemoryEngine], T]) -> T:
        """Run ``fn(engine)`` in a worker thread once the warm-up is over.

        If the warm-up failed, the call runs anyway: it raises the same error (a bad backend name, a
        model mismatch, a model that cannot load), with its message, to the caller.
        """
        await self.wait_warm()
        return await anyio.to_thread.run_sync(self.call_sync, fn)

    def close(self) -> None:
        if self._warm_thread is not None:
            self._warm_done.wait(timeout=30)
        if self._engine is not None:
            with self._call_lock:
                try:
                    self._engine.close()
                except Exception:
                    log.exception("Closing the store failed")
