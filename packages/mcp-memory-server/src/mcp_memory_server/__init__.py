"""mcp-memory server: the MCP tools, resource and instructions, the transports and the ``mcp-memory`` CLI.

Importing this package is cheap on purpose: nothing here imports the MCP SDK, a store or a model.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
