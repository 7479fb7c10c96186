"""The HTTP surface: the server that serves ``/mcp`` and the web UI at ``/ui`` (:mod:`.server`), the
UI's pages (:mod:`.routes`, :mod:`.auth`, :mod:`.imports`, mounted by :mod:`.mount`), and the
middleware around both (:mod:`.middleware`).

Imported only when the HTTP server starts: the stdio path never loads Starlette's templates or Jinja2.
"""
