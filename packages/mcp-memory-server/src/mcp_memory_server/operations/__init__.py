"""What every surface shares between the runtime and its own rendering: import and export written
once (:mod:`.transfer`), the one table of errors (:mod:`.errors`), the words every surface offers
(:mod:`.vocabulary`), and the engine's results as the plain dicts the MCP tools, ``--json`` and the
web UI show (:mod:`.serialize`).

It imports no surface; surfaces import it.
"""
