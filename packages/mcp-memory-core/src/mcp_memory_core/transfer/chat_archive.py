"""A chat assistant's data export: its ``conversations.json`` (a JSON list of conversations), alone or
inside the ``.zip`` the assistant mails, read one conversation at a time and bounded. ChatGPT's and
Claude.ai's exports are both this shape; what a conversation holds is each reader's own business."""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, TextIO

from .. import json_stream
from ..errors import InvalidInputError
from .import_file import ENCODING, ImportFile

# conversations.json is read one conversation at a time; inside a zip it may not inflate past this (a
# zip bomb: a few megabytes that inflate to gigabytes), and no conversation may be longer than this (a
# conversation that never ends is not one).
MAX_CHAT_JSON_BYTES = 512 << 20
MAX_CONVERSATION_CHARS = 64 << 20
CONVERSATIONS = "conversations.json"


def not_a_list(export: str) -> str:
    """The sentence for a ``conversations.json`` that is not a list; ``export``: "A ChatGPT export"."""
    return f"{export}'s {CONVERSATIONS} holds a JSON list of conversations; this is not a list."


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


class Inflated(io.RawIOBase):
    """A zip member's bytes, counted as they are read: past ``limit``, InvalidInputError(``refusal``)
    (a zip's header may understate what its member inflates to)."""

    def __init__(self, raw: IO[bytes], *, limit: int, refusal: str) -> None:
        self.raw, self.limit, self.refusal, self.count = raw, limit, refusal, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.raw.read(len(buffer))
        self.count += len(data)
        if self.count > self.limit:
            raise InvalidInputError(self.refusal)
        memoryview(buffer)[: len(data)] = data
        return len(data)


@contextmanager
def conversations_text(path: Path) -> Iterator[TextIO]:
    """The text of ``conversations.json``: the file itself, or the member of the export's ``.zip``
    (refused, unread, when its header says it inflates past MAX_CHAT_JSON_BYTES; stopped there
    whatever the header says)."""
    if not zipfile.is_zipfile(path):
        with path.open(encoding=ENCODING) as handle:
            yield handle
        return
    with zipfile.ZipFile(path) as archive:
        found = [i for i in archive.infolist() if i.filename.rsplit("/", 1)[-1] == CONVERSATIONS]
        if not found:
            raise InvalidInputError(f"{path} is a zip without a {CONVERSATIONS}.")
        member = min(found, key=lambda info: len(info.filename))
        limit = MAX_CHAT_JSON_BYTES

        def refusal(size: str) -> str:
            return (
                f"{path}: its {CONVERSATIONS} inflates to {size}, more than the {_mib(limit)} an import "
                f"reads from a zip; unzip it and import the {CONVERSATIONS} file itself."
            )

        if member.file_size > limit:
            raise InvalidInputError(refusal(_mib(member.file_size)))
        with archive.open(member) as raw:
            inflated = Inflated(raw, limit=limit, refusal=refusal(f"more than {_mib(limit)}"))
            with io.TextIOWrapper(io.BufferedReader(inflated), encoding=ENCODING) as text:
                yield text


@contextmanager
def _told(path: Path, export: str) -> Iterator[None]:
    """What goes wrong reading an export, in one sentence naming the file; ``export``: "A ChatGPT export"."""
    try:
        yield
    except json_stream.NotAnArray:
        raise InvalidInputError(not_a_list(export)) from None
    except json_stream.ElementTooLarge as exc:
        raise InvalidInputError(
            f"{path}: conversation {exc.index} is larger than {MAX_CONVERSATION_CHARS:,} characters; "
            f"is this {export[0].lower()}{export[1:]}'s {CONVERSATIONS}?"
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path}: not JSON (line {exc.lineno}: {exc.msg}).") from None
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise InvalidInputError(f"{path}: the zip is damaged ({exc}); download the export again.") from None


def read_conversations(
    path: Path, build: Callable[[Iterable[Any]], ImportFile], *, export: str
) -> ImportFile:
    """``build`` (a reader's parser) over the conversations of ``path``, fed one at a time, with the
    lone surrogates replaced with U+FFFD counted (exports hold emoji cut in half)."""
    repaired = 0

    def conversations(text: TextIO) -> Iterator[Any]:
        nonlocal repaired
        for conversation, count in json_stream.iter_array(text, max_element_chars=MAX_CONVERSATION_CHARS):
            repaired += count
            yield conversation

    with _told(path, export), conversations_text(path) as text:
        parsed = build(conversations(text))
    return replace(parsed, repaired=repaired)


def first_conversation(path: Path, *, export: str) -> tuple[bool, Any]:
    """(whether the list has one, its first conversation): enough to tell whose export it is, reading
    one conversation, however long the file."""
    with _told(path, export), conversations_text(path) as text:
        for conversation, _ in json_stream.iter_array(text, max_element_chars=MAX_CONVERSATION_CHARS):
            return True, conversation
    return False, None
