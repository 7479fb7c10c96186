"""The token budget of MCP tool results (``MCP_MEMORY_MAX_RESULT_TOKENS``).

A client puts every tool result into its model's context, and clients refuse results above about
25,000 tokens (Claude Code's default). So every result this server sends is at most the budget, as
estimated here: the UTF-8 bytes of its JSON text divided by four (:func:`estimate_tokens`). The
estimate is exact about what it counts (the very text sent: the tools' text content is
:func:`to_json` of the result) and costs nothing; counting with the embedder's WordPiece tokenizer
instead took 15 ms for 100 compact search hits (50 ms verbose), several times a whole search, and
counts another model's tokens anyway. Four bytes a token is about right for English prose; MiniLM's
WordPiece, which splits ids into many pieces, counts compact results at about 2.1 bytes a token,
which the default (8,000, ~15,000 such tokens) leaves room for under 25,000; text in other scripts
takes 3 bytes a character, so it is not under-counted much either.

A result that would not fit is cut in order, and says so (:func:`fit_entries`): the entries that fit
come whole; the first that does not is shortened to the room left (``content_truncated: true``;
``get_memory`` returns it whole) when a useful part of it fits, or it is the first; the rest are named
by id in ``omitted`` (up to :data:`MAX_NAMED`), and ``hint`` says how many and how to get them.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

BYTES_PER_TOKEN = 4
MAX_NAMED = 20  # ids an ``omitted`` list names at most (the hint gives the full count)
MIN_SHOWN_BYTES = 400  # a shortened entry after the first shows at least this much content
BUDGET_SETTING = "MCP_MEMORY_MAX_RESULT_TOKENS"

# (kept entries, ids named in omitted, how many were left out) -> the result
Build = Callable[[list[Any], list[str], int], dict[str, Any]]


def to_json(data: Any) -> str:
    """The JSON text of a tool result, as sent to the client (one line: indentation costs tokens)."""
    return json.dumps(data, ensure_ascii=False)


def json_bytes(data: Any) -> int:
    return len(to_json(data).encode("utf-8", "surrogatepass"))  # a lone surrogate: 3 bytes, no crash


def estimate_tokens(text: str) -> int:
    """About four bytes of UTF-8 a token."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / BYTES_PER_TOKEN)


def budget_bytes(tokens: int) -> int:
    """The most bytes of JSON text whose estimate is at most ``tokens``."""
    return tokens * BYTES_PER_TOKEN


def _string_bytes(text: str) -> int:
    """Bytes of ``text`` inside a JSON string (escapes counted, the quotes not)."""
    return json_bytes(text) - 2


def shorten(entry: dict[str, Any], room: int) -> dict[str, Any] | None:
    """``entry`` with its content cut (keeping the start) so its JSON is at most ``room`` bytes,
    marked ``content_truncated: true``; its metadata too (``{}``, ``metadata_truncated: true``) when
    even an empty content does not make it fit. None when nothing would fit."""
    content = str(entry.get("content", ""))
    bare = {**entry, "content": "", "content_truncated": True}
    if json_bytes(bare) > room and entry.get("metadata"):
        bare = {**bare, "metadata": {}, "metadata_truncated": True}
    spare = room - json_bytes(bare)
    if spare < 0:
        return None
    low, high = 0, len(content)  # the longest prefix whose JSON string fits in ``spare`` bytes
    while low < high:
        middle = (low + high + 1) // 2
        if _string_bytes(content[:middle]) <= spare:
            low = middle
        else:
            high = middle - 1
    return {**bare, "content": content[:low]}


