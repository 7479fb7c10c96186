"""Lone UTF-16 surrogates in imported JSON: replaced with U+FFFD, and counted.

JSON may escape half of a surrogate pair alone (``"\\ud83d"``: an emoji cut in two, common in chat
exports). Python's ``json`` accepts it, but the string cannot be encoded as UTF-8, so SQLite, the
embedder's tokenizer and uuid5 ids would fail on it halfway through an import. Every import reader
decodes its JSON through here, so such a character becomes U+FFFD and the import can say how many
it repaired.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A high surrogate escape not followed by a low one, or a low one not preceded by a high one. A
# decoded string holds a lone surrogate only if its JSON text has one of these (UTF-8 text itself
# cannot encode a surrogate), so the common case, no match, costs one regex scan.
_LONE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"
_DECODER = json.JSONDecoder()


def repair(value: Any) -> tuple[Any, int]:
    """``value`` (decoded JSON) with every surrogate in its strings and keys replaced by U+FFFD, and
    how many were replaced."""
    if isinstance(value, str):
        return _SURROGATE.subn(REPLACEMENT, value)
    if isinstance(value, list):
        items = [repair(item) for item in value]
        return [item for item, _ in items], sum(count for _, count in items)
    if isinstance(value, dict):
        pairs = [(repair(key), repair(item)) for key, item in value.items()]
        return (
            {key: item for (key, _), (item, _) in pairs},
            sum(k + v for (_, k), (_, v) in pairs),
        )
    return value, 0


def loads(text: str) -> tuple[Any, int]:
    """``json.loads(text)`` with lone surrogates repaired, and how many were repaired."""
    data = json.loads(text)
    if _LONE_ESCAPE.search(text) is None:
        return data, 0
    return repair(data)


def raw_decode(text: str, start: int) -> tuple[Any, int, int]:
    """The JSON value at ``text[start:]`` (``json.JSONDecoder.raw_decode``), where it ends, and how
    many lone surrogates were repaired in it."""
    data, end = _DECODER.raw_decode(text, start)
    if _LONE_ESCAPE.search(text, start, end) is None:
        return data, end, 0
    data, repaired = repair(data)
    return data, end, repaired


def repair_json(text: str) -> tuple[str, int]:
    """JSON text without lone surrogate escapes (re-serialized only when it had some), and how many
    were repaired. Text that is not JSON comes back unchanged, for the caller's parser to report."""
    if _LONE_ESCAPE.search(text) is None:
        return text, 0
    try:
        data, repaired = loads(text)
    except json.JSONDecodeError:
        return text, 0
    return json.dumps(data, ensure_ascii=False), repaired
