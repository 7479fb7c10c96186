"""A search query's words, as every store's keyword search reads them: runs of letters, digits or
underscores (any script), lowercased, each once, in order. Nothing else of the text reaches a query
language, so no user text is ever query syntax (FTS5's ``AND``/``NEAR``, tsquery's ``&``/``|``)."""

from __future__ import annotations

import re

MAX_QUERY_WORDS = 64  # a keyword query ORs at most this many words

_WORD = re.compile(r"\w+", re.UNICODE)


def query_words(text: str) -> list[str]:
    """The distinct lowercased words of ``text``, in order of first appearance."""
    return list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
