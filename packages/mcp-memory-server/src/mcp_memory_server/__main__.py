"""``python -m mcp_memory_server`` is the ``mcp-memory`` command."""

from .cli import main

if __name__ == "__main__":
    main()
