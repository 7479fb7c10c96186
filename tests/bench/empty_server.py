"""The baseline of the startup benchmark: an MCPServer with no tools, over stdio."""

from mcp.server import MCPServer

if __name__ == "__main__":
    MCPServer("empty").run()
