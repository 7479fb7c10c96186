"""Moving memories in and out: the mcp-memory export format, and importers for other tools' data.

**mcp-memory JSON Lines v1** (``export_memories`` / ``read_mcp_memory_jsonl``): UTF-8, one JSON object
per line. The first line is a header ``{"count": N, "exported_at": ISO, "format": "mcp-memory",
"version": 1}``; every following line is one memory with every field of :class:`~..models.Memory`
(chains, tombstones, pins and access statistics included). Keys are sorted, datetimes are ISO 8601
in UTC with microseconds, memories are ordered by (namespace, created_at, id): exporting the same
memories with the same ``now`` gives the same bytes.

**With vectors** (``export_memories(..., vectors=True)``; format version 2, otherwise the same): the
header adds ``"embedder": {"model": ID, "dimensions": D}`` and every memory a ``"vectors"`` list, its
whole text's vector then its passages', each the base64 of D little-endian float32. An import into a
store bound to the same model reuses them (no embedding: much faster, and the same search results);
into another model's store it embeds again. Version 1 files (no vectors) are read as before.

Importers for other tools produce memories with deterministic ids (uuid5 of the source's own ids and
the target namespace), so importing the same file twice inserts nothing the second time:

- a ChatGPT data export (``conversations.json``, or the ``.zip`` that contains it): one memory per
  user message (semantic by default: imported history is older than the episodic lifetime;
  ``include_assistant`` adds the assistant's replies), chit-chat left out and counted
  (:mod:`..junk`), in the ``user`` namespace unless one is given (:func:`default_import_namespace`),
  dated when it was sent, its thread the
  conversation (``chatgpt:<conversation id>``);
- a Claude.ai data export (the same shape, :mod:`.claude`): one memory per message of the person
  (``sender: human``; ``include_assistant`` adds Claude's replies), their text blocks only, in the
  ``user`` namespace unless one is given, chit-chat left out and counted, dated when it was sent,
  its thread the conversation (``claude:<conversation uuid>``). Either export's
  ``conversations.json`` is read one conversation at a time (:mod:`.chat_archive`); inside a zip it
  may inflate to at most ``MAX_CHAT_JSON_BYTES``;
- the official MCP memory server's knowledge graph (``memory.jsonl`` of
  ``@modelcontextprotocol/server-memory``): one semantic memory per observation and per relation.

Only regular files are read (a device or a pipe may never end). Everything is validated before it
is returned: a bad input raises :class:`InvalidInputError` that says
where (line number, conversation) and what is wrong. A reader returns an :class:`ImportFile`, which
remembers where each memory came from, so the engine's own refusals (another owner, a date in year
9999, a chain into another namespace) name the line too. Every reader accepts a UTF-8 byte order mark,
and replaces lone UTF-16 surrogates (an emoji cut in half) with U+FFFD, counting them
(:mod:`..surrogates`).

The package, one module each: :mod:`.import_file` (what a reader returns), :mod:`.mcp_format` (our
format and its reader), :mod:`.export`, :mod:`.chat_archive` (a chat export's file), :mod:`.chatgpt`,
:mod:`.claude`, :mod:`.knowledge_graph`, :mod:`.files`
(reading a file, guessing its format) and :mod:`.importing` (through the engine).
"""

from .chat_archive import Inflated
from .chatgpt import parse_chatgpt_conversations
from .claude import parse_claude_conversations
from .export import export_memories
from .files import FORMATS, Format, default_import_namespace, detect_format, read_memories
from .import_file import ImportFile
from .importing import (
    check_records,
    import_chatgpt,
    import_knowledge_graph,
    import_records,
    redacted_records,
    refused_records,
)
from .knowledge_graph import parse_knowledge_graph
from .mcp_format import (
    ExportEmbedder,
    ExportHeader,
    ExportRecord,
    decode_vectors,
    encode_vectors,
    format_datetime,
    read_mcp_memory_jsonl,
)

__all__ = [
    "FORMATS",
    "ExportEmbedder",
    "ExportHeader",
    "ExportRecord",
    "Format",
    "ImportFile",
    "Inflated",
    "check_records",
    "decode_vectors",
    "default_import_namespace",
    "detect_format",
    "encode_vectors",
    "export_memories",
    "format_datetime",
    "import_chatgpt",
    "import_knowledge_graph",
    "import_records",
    "parse_chatgpt_conversations",
    "parse_claude_conversations",
    "parse_knowledge_graph",
    "read_mcp_memory_jsonl",
    "read_memories",
    "redacted_records",
    "refused_records",
]
