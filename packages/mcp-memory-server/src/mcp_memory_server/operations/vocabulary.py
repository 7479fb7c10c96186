"""The words every surface offers, as the core spells them: memory types, privacy, tag matching,
import formats (:mod:`mcp_memory_core.vocabulary`).

That core module imports nothing else of the core: the MCP tools' argument schemas are built from
these words before the ``initialize`` reply, whose path must not import the rest of it (nor numpy).
A schema offers the values as a ``Literal`` (an ``enum`` of strings); the type checker sees ``str``,
which the engine checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

from mcp_memory_core.vocabulary import Format as ImportFormat
from mcp_memory_core.vocabulary import MemoryType, PrivacyScope
from mcp_memory_core.vocabulary import TagsMatch as TagsMatchName

MEMORY_TYPES: tuple[str, ...] = tuple(kind.value for kind in MemoryType)
PRIVACY: tuple[str, ...] = tuple(scope.value for scope in PrivacyScope)
IMPORT_FORMATS: tuple[str, ...] = get_args(ImportFormat)
AUTO: Literal["auto"] = "auto"  # guess the format from the file's first bytes

if TYPE_CHECKING:
    MemoryTypeName = str
    PrivacyName = str
else:
    MemoryTypeName = Literal[MEMORY_TYPES]
    PrivacyName = Literal[PRIVACY]

__all__ = [
    "AUTO",
    "IMPORT_FORMATS",
    "MEMORY_TYPES",
    "PRIVACY",
    "ImportFormat",
    "MemoryTypeName",
    "PrivacyName",
    "TagsMatchName",
]
