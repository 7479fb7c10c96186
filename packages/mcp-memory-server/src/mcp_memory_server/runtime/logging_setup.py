"""Logging goes to stderr, always: in stdio mode stdout carries the MCP protocol."""

from __future__ import annotations

import logging
import sys

FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

_HANDLER_MARK = "_mcp_memory_handler"


def parse_level(level: str | int) -> int:
    """``"info"`` / ``"DEBUG"`` / ``20`` → a logging level; an unknown name falls back to INFO."""
    if isinstance(level, int):
        return level
    value = logging.getLevelName(level.strip().upper())
    return value if isinstance(value, int) else logging.INFO


def configure_logging(level: str | int = "INFO") -> None:
    """Send every log record to stderr (root logger), at ``level``.

    Idempotent: calling it again only changes the level. Installing our handler on the root logger
    before the MCP SDK is imported also makes the SDK's own ``logging.basicConfig`` a no-op, so the
    SDK never adds a second handler.
    """
    root = logging.getLogger()
    numeric = parse_level(level)
    root.setLevel(numeric)
    for handler in root.handlers:
        if getattr(handler, _HANDLER_MARK, False):
            return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    setattr(handler, _HANDLER_MARK, True)
    # Anything that wrote to stdout (a stray StreamHandler(sys.stdout)) would corrupt the protocol.
    for existing in list(root.handlers):
        if isinstance(existing, logging.StreamHandler) and getattr(existing, "stream", None) is sys.stdout:
            root.removeHandler(existing)
    root.addHandler(handler)
