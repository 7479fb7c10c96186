"""Conversation threads (seed 004's ``Threads/*.yaml``): a transcript as plain YAML, each message a
memory of that thread, so a search finds a message and reads it with its neighbours.

::

    # Threads/2026-11-20 planning call.yaml
    thread: planning-call          # optional: the file's name
    namespace: my-project          # optional, like owner, privacy_scope and tags (for every message)
    messages:
      - speaker: Alice             # or role (user / assistant) or name
        at: 2026-11-20T09:00:00Z   # optional: when it was said (else the file's modification time)
        content: Shall we move the release to Friday?
      - speaker: Bob
        content: Friday works, QA signs off Thursday.

A file that is only the list of messages is read the same way. A message's memory says who spoke
(``Alice: Shall we …``, with ``speaker`` in its metadata), its ``thread`` is the file's, its id is
the message's ``id`` if it has one, else derived from the file's path and the message's position
(the same in every copy of the vault). A transcript is a record of what was said: its memories are
read-only through mcp-memory (the store refuses to change them, saying to edit the file), type
semantic and pinned, so that no lifetime expires them (a TTL sweep would otherwise try to write a
tombstone into the record, and be refused).

The index knows a message by the file's path and its position, ``Threads/x.yaml#3``
(:func:`message_path`): a ``#`` never ends a note's path, which ends in ``.md``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from pydantic import ValidationError

from mcp_memory_core.models import Memory, MemoryType
from mcp_memory_core.validation import DEFAULT_LIMITS, Limits

from .notes import MalformedNote, Note, check_fields, date_of, decode_text, load_yaml, note_id, parse_tags

THREAD_SUFFIXES = (".yaml", ".yml")
_FILE_KEYS = {"thread", "title", "namespace", "owner", "privacy_scope", "tags", "messages"}
_SPEAKER_KEYS = ("speaker", "role", "name", "author")
_TIME_KEYS = ("at", "time", "timestamp", "date", "occurred")


def is_thread_file(relative_path: str, threads_dir: str) -> bool:
    return relative_path.startswith(threads_dir + "/") and relative_path.endswith(THREAD_SUFFIXES)


def message_path(file: str, position: int) -> str:
    """How the index knows message ``position`` (from 1) of the transcript ``file``."""
    return f"{file}#{position}"


def file_of(indexed_path: str) -> str:
    """The file an index row was read from (a transcript's for a message, else the path itself)."""
    head, sep, _ = indexed_path.rpartition("#")
    return head if sep and head.endswith(THREAD_SUFFIXES) else indexed_path


def is_message(indexed_path: str) -> bool:
    return file_of(indexed_path) != indexed_path


def parse_thread(
    raw: bytes,
    relative_path: str,
    *,
    mtime: dt.datetime,
    namespace: str,
    owner: str,
    limits: Limits = DEFAULT_LIMITS,
) -> list[tuple[str, Note, str]]:
    """The messages of the transcript at ``relative_path``: ``(index path, note, hash of the
    message)`` each, every message held to the engine's ``limits``. Raises MalformedNote with one
    sentence saying what is wrong."""
    import yaml

    try:
        data = load_yaml(decode_text(raw), "it")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise MalformedNote(f"it is not valid YAML: {getattr(exc, 'problem', None) or exc}{where}") from None
    header: dict[str, Any] = {}
    if isinstance(data, dict):
        unknown = sorted(str(key) for key in data if key not in _FILE_KEYS)
        if unknown:
            raise MalformedNote(
                f"a thread has no {unknown[0]!r} key (it takes: {', '.join(sorted(_FILE_KEYS))})"
            )
        header, messages = data, data.get("messages")
    else:
        messages = data
    if not isinstance(messages, list) or not messages:
        raise MalformedNote("a thread needs a non-empty list of messages (a 'messages:' list)")
    stem = relative_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    thread = str(header.get("thread") or stem)
    tags = parse_tags(header["tags"]) if header.get("tags") is not None else ()
    out: list[tuple[str, Note, str]] = []
    for position, message in enumerate(messages, start=1):
        path = message_path(relative_path, position)
        memory = _message(message, position, path, header, thread, tags, mtime, namespace, owner, limits)
        digest = hashlib.sha256(
            json.dumps(memory.model_dump(mode="json"), sort_keys=True).encode("utf-8")
        ).hexdigest()
        # No title row (the thread's name is not the message's), and no sidecar id: a message's id
        # follows its position in the file.
        note = Note(memory=memory, title=thread, aliases=(), hand_written=False)
        out.append((path, note, digest))
    return out


def _message(
    message: Any,
    position: int,
    path: str,
    header: dict[str, Any],
    thread: str,
    tags: tuple[str, ...],
    mtime: dt.datetime,
    namespace: str,
    owner: str,
    limits: Limits,
) -> Memory:
    if isinstance(message, str):
        message = {"content": message}
    if not isinstance(message, dict):
        raise MalformedNote(f"message {position} is not a 'content: …' entry")
    text = message.get("content", message.get("text"))
    if not isinstance(text, str) or not text.strip():
        raise MalformedNote(f"message {position} has no content")
    speaker = next((str(message[k]).strip() for k in _SPEAKER_KEYS if message.get(k)), None)
    when = next((message[k] for k in _TIME_KEYS if message.get(k) is not None), None)
    occurred = date_of(f"message {position}'s time", when) if when is not None else mtime
    metadata = {"speaker": speaker} if speaker else {}
    fields = {
        "id": str(message.get("id") or note_id(path)),
        "content": f"{speaker}: {text.strip()}" if speaker else text.strip(),
        "metadata": metadata,
        "type": MemoryType.SEMANTIC,
        "pinned": True,  # a record: no lifetime expires it, whatever MCP_MEMORY_TTL_* says
        "tags": tags,
        "namespace": header.get("namespace") or namespace,
        "owner": header.get("owner") or owner,
        "privacy_scope": header.get("privacy_scope") or "private",
        "thread": thread,
        "created_at": occurred,
        "updated_at": max(occurred, mtime),
        "occurred_at": occurred,
    }
    try:
        check_fields(fields, limits, {key: key for key in fields})
    except MalformedNote as exc:
        raise MalformedNote(f"message {position}: {exc}") from None
    try:
        return Memory.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "message"
        raise MalformedNote(f"message {position}: {field} is invalid: {error['msg']}") from None
