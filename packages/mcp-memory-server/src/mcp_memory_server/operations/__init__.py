"""What every surface calls between the runtime and its own rendering, written once: searching and
listing (:mod:`.read`, filters parsed by :mod:`.filters`), storing and updating (:mod:`.write`),
import and export (:mod:`.transfer`), each a pydantic request model and a function run in the
caller's Scope; the one table of errors (:mod:`.errors`); the words every surface offers
(:mod:`.vocabulary`); and the engine's results as the plain dicts the MCP tools, ``--json`` and the
web UI show (:mod:`.serialize`).

It imports no surface; surfaces import it.
"""
