"""What every surface calls between the runtime and its own rendering, written once: searching,
listing, one memory, the namespaces and the statistics (:mod:`.read`, filters parsed by
:mod:`.filters`), storing and updating (:mod:`.write`), import and export (:mod:`.transfer`),
tidying (:mod:`.tidy`: proposals with reasons, and applying them), each a
pydantic request model and a function run in the caller's Scope; their typed results, which the MCP
tools, ``--json`` and the web UI render (:mod:`.results`; the delete and pin receipts in
:mod:`.serialize`); the one table of errors (:mod:`.errors`); the words every surface offers, quoted
from the core (:mod:`.vocabulary`).

It imports no surface; surfaces import it.
"""