def fit_entries(
    entries: Sequence[Any],
    build: Build,
    budget: int,
    *,
    name: Callable[[Any], str] | None = None,
    shortenable: bool = True,
) -> dict[str, Any]:
    """``build(entries, [], 0)`` if it fits ``budget`` tokens; else as many entries as fit, in
    order, whole, then the next shortened if ``shortenable`` (see the module docstring), the ids
    (``name``) of up to :data:`MAX_NAMED` of the rest named and their count given to ``build``.

    The parts of the result outside the entries are never cut: ``build([], [], n)`` must fit (it
    does for every tool here once the budget is at its minimum, 1,000 tokens)."""
    limit = budget_bytes(budget)
    names = [name(entry) for entry in entries] if name is not None else []
    total = len(entries)
    before = [0, *itertools.accumulate(json_bytes(entry) for entry in entries)]  # bytes of the first k

    def size(whole: int, extra: Sequence[Any] = (), named: int = MAX_NAMED) -> int:
        """Bytes of the result holding the first ``whole`` entries, then ``extra``, the rest left
        out (``named`` of them named), measured on a stand-in: each of those entries as a 1-byte 0."""
        left = whole + len(extra)
        stand_in = build([0] * whole + list(extra), names[left : left + named], total - left)
        return json_bytes(stand_in) - whole + before[whole]

    def result(whole: int, extra: Sequence[Any] = (), named: int = MAX_NAMED) -> dict[str, Any]:
        left = whole + len(extra)
        return build([*entries[:whole], *extra], names[left : left + named], total - left)

    if size(total) <= limit:
        return result(total)
    # the most whole entries that fit with the rest left out (fewer entries: a smaller result)
    low, high = 0, total - 1
    while low < high:
        middle = (low + high + 1) // 2
        if size(middle) <= limit:
            low = middle
        else:
            high = middle - 1
    count = low
    while count > 0 and size(count) > limit:  # sizes grow with the count; this is a safety net
        count -= 1
    if size(count) > limit:  # not even the names of what was left out fit: name fewer
        named = MAX_NAMED
        while named > 0 and size(0, named=named) > limit:
            named -= 1
        return result(0, named=named)
    if shortenable and isinstance(entries[count], dict):
        placeholder = {"content_truncated": True}  # so build's notes are those of the final result
        room = limit - size(count, [placeholder]) + json_bytes(placeholder)
        short = shorten(entries[count], room)
        if short is not None and (count == 0 or _string_bytes(short["content"]) >= MIN_SHOWN_BYTES):
            return result(count, [short])
    return result(count)


def cut_note(
    *,
    left_out: int,
    named: int,
    shortened: bool,
    budget: int,
    noun: str,
    plural: str,
    how: str,
    by: str = "id",
) -> str:
    """The ``hint`` of a cut result: what was cut, why, and how to get it."""
    parts = []
    if left_out:
        what = noun if left_out == 1 else plural
        parts.append(
            f"{left_out} more {what} did not fit in the {budget:,}-token result budget ({BUDGET_SETTING})"
        )
        if named:
            listed = "" if named == left_out else f" (the first {named})"
            parts[-1] += f"; omitted names them by {by}{listed}"
        parts[-1] += f": {how}."
    if shortened:
        parts.append(
            f"The {noun} marked content_truncated was shortened to fit: get_memory returns it whole."
        )
    return " ".join(parts)


def listing(
    head: dict[str, Any],
    key: str,
    *,
    budget: int,
    noun: str,
    plural: str,
    how: str,
    by: str = "id",
    count: str | None = None,
) -> Build:
    """The :data:`Build` of a result that is ``head`` with its list of entries under ``key`` (and
    their number under ``count``): a cut one adds ``omitted`` and ``hint`` (:func:`cut_note`)."""

    def build(kept: list[Any], named: list[str], left_out: int) -> dict[str, Any]:
        data = {**head, key: kept}
        if count is not None:
            data[count] = len(kept)
        shortened = any(isinstance(entry, dict) and entry.get("content_truncated") for entry in kept)
        if left_out or shortened:
            if named:
                data["omitted"] = named
            data["hint"] = cut_note(
                left_out=left_out,
                named=len(named),
                shortened=shortened,
                budget=budget,
                noun=noun,
                plural=plural,
                how=how,
                by=by,
            )
        return data

    return build
