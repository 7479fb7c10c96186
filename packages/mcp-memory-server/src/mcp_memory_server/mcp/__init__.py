"""The MCP surface: the server and its wiring (:mod:`.app`), one registration function per tool
(:mod:`.tools_write`, :mod:`.tools_read`), the resources and the prompt (:mod:`.resources`), the
strict arguments, the result budget and the stdio transport.

Imported only by the commands that serve: the package itself imports nothing (not even the SDK).
"""
