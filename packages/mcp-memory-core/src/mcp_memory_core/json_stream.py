"""A JSON array read one element at a time, so a file of hundreds of megabytes (a ChatGPT export's
``conversations.json``) never has to be in memory whole: only the element being decoded is.

Each element is decoded by the standard library's ``json`` (with lone surrogates repaired,
:mod:`.surrogates`); when the text read so far ends inside it, more is read and it is decoded again
(reads double, so a large element costs a few passes, not one per chunk). Malformed JSON raises
``json.JSONDecodeError`` with the line number in the whole text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TextIO

from . import surrogates

CHUNK = 1 << 20  # characters read at a time
_SPACE = re.compile(r"[ \t\n\r]*")
# A decoding error this close to the end of the text read so far may be the text ending early (a
# literal, a number or an escape cut in two); "Unterminated string" always may.
_NEAR_END = 32


class NotAnArray(ValueError):
    """The text is not a JSON array."""


class ElementTooLarge(ValueError):
    """One element is longer than the limit: ``index`` counts from 1."""

    def __init__(self, index: int) -> None:
        super().__init__(f"element {index} is too large")
        self.index = index


class _Text:
    """The text read so far that is still needed, and where decoding stands in it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.text = ""
        self.pos = 0
        self.line = 1  # the line self.text starts on
        self.ended = False

    def more(self, size: int) -> bool:
        """Read up to ``size`` more characters, dropping what was decoded; False at the end."""
        chunk = self.stream.read(size)
        if not chunk:
            self.ended = True
            return False
        self.line += self.text.count("\n", 0, self.pos)
        self.text = self.text[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end), not consumed."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]  # always matches
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self.more(CHUNK):
                return ""

    def error(self, message: str) -> json.JSONDecodeError:
        exc = json.JSONDecodeError(message, self.text, self.pos)
        exc.lineno += self.line - 1
        return exc

    def value(self, index: int, max_chars: int) -> tuple[Any, int]:
        """Decode the value at the current position: (value, lone surrogates repaired)."""
        size = CHUNK
        while True:
            try:
                value, end, repaired = surrogates.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(self.text) - _NEAR_END or exc.msg.startswith("Unterminated string")
                if not cut or self.ended:
                    exc.lineno += self.line - 1
                    raise
            else:
                if end - self.pos > max_chars:
                    raise ElementTooLarge(index)
                if end < len(self.text) or self.ended:  # a number at the very end may go on
                    self.pos = end
                    return value, repaired
            if len(self.text) - self.pos > max_chars:
                raise ElementTooLarge(index)
            size = max(size, len(self.text) - self.pos)  # double what is held: few passes per element
            self.more(size)


def iter_array(stream: TextIO, *, max_element_chars: int) -> Iterator[tuple[Any, int]]:
    """Each element of the JSON array ``stream`` holds, with how many lone surrogates were repaired
    in it. Raises NotAnArray, ElementTooLarge (an element longer than ``max_element_chars``) or
    ``json.JSONDecodeError``."""
    text = _Text(stream)
    first = text.peek()
    if first != "[":
        raise NotAnArray("not a JSON array") if first else text.error("Expecting value")
    text.pos += 1
    index = 0
    if text.peek() == "]":
        text.pos += 1
    else:
        while True:
            index += 1
            text.peek()
            yield text.value(index, max_element_chars)
            after = text.peek()
            if after not in (",", "]"):
                raise text.error("Expecting ',' delimiter")
            text.pos += 1
            if after == "]":
                break
    if text.peek():
        raise text.error("Extra data")
