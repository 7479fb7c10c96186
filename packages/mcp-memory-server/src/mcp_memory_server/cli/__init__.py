"""The ``mcp-memory`` command: :mod:`.main` holds the click group and adds each command module to it;
a command module imports only the shared helpers below it (:mod:`.common`, :mod:`.display`), never
the group.

``mcp_memory_server.cli:main`` is the console script (both distributions' ``[project.scripts]``).
"""

from .main import cli, main

__all__ = ["cli", "main"]
