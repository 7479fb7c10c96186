"""The runtime every surface stands on: settings → plugins → backends → engine, built in one place
(:mod:`.assembly`), the long-lived :class:`~.service.MemoryService`, where bearer tokens live and the
HTTP security settings, the process tuning and logging set at start.

It imports no surface (``mcp``, ``cli``, ``web``, ``integrations``, ``doctor``): they import it.
"""
