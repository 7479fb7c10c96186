"""mcp-memory core: what plugin authors and the server build on.

Plugin authors need only: the ``hookimpl`` marker, the spec classes, the protocols and the models.

Importing the package imports nothing else: each name below is imported from its module the first
time it is used (PEP 562), so ``from mcp_memory_core.models import Memory`` or the server's
handshake never pays for the engine or numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import MemoryEngine
    from .errors import (
        InvalidInputError,
        MemoryNotFoundError,
        MemoryServerError,
        MemoryStateError,
        ModelMismatchError,
        NotOwnerError,
        PluginConflictError,
        PluginError,
        StorageError,
        UnknownBackendError,
    )
    from .hookspecs import hookimpl, hookspec
    from .models import (
        DEFAULT_NAMESPACE,
        LOCAL_USER,
        USER_NAMESPACE,
        Candidate,
        Memory,
        MemoryFilter,
        MemoryType,
        PrivacyScope,
        ScoredCandidate,
        SearchHit,
        SearchResults,
        Visibility,
        utcnow,
    )
    from .plugins import BackendInfo, PluginManager
    from .protocols import (
        BulkLoading,
        Calibrated,
        Diagnosable,
        Embedder,
        IndexRebuilding,
        InPlaceReembedding,
        LayoutInitializing,
        PassageBacklog,
        QueryBatching,
        Ranker,
        Refreshing,
        Reranker,
        Store,
        StoreCapabilities,
        StoreDiagnosis,
        TagCounting,
        TokenCounting,
        Vector,
        VectorReading,
        Warmable,
        WriteLocking,
    )
    from .scope import Scope
    from .settings import Settings
    from .specs import EmbedderSpec, RankerSpec, RerankerSpec, StoreSpec, TokenTableSpec

# Each public name -> the module that defines it.
_WHERE = {
    "MemoryEngine": "engine",
    **dict.fromkeys(
        (
            "InvalidInputError",
            "MemoryNotFoundError",
            "MemoryServerError",
            "MemoryStateError",
            "ModelMismatchError",
            "NotOwnerError",
            "PluginConflictError",
            "PluginError",
            "StorageError",
            "UnknownBackendError",
        ),
        "errors",
    ),
    **dict.fromkeys(("hookimpl", "hookspec"), "hookspecs"),
    **dict.fromkeys(
        (
            "DEFAULT_NAMESPACE",
            "LOCAL_USER",
            "USER_NAMESPACE",
            "Candidate",
            "Memory",
            "MemoryFilter",
            "MemoryType",
            "PrivacyScope",
            "ScoredCandidate",
            "SearchHit",
            "SearchResults",
            "Visibility",
            "utcnow",
        ),
        "models",
    ),
    **dict.fromkeys(("BackendInfo", "PluginManager"), "plugins"),
    **dict.fromkeys(
        (
            "BulkLoading",
            "Calibrated",
            "Diagnosable",
            "Embedder",
            "IndexRebuilding",
            "LayoutInitializing",
            "PassageBacklog",
            "QueryBatching",
            "Ranker",
            "InPlaceReembedding",
            "Refreshing",
            "Reranker",
            "Store",
            "StoreCapabilities",
            "StoreDiagnosis",
            "TagCounting",
            "TokenCounting",
            "Vector",
            "VectorReading",
            "Warmable",
            "WriteLocking",
        ),
        "protocols",
    ),
    "Scope": "scope",
    "Settings": "settings",
    **dict.fromkeys(("EmbedderSpec", "RankerSpec", "RerankerSpec", "StoreSpec", "TokenTableSpec"), "specs"),
}

__all__ = [
    "DEFAULT_NAMESPACE",
    "LOCAL_USER",
    "USER_NAMESPACE",
    "BackendInfo",
    "BulkLoading",
    "Calibrated",
    "Candidate",
    "Diagnosable",
    "Embedder",
    "EmbedderSpec",
    "InPlaceReembedding",
    "IndexRebuilding",
    "InvalidInputError",
    "LayoutInitializing",
    "Memory",
    "MemoryEngine",
    "MemoryFilter",
    "MemoryNotFoundError",
    "MemoryServerError",
    "MemoryStateError",
    "MemoryType",
    "ModelMismatchError",
    "NotOwnerError",
    "PassageBacklog",
    "PluginConflictError",
    "PluginError",
    "PluginManager",
    "PrivacyScope",
    "QueryBatching",
    "Ranker",
    "RankerSpec",
    "Refreshing",
    "Reranker",
    "RerankerSpec",
    "Scope",
    "ScoredCandidate",
    "SearchHit",
    "SearchResults",
    "Settings",
    "StorageError",
    "Store",
    "StoreCapabilities",
    "StoreDiagnosis",
    "StoreSpec",
    "TagCounting",
    "TokenCounting",
    "TokenTableSpec",
    "UnknownBackendError",
    "Vector",
    "VectorReading",
    "Visibility",
    "Warmable",
    "WriteLocking",
    "hookimpl",
    "hookspec",
    "utcnow",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
