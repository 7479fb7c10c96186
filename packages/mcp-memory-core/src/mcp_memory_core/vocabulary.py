"""The words memories are described in, as every surface offers them: memory types, privacy scopes,
how tags match, import formats.

Like :mod:`.limits` it imports nothing of ours (the standard library only): the server builds its MCP
tools' argument schemas from these words before the ``initialize`` reply, when no other part of the
core may be imported. :mod:`.memory`, :mod:`.filters` and :mod:`.transfer` use them from here.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args


class MemoryType(StrEnum):
    """The memory types. Retrieval ranks and filters by them; lifecycle rules build on them."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


class PrivacyScope(StrEnum):
    """Who besides its owner may read a memory. Only the owner ever changes it.

    ``private``: the owner alone; ``team``: also every user who shares a team with the owner;
    ``public``: every user of the server."""

    PRIVATE = "private"
    TEAM = "team"
    PUBLIC = "public"


TagsMatch = Literal["any", "all"]  # any: at least one of the tags; all: every one of them

Format = Literal["mcp-memory", "chatgpt", "claude", "mcp-knowledge-graph"]  # the formats an import reads
FORMATS: tuple[Format, ...] = get_args(Format)
# A chat assistant's data export: the person's messages, into ``user`` unless told otherwise, chit-chat
# left out; the assistant's replies on request.
CHAT_EXPORTS: tuple[Format, ...] = ("chatgpt", "claude")
