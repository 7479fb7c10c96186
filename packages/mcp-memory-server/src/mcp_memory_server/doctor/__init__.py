"""``mcp-memory doctor``: what to look at when an MCP client says "disconnected".

Each check returns a :class:`Check` (ok / warn / fail, one sentence, and for warn and fail the fix to
apply). The checks share one :class:`Context` that reads the settings, loads the plugins, builds the
store and the embedder once; whatever fails there becomes the failing check's answer, never a
traceback. Nothing is created or written: the store is built with ``create_database=False`` and only
its optional ``diagnose()`` reads the data (read-only); the handshake spawns this same server over
stdio with the caller's environment. No network.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .data import check_database, check_embedder, check_model, check_storage
from .environment import _shown, check_plugins, check_settings, check_versions
from .handshake import check_handshake, server_command
from .report import HANDSHAKE_TIMEOUT_S, Check, Context, NotChecked, guarded

if TYPE_CHECKING:
    from mcp_memory_core.plugins import PluginManager

__all__ = [
    "Check",
    "Context",
    "NotChecked",
    "_shown",
    "check_handshake",
    "failed",
    "guarded",
    "run_checks",
    "server_command",
]


# -- the whole run ----------------------------------------------------------------------------------
CHECKS: tuple[tuple[str, Callable[[Context], Check]], ...] = (
    ("versions", check_versions),
    ("settings", check_settings),
    ("plugins", check_plugins),
    ("storage", check_storage),
    ("database", check_database),
    ("embedder", check_embedder),
    ("model", check_model),
)


def run_checks(
    *,
    plugins: PluginManager | None = None,
    handshake: bool = True,
    timeout: float = HANDSHAKE_TIMEOUT_S,
) -> list[Check]:
    """Every check, in order (the handshake last), on this process's environment. ``plugins`` replaces
    the installed plugins (tests); the spawned server of the handshake loads its own."""
    ctx = Context(plugins)
    results = [guarded(name, check, ctx) for name, check in CHECKS]
    if handshake:
        results.append(guarded("handshake", lambda c: check_handshake(c, timeout), ctx))
    return results


def failed(results: list[Check]) -> bool:
    return any(check.status == "fail" for check in results)
