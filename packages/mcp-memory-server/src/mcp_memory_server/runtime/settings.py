"""The server's settings: the core's (engine, plugin choice) plus what only the server reads, the HTTP
server's and the MCP tools', from the same ``MCP_MEMORY_*`` variables (imported lazily: it pulls in
the core)."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import AnyHttpUrl, Field, TypeAdapter, ValidationError, field_validator

from mcp_memory_core.settings import Settings, default_db_path

# a Host header's value: a name or IPv4 address, or a bracketed IPv6 address, then an optional port
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?"
)


class ServerSettings(Settings):
    """What every ``mcp-memory`` surface reads: :class:`~mcp_memory_core.settings.Settings` and the
    server's own fields (same prefix, ``MCP_MEMORY_``)."""

    tokens_path: Path | None = Field(
        default=None,
        description="The HTTP server's token file, used whatever the store (default: the store plugin's "
        "token table if it has one, as postgres does; else tokens.db beside the database)",
    )
    allowed_hosts: str = Field(
        default="",
        description="HTTP: extra Host names the server answers to, comma-separated (e.g. memory.example.com "
        "behind a reverse proxy); loopback names and the bind address are always allowed",
    )
    public_url: str | None = Field(
        default=None, description="HTTP: the server's URL as clients reach it (default http://HOST:PORT)"
    )
    max_result_tokens: int = Field(
        default=8000,
        ge=1000,
        description="Largest MCP tool result, in tokens estimated as UTF-8 bytes / 4 of its JSON text "
        "(clients accept about 25,000); search and list cut what does not fit and say so, get_memory "
        "always returns the memory asked for whole",
    )

    def resolved_tokens_path(self) -> Path:
        if self.tokens_path is not None:
            return self.tokens_path.expanduser().resolve()
        base = self.db_path.parent if str(self.db_path) != ":memory:" else default_db_path().parent
        return base / "tokens.db"

    @field_validator("allowed_hosts")
    @classmethod
    def _allowed_hosts(cls, value: str) -> str:
        """Host names, IPv4 or bracketed IPv6 addresses, each with an optional port, comma-separated:
        what a request's Host header holds, not a URL."""
        for name in (n.strip() for n in value.split(",")):
            if name and not _HOST.fullmatch(name):
                raise ValueError(
                    f"{name[:80]!r} is not a host name: give names such as memory.example.com or "
                    "memory.example.com:8443, comma-separated (no scheme, no path)"
                )
        return value

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        """The URL clients reach the server at: http(s), with a host (the OAuth metadata needs one)."""
        if value is None or not value.strip():
            return None
        try:
            parsed = TypeAdapter(AnyHttpUrl).validate_python(value.strip())
        except ValidationError:
            parsed = None
        if parsed is None or not parsed.host:
            raise ValueError(
                f"{value[:80]!r} is not an http(s) URL: give the address clients use, e.g. "
                "https://memory.example.com"
            )
        return value.strip()
