"""What every check shares: the Check it returns (ok / warn / fail, one sentence, the fix), the
Context that builds the settings, plugins, store and embedder once, and the guard that turns anything
unexpected into the check's own failure."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp_memory_core.plugins import PluginManager
    from mcp_memory_core.protocols import StoreDiagnosis

    from ..runtime.settings import ServerSettings


Status = Literal["ok", "warn", "fail"]

HANDSHAKE_TIMEOUT_S = 30.0
SLOW_HANDSHAKE_S = 5.0  # some clients give up after 10-60 s; the server answers in well under one
SLOW_LOAD_S = 30.0
LOW_SPACE_BYTES = 500 << 20
NO_SPACE_BYTES = 50 << 20
STDERR_LINES = 12
EXPECTED_TOOL = "store_memory"
REPORT_BUG = (
    "This is a bug in mcp-memory doctor or in a plugin: please report it with the output of "
    "`mcp-memory doctor --json`."
)


@dataclass(frozen=True)
class Check:
    """One line of the report. ``fix`` is set for warn and fail."""

    name: str
    status: Status
    message: str
    fix: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ok(name: str, message: str, **details: Any) -> Check:
    return Check(name, "ok", message, None, details)


def warn(name: str, message: str, fix: str, **details: Any) -> Check:
    return Check(name, "warn", message, fix, details)


def fail(name: str, message: str, fix: str, **details: Any) -> Check:
    return Check(name, "fail", message, fix, details)


class NotChecked(Exception):
    """Raised inside a check that depends on something another check already reports as broken."""


# -- what the checks share ------------------------------------------------------------------------
class Context:
    """Settings, plugins, store, diagnosis and embedder, each built once on first use. A step that
    failed raises :class:`NotChecked` in every later check that needs it (its own check reports it)."""

    def __init__(self, plugins: PluginManager | None = None) -> None:
        self.environ = dict(os.environ)  # what the settings read, and what the spawned server gets
        self._plugins = plugins
        self._done: dict[str, Any] = {}
        self._errors: dict[str, Exception] = {}

    def _once(self, key: str, build: Callable[[], Any]) -> Any:
        if key in self._errors:
            raise self._errors[key]
        if key not in self._done:
            try:
                self._done[key] = build()
            except Exception as exc:
                self._errors[key] = exc
                raise
        return self._done[key]

    def error(self, key: str) -> Exception | None:
        return self._errors.get(key)

    def settings(self) -> ServerSettings:
        from ..runtime.config import load_settings

        def build() -> ServerSettings:
            settings = load_settings()
            # Never create a database (nor a vault's index) at a mistyped path.
            return settings.model_copy(update={"create_database": False})

        return self._need("settings", build, "the settings are invalid (see the settings check)")  # type: ignore[no-any-return]

    def plugins(self) -> PluginManager:
        from mcp_memory_core.plugins import plugin_manager_from_settings

        def build() -> PluginManager:
            if self._plugins is not None:
                return self._plugins
            # Never strict here: every broken plugin is reported, not only the first.
            return plugin_manager_from_settings(strict=False, disabled=self.settings().disable_plugins)

        return self._need("plugins", build, "the plugins could not be loaded (see the plugins check)")  # type: ignore[no-any-return]

    def package(self, kind: str, name: str) -> str:
        """The distribution that registered backend ``name`` of ``kind`` (``?`` if unknown)."""
        for row in self.plugins().backends():
            if row.kind == kind and row.name == name:
                return row.package
        return "?"

    def store(self) -> Any:
        from ..runtime.assembly import built_store

        def build() -> Any:
            settings = self.settings()
            return built_store(self.plugins().store(settings.store), settings)

        return self._need("store", build, "the store could not be built (see the database check)")

    def diagnosis(self) -> StoreDiagnosis | None:
        """The store's own ``diagnose()``, or None when it offers none."""

        def build() -> StoreDiagnosis | None:
            from mcp_memory_core.protocols import Diagnosable

            store = self.store()
            return store.diagnose() if isinstance(store, Diagnosable) else None

        return self._need("diagnosis", build, "the store could not be read (see the database check)")  # type: ignore[no-any-return]

    def embedder(self) -> Any:
        from ..runtime.assembly import built

        def build() -> Any:
            settings = self.settings()
            return built("embedder", self.plugins().embedder(settings.embedder), settings)

        return self._need("embedder", build, "the embedder could not be built (see the embedder check)")

    def _need(self, key: str, build: Callable[[], Any], why: str) -> Any:
        """``_once`` for a later check: a failure already reported elsewhere is NotChecked."""
        if key in self._errors and not isinstance(self._errors[key], NotChecked):
            raise NotChecked(why) from self._errors[key]
        return self._once(key, build)


def guarded(name: str, check: Callable[[Context], Check], ctx: Context) -> Check:
    """Run one check; what it could not check, or an error nobody expected, is its answer."""
    try:
        return check(ctx)
    except NotChecked as exc:
        return warn(name, f"Not checked: {exc}.", "Fix the failing check above first, then run doctor again.")
    except Exception as exc:
        return fail(name, f"The check itself failed: {type(exc).__name__}: {exc}", REPORT_BUG)


def first_failure(ctx: Context, key: str, build: Callable[[], Any]) -> Exception | None:
    """Build ``key`` and return what went wrong (None when it worked): the check that reports ``key``."""
    known = ctx.error(key)
    if known is not None and not isinstance(known, NotChecked):
        return known
    try:
        build()
    except NotChecked:
        raise
    except Exception:
        return ctx.error(key)
    return None
