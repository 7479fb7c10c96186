"""What every surface shares between the runtime and its own rendering: the engine's results as the
plain dicts the MCP tools, ``--json`` and the web UI show (:mod:`.serialize`).

It imports no surface; surfaces import it.
"""
