"""mcp-memory core: what plugin authors and the server build on.

Plugin authors need only: the ``hookimpl`` marker, the spec classes, the protocols and the models.
"""

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
from .protocols import Embedder, Ranker, Reranker, Store, StoreCapabilities, StoreDiagnosis, Vector
from .scope import Scope
from .settings import Settings
from .specs import EmbedderSpec, RankerSpec, RerankerSpec, StoreSpec, TokenTableSpec

__all__ = [
    "DEFAULT_NAMESPACE",
    "LOCAL_USER",
    "USER_NAMESPACE",
    "BackendInfo",
    "Candidate",
    "Embedder",
    "EmbedderSpec",
    "InvalidInputError",
    "Memory",
    "MemoryEngine",
    "MemoryFilter",
    "MemoryNotFoundError",
    "MemoryServerError",
    "MemoryStateError",
    "MemoryType",
    "ModelMismatchError",
    "NotOwnerError",
    "PluginConflictError",
    "PluginError",
    "PluginManager",
    "PrivacyScope",
    "Ranker",
    "RankerSpec",
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
    "TokenTableSpec",
    "UnknownBackendError",
    "Vector",
    "Visibility",
    "hookimpl",
    "hookspec",
    "utcnow",
]
