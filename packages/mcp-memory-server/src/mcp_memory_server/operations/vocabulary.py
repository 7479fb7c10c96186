"""The words every surface offers, spelled once: memory types, privacy, tag matching, import formats.

They mirror the core's enumerations (``MemoryType``, ``PrivacyScope``, ``transfer.Format``; a unit test
checks each): the MCP tools' argument schemas are built from them before the core is imported (the
stdio path to the ``initialize`` reply must not import it, nor numpy).
"""

from __future__ import annotations

from typing import Literal, get_args

MemoryTypeName = Literal["working", "episodic", "semantic", "procedural"]
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryTypeName)

PrivacyName = Literal["private", "team", "public"]
PRIVACY: tuple[str, ...] = get_args(PrivacyName)

TagsMatchName = Literal["any", "all"]

ImportFormat = Literal["mcp-memory", "chatgpt", "mcp-knowledge-graph"]
IMPORT_FORMATS: tuple[str, ...] = get_args(ImportFormat)
AUTO: Literal["auto"] = "auto"  # guess the format from the file's first bytes
