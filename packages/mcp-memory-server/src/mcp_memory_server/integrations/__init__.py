"""mcp-memory inside other tools: Claude Code's hooks (:mod:`.claude_code`) and the MCP clients'
configuration files (:mod:`.clients`), both writing through :mod:`.config_files` and launching the
server the way :mod:`.launch` detects."""
