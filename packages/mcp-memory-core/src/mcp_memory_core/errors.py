"""Errors mcp-memory raises. Each message says what went wrong and what to do next."""

from __future__ import annotations

from collections.abc import Iterable


class MemoryServerError(Exception):
    """Base class of every error mcp-memory raises on purpose."""


class InvalidInputError(MemoryServerError, ValueError):
    """The caller passed something the engine cannot accept (empty content, bad id, bad limit …)."""


class ImportRecordError(InvalidInputError):
    """One memory of an import is refused. ``reason`` says why without naming the memory, so a reader
    that knows where the memory came from can say so instead (``line 7: …``)."""

    def __init__(self, memory_id: str, reason: str) -> None:
        super().__init__(f"memory {memory_id}: {reason}")
        self.memory_id = memory_id
        self.reason = reason


class MemoryNotFoundError(MemoryServerError, LookupError):
    def __init__(self, memory_id: str) -> None:
        super().__init__(
            f"No memory with id {memory_id!r}. Use search_memories or list_memories to find ids."
        )
        self.memory_id = memory_id


class MemoryStateError(MemoryServerError):
    """The memory exists but is in a state that forbids the operation (deleted, superseded …)."""


class StorageError(MemoryServerError):
    """The store cannot read or write its data (disk full, read-only, locked, damaged, gone). The message
    is one sentence a user can act on; a write that raised it was not made (nothing acknowledged)."""


DATABASE_UNAVAILABLE = "The memory database is unavailable; try again shortly."


class UnavailableError(StorageError):
    """The database cannot be reached now (down, restarting, refusing connections, no free connection
    in time): nothing was done, and the same request may succeed shortly. The message says where and
    why (logs, the CLI). The HTTP server answers 503 with Retry-After and only
    :data:`DATABASE_UNAVAILABLE` (the caller may not be signed in yet); a tool call's error starts with it."""


class EditConflictError(StorageError):
    """What the store would replace changed outside it since it was read (a note of a markdown vault
    edited by hand): nothing was written, and the next call reads the change first."""


class ModelMismatchError(MemoryServerError):
    """The database holds vectors of another embedding model than the one configured."""

    def __init__(self, db_path: str, stored: str, configured: str, *, reembedded: bool = False) -> None:
        if reembedded:
            message = (
                f"The database {db_path} was re-embedded with model {stored!r} (`mcp-memory reindex`) "
                f"while this server was using {configured!r}: nothing was searched or written. Restart "
                f"the server with that embedder configured (MCP_MEMORY_EMBEDDER / MCP_MEMORY_MODEL)."
            )
        else:
            message = (
                f"The database {db_path} holds vectors from embedding model {stored!r}, but the "
                f"configured embedder is {configured!r}. Vectors from different models cannot be "
                f"compared. Either select the embedder that wrote this database (MCP_MEMORY_EMBEDDER / "
                f"MCP_MEMORY_MODEL), point MCP_MEMORY_DB_PATH at another file, or re-embed it with the "
                f"configured one: `mcp-memory reindex`."
            )
        super().__init__(message)
        self.stored = stored
        self.configured = configured


class PluginError(MemoryServerError):
    """A plugin could not be loaded, or its hooks returned something invalid."""


class PluginConflictError(PluginError):
    def __init__(self, kind: str, name: str, packages: Iterable[str]) -> None:
        owners = ", ".join(sorted(packages))
        super().__init__(
            f"Conflicting plugins found: the {kind} name {name!r} is claimed by more than one package "
            f"({owners}). Uninstall one of them, or disable one with MCP_MEMORY_DISABLE_PLUGINS."
        )
        self.kind = kind
        self.name = name


class UnknownBackendError(PluginError, LookupError):
    def __init__(self, kind: str, name: str, available: Iterable[str]) -> None:
        choices = ", ".join(sorted(available)) or "(none installed)"
        super().__init__(
            f"The {kind} {name!r} is not recognized. Choose one of: {choices}. "
            f"Run `mcp-memory plugins` to see what is installed."
        )
        self.kind = kind
        self.name = name


class NotOwnerError(MemoryServerError, PermissionError):
    """The memory is readable in this scope but belongs to another user: only its owner changes it."""

    def __init__(self, memory_id: str, action: str) -> None:
        super().__init__(
            f"Memory {memory_id} belongs to another user; only its owner can {action} it. Store your own "
            "memory instead."
        )
        self.memory_id = memory_id
