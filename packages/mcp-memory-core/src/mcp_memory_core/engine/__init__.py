"""The memory engine: a facade (:class:`MemoryEngine`) over named parts, one module each."""

from ..limits import MAX_LIST_LIMIT, MAX_SEARCH_LIMIT
from .facade import MemoryEngine
from .reads import LIST_CHUNK

__all__ = ["LIST_CHUNK", "MAX_LIST_LIMIT", "MAX_SEARCH_LIMIT", "MemoryEngine"]
