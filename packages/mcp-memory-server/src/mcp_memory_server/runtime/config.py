"""Reading the settings, with a clear error for a bad value (imported lazily: it pulls in the core)."""

from __future__ import annotations

from pydantic import ValidationError

from mcp_memory_core.errors import MemoryServerError
from mcp_memory_core.settings import Settings

from .settings import ServerSettings


class ConfigurationError(MemoryServerError):
    """An MCP_MEMORY_* environment variable holds a value that cannot be used."""


def load_settings(given: Settings | None = None) -> ServerSettings:
    """The server's settings from the environment; over ``given`` (core settings a program or a test
    built) when there are some: their values are kept, the server's own fields come from the environment."""
    if isinstance(given, ServerSettings):
        return given
    try:
        return ServerSettings() if given is None else ServerSettings(**dict(given))
    except ValidationError as exc:
        problems = "; ".join(
            f"MCP_MEMORY_{'_'.join(str(part) for part in err['loc']).upper()}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigurationError(f"invalid settings: {problems}") from None
