"""One memory as one markdown note: YAML frontmatter for its fields, the body for its content.

A note the server wrote::

    ---
    id: 1f0c2d3e-…
    type: semantic
    tags:
    - user
    importance: 0.5
    pinned: false
    namespace: my-project
    owner: local
    privacy_scope: private
    created: 2026-11-25T10:30:00.123456+00:00
    updated: 2026-11-25T10:30:00.123456+00:00
    aliases:
    - Andy
    ---
    Andrew prefers concise answers.

Every frontmatter key that is not a memory field (``aliases``, ``cssclasses``, anything a user or a
client adds) is the memory's metadata, so Obsidian shows it as a property and a search can filter on
it; a metadata key that is also a field's name is written under a ``metadata:`` key instead. Access
statistics are not in the file (a search would otherwise rewrite every note it returns): they live
in the index. ``supersedes`` names the version a note replaced (for people; the index derives chains
from ``superseded_by``).

A note without frontmatter, or whose frontmatter has no ``id``, is a hand-written note: it gets an id
derived from its path (the same in every copy of the vault; one that was renamed keeps its id through
the sidecar of :mod:`.note_ids`), the
vault's default namespace and owner, and its file's modification time as its dates. Its file is
never rewritten unless the user changes the memory through mcp-memory.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from mcp_memory_core.errors import InvalidInputError
from mcp_memory_core.models import Memory
from mcp_memory_core.scope import validate_principal
from mcp_memory_core.validation import (
    DEFAULT_LIMITS,
    Limits,
    validate_content,
    validate_id,
    validate_metadata,
    validate_namespace,
    validate_thread,
)

# Hand-written notes' ids: uuid5(this namespace, the note's path in the vault, with '/').
NOTE_ID_NAMESPACE = uuid.UUID("6f1d2a4e-8c1b-5b7e-9a57-3c0f5d9b2e11")

FIELD_KEYS = {
    "id": "id",
    "type": "type",
    "tags": "tags",
    "importance": "importance",
    "pinned": "pinned",
    "namespace": "namespace",
    "owner": "owner",
    "privacy_scope": "privacy_scope",
    "created": "created_at",
    "updated": "updated_at",
    "occurred": "occurred_at",
    "thread": "thread",
    "superseded_by": "superseded_by",
    "deleted": "deleted_at",
}
RESERVED = frozenset({*FIELD_KEYS, "supersedes", "metadata"})
_DATES = ("created", "updated", "occurred", "deleted")
FIELD_LINES_BYTES = 4096  # a note's field lines (id, type, dates …) beside its text and properties
TRANSCRIPT_MESSAGES = 32  # a transcript file holds up to this many messages of the largest size


def note_bytes(limits: Limits) -> int:
    """The largest note file read: its text, its properties (as YAML, up to twice their JSON size)
    and its field lines. A bigger file is reported, never read."""
    return limits.content_bytes + 2 * limits.metadata_bytes + FIELD_LINES_BYTES


def transcript_bytes(limits: Limits) -> int:
    """The largest conversation transcript file read (1 MiB with the default content limit)."""
    return TRANSCRIPT_MESSAGES * limits.content_bytes


class MalformedNote(ValueError):
    """A file that cannot be read as a memory; the message is one sentence (the path is added by the caller)."""


@dataclass(frozen=True)
class Note:
    """A parsed note: its memory, and what the title of the note is (its ``name``, else its file name)."""

    memory: Memory
    title: str
    aliases: tuple[str, ...]
    hand_written: bool  # no id in the file: the id is derived from the path

    @property
    def heading(self) -> str:
        return heading_of(self.memory, self.title, hand_written=self.hand_written)


def heading_of(memory: Memory, title: str, *, hand_written: bool) -> str:
    """The title row embedded beside a note's content, so a search for its name or an alias finds
    it: for a hand-written note (its file name is its title) and for a note with a ``name`` or
    ``aliases`` property; '' for the others (their file name is their first words)."""
    aliases = aliases_of(memory.metadata.get("aliases"))
    name = memory.metadata.get("name")
    if not (hand_written or aliases or (isinstance(name, str) and name.strip())):
        return ""
    return title + (f" ({', '.join(aliases)})" if aliases else "")


def title_of(memory: Memory, relative_path: str) -> str:
    """A note's title: its ``name`` property, else its file name."""
    name = memory.metadata.get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    return relative_path.rsplit("/", 1)[-1].removesuffix(".md")


def note_id(relative_path: str) -> str:
    """The id of a hand-written note at ``relative_path`` (posix, relative to the vault)."""
    return str(uuid.uuid5(NOTE_ID_NAMESPACE, relative_path))


