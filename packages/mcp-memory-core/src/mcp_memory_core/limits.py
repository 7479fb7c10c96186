"""The caps every surface quotes to its users (tool descriptions, CLI help). This module imports
nothing, so a surface can quote them before anything else of the core is loaded (the MCP server
describes its tools before the handshake)."""

MAX_SEARCH_LIMIT = 100  # hits one search returns
MAX_LIST_LIMIT = 1000  # memories one page of a list holds
MAX_TOKEN_BUDGET = 100_000  # tokens one recall packs
MAX_KNN_K = 4096  # sqlite-vec's ceiling, and plenty for any store
MAX_CHAIN_LENGTH = 10_000  # versions one chain may have
