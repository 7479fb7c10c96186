"""What every reader returns (:class:`ImportFile`) and the text helpers readers share."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models import (
    Memory,
)
from ..protocols import StoredVectors
from ..validation import (
    utf8_size,
)

TRUNCATION_MARK = " …[truncated]"
BOM = "\ufeff"
# A file's text encoding: UTF-8, with or without a byte order mark (Windows editors write one).
ENCODING = "utf-8-sig"


@dataclass(frozen=True)
class ImportFile(Sequence[Memory]):
    """The memories read from one file, in order, with where each came from (``origins``: memory id →
    ``"line 7"`` or ``"conversation 3 ('Trip'), message m2"``), how many lone surrogates the
    reader replaced with U+FFFD (``repaired``), the vectors the file carried (``vectors``), and how
    many turns of a chat export it left out as chit-chat (``chit_chat``, :mod:`...junk`)."""

    memories: list[Memory]
    origins: dict[str, str] = field(default_factory=dict)
    repaired: int = 0
    vectors: StoredVectors | None = None  # an export's own vectors, when it carries them
    chit_chat: int = 0

    def __len__(self) -> int:
        return len(self.memories)

    def __iter__(self) -> Iterator[Memory]:
        return iter(self.memories)

    def __getitem__(self, index: Any) -> Any:
        return self.memories[index]

    def where(self, memory_id: str) -> str:
        return self.origins.get(memory_id, f"memory {memory_id}")


def numbered_lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines; a byte order mark before the first is dropped."""
    for number, line in enumerate(lines, start=1):
        if number == 1:
            line = line.removeprefix(BOM)
        if line.strip():
            yield number, line


def clip(text: str, max_bytes: int) -> tuple[str, dict[str, Any]]:
    """Content within the engine's byte limit; a longer text is cut (on a character boundary) and says
    so in its metadata."""
    if utf8_size(text) <= max_bytes:
        return text, {}
    room = max(0, max_bytes - utf8_size(TRUNCATION_MARK))
    cut = text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore") + TRUNCATION_MARK
    return cut, {"truncated": True, "original_chars": len(text)}


def tag(value: str) -> tuple[str, ...]:
    tag = " ".join(value.split())[:64]
    return (tag,) if tag else ()
