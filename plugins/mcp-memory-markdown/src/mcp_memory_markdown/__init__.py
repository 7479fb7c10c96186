"""mcp-memory's markdown vault store: memories as Obsidian-compatible notes, the index derived from them."""

from .layout import VaultConfig
from .notes import Note, parse_note, render_note
from .refresh import Problem, RefreshReport
from .store import MarkdownStore

__all__ = ["MarkdownStore", "Note", "Problem", "RefreshReport", "VaultConfig", "parse_note", "render_note"]