def split_frontmatter(text: str) -> tuple[dict[str, Any] | None, str]:
    """``(frontmatter, body)``; frontmatter is None when the text has none. Raises MalformedNote."""
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return None, text
    lines = text.splitlines(keepends=True)
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") == "---":
            block = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            break
    else:
        raise MalformedNote("its frontmatter opens with '---' but never closes")
    try:
        data = load_yaml(block, "its frontmatter") if block.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid syntax"
        raise MalformedNote(f"its frontmatter is not valid YAML: {problem}{where}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise MalformedNote("its frontmatter is not a set of key: value properties")
    return {str(key): value for key, value in data.items()}, body


def load_yaml(text: str, what: str) -> Any:
    """``yaml.safe_load`` that refuses what would blow up in memory: aliases (``*name``) repeating
    more than the text itself holds (a "billion laughs" bomb), an alias inside what it names (a
    loop), and nesting deeper than Python's recursion allows. ``what`` names the text in the
    MalformedNote raised ("its frontmatter")."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except RecursionError:
        raise MalformedNote(f"{what} is nested too deeply to read") from None
    finally:
        loader.dispose()


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._budget = len(text)  # an alias may at most double what was written
        self._sizes: dict[int, int] = {}
        self._open: list[str | None] = []  # anchors of the collections being composed

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            node = self.anchors.get(event.anchor) if event.anchor is not None else None
            if node is not None:
                if event.anchor in self._open:
                    raise MalformedNote(f"its YAML alias *{event.anchor} refers to itself")
                self._budget -= _node_size(node, self._sizes)
                if self._budget < 0:
                    raise MalformedNote(
                        f"its YAML aliases (*{event.anchor} …) repeat more than it holds: write the values out"
                    )
            return super().compose_node(parent, index)
        self._open.append(getattr(event, "anchor", None))
        try:
            return super().compose_node(parent, index)
        finally:
            self._open.pop()


def _node_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """Characters (and one per item) a composed node stands for, counting what aliases repeat."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_node_size(item, sizes) for item in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_node_size(key, sizes) + _node_size(value, sizes) for key, value in node.value)
    else:
        size = 1 + len(str(node.value))
    sizes[id(node)] = size
    return size


def decode_text(raw: bytes) -> str:
    """The file's text, or MalformedNote for binary junk."""
    if b"\x00" in raw:
        raise MalformedNote("it is not a text file (it holds NUL bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedNote(f"it is not UTF-8 text (byte {exc.start})") from None
    return text.removeprefix("\ufeff")


def parse_note(
    raw: bytes,
    relative_path: str,
    *,
    mtime: dt.datetime,
    namespace: str,
    owner: str,
    hand_id: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Note:
    """The note at ``relative_path`` (posix, inside the vault) whose bytes are ``raw``. ``namespace``
    and ``owner`` are the vault's defaults for notes that do not say; ``mtime`` dates a note that
    does not; ``hand_id`` is the id of the note if it has none (default: derived from its path).
    Its text, properties, id, namespace, owner and thread are held to what the engine accepts
    through MCP (``limits``). Raises MalformedNote with one sentence saying what is wrong."""
    frontmatter, body = split_frontmatter(decode_text(raw))
    front = frontmatter or {}
    hand_written = "id" not in front
    content = body.strip() if hand_written else _body(body)
    if not content.strip():
        raise MalformedNote("it has no text (an empty note is not a memory)")
    fields: dict[str, Any] = {"content": content, "metadata": _metadata(front)}
    for key, field in FIELD_KEYS.items():
        if key in front and front[key] is not None:
            fields[field] = date_of(key, front[key]) if key in _DATES else front[key]
    if "tags" in fields:
        fields["tags"] = parse_tags(fields["tags"])
    if "id" in fields:
        fields["id"] = str(fields["id"])
    else:
        fields["id"] = hand_id or note_id(relative_path)
    check_fields(fields, limits, FIELD_KEYS)
    fields.setdefault("namespace", namespace)
    fields.setdefault("owner", owner)
    fields.setdefault("created_at", fields.get("updated_at", mtime))
    fields.setdefault(
        "updated_at", max(fields["created_at"], mtime) if hand_written else fields["created_at"]
    )
    try:
        memory = Memory(**fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "frontmatter"
        key = next((k for k, f in FIELD_KEYS.items() if f == field), field)
        raise MalformedNote(f"its {key!r} property is invalid: {error['msg']}") from None
    return Note(
        memory=memory,
        title=title_of(memory, relative_path),
        aliases=aliases_of(front.get("aliases")),
        hand_written=hand_written,
    )


_CHECKS = {
    "id": validate_id,
    "superseded_by": validate_id,
    "namespace": validate_namespace,
    "owner": validate_principal,
    "thread": validate_thread,
}


def check_fields(fields: dict[str, Any], limits: Limits, names: Mapping[str, str]) -> None:
    """Hold a memory's fields read from a file to what the engine's tools accept (in place: ids
    come back in their canonical form). ``names`` maps the file's keys to fields, for the message."""
    key_of = {field: key for key, field in names.items()}
    try:
        validate_content(fields["content"], limits.content_bytes)
    except InvalidInputError as exc:
        raise MalformedNote(f"its text is too long: {_clause(exc)}") from None
    try:
        validate_metadata(fields.get("metadata"), limits.metadata_bytes)
    except InvalidInputError as exc:
        raise MalformedNote(f"its properties are too big: {_clause(exc)}") from None
    for field, check in _CHECKS.items():
        value = fields.get(field)
        if value is None:
            continue
        try:
            fields[field] = check(value if isinstance(value, str) else str(value))
        except InvalidInputError as exc:
            raise MalformedNote(
                f"its {key_of.get(field, field)!r} property is invalid: {_clause(exc)}"
            ) from None


def _clause(exc: Exception) -> str:
    """An engine message as a clause of a note's report (no closing full stop)."""
    return str(exc).strip().rstrip(".")


def render_note(memory: Memory, *, supersedes: str | None = None) -> str:
    """The text of ``memory``'s note: frontmatter, then its content (and one newline)."""
    front: dict[str, Any] = {
        "id": memory.id,
        "type": str(memory.type),
        "tags": list(memory.tags),
        "importance": memory.importance,
        "pinned": memory.pinned,
        "namespace": memory.namespace,
        "owner": memory.owner,
        "privacy_scope": str(memory.privacy_scope),
        "created": memory.created_at,
        "updated": memory.updated_at,
    }
    if memory.occurred_at != memory.created_at:
        front["occurred"] = memory.occurred_at
    if memory.thread is not None:
        front["thread"] = memory.thread
    if supersedes is not None:
        front["supersedes"] = supersedes
    if memory.superseded_by is not None:
        front["superseded_by"] = memory.superseded_by
    if memory.deleted_at is not None:
        front["deleted"] = memory.deleted_at
    clashing = {key: value for key, value in memory.metadata.items() if key in RESERVED}
    front.update((key, value) for key, value in memory.metadata.items() if key not in RESERVED)
    if clashing:
        front["metadata"] = clashing
    block = yaml.dump(front, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000)
    return f"---\n{block}---\n{memory.content}\n"


def content_hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def _body(body: str) -> str:
    """The content of a note the server wrote: the body without the one newline written after it."""
    return body[:-1] if body.endswith("\n") else body


def _metadata(front: Mapping[str, Any]) -> dict[str, Any]:
    out = {key: _json_value(value) for key, value in front.items() if key not in RESERVED}
    nested = front.get("metadata")
    if isinstance(nested, dict):
        out.update({str(key): _json_value(value) for key, value in nested.items()})
    elif nested is not None:
        out["metadata"] = _json_value(nested)
    return out


def _json_value(value: Any) -> Any:
    """A YAML value as JSON would hold it: dates become ISO text, keys strings, non-finite floats text."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): _json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_value(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def date_of(key: str, value: Any) -> Any:
    """A frontmatter date as an aware datetime: a YAML timestamp, ISO text, or a bare date (midnight
    UTC); a time without an offset is taken as UTC."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise MalformedNote(f"its {key!r} property is not a date: {value!r}") from None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    raise MalformedNote(f"its {key!r} property is not a date: {value!r}")


def parse_tags(value: Any) -> tuple[str, ...]:
    """Obsidian's forms: a list, or one text of tags separated by commas or spaces; a leading '#' dropped."""
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else value
    if not isinstance(items, list | tuple):
        raise MalformedNote(f"its 'tags' property is not a list of tags: {value!r}")
    tags = [str(item).strip().removeprefix("#") for item in items if item is not None and str(item).strip()]
    return tuple(dict.fromkeys(tag for tag in tags if tag))


def aliases_of(value: Any) -> tuple[str, ...]:
    """The ``aliases`` property's names (one string or a list of them)."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(str(item).strip() for item in items if item is not None and str(item).strip())


class _Dumper(yaml.SafeDumper):
    """Datetimes as ISO 8601 with a 'T' (what Obsidian's date-time properties read), unquoted; no
    anchors or aliases (two fields holding one object are written out twice)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_datetime(dumper: yaml.SafeDumper, value: dt.datetime) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:timestamp", value.isoformat())


_Dumper.add_representer(dt.datetime, _represent_datetime)
