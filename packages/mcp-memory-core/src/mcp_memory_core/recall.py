"""Recall into a prompt (seed 002's memory_injection): the best memories that fit a token budget,
counted with the embedding model's own tokenizer when it has one."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from .models import Memory, SearchHit

HEADER = "Relevant memories (most relevant first):"


def approximate_tokens(text: str) -> int:
    """For embedders without a tokenizer: about four characters a token."""
    return max(1, math.ceil(len(text) / 4))


def humanize_age(created: datetime, now: datetime) -> str:
    seconds = max((now - created).total_seconds(), 0.0)
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"


def render_line(memory: Memory, now: datetime) -> str:
    tags = f" #{' #'.join(memory.tags)}" if memory.tags else ""
    return f"- [{memory.type}, {humanize_age(memory.created_at, now)}{tags}] {memory.content}"


@dataclass(frozen=True)
class Recall:
    """What fits: the memories packed, the text to inject, and its tokens (the count of ``text``
    itself, never above ``budget``). When nothing fits, ``text`` is empty and ``note`` says why,
    itself within the budget (empty when even the note does not fit)."""

    hits: list[SearchHit]
    text: str
    tokens: int
    budget: int
    note: str = ""

    @property
    def prompt(self) -> str:
        """What memory_injection returns: the memories, or else the note."""
        return self.text or self.note


def pack(hits: Sequence[SearchHit], budget: int, count_tokens: Callable[[str], int], now: datetime) -> Recall:
    """The best-ranked memories whose lines fit ``budget`` tokens, under a header.

    Lines are taken greedily, best first, each costing its own count plus a newline's (a line that
    does not fit is skipped; a shorter one after it may still fit). That sum is an estimate: what
    must fit is the final text, and a tokenizer may count a joined text differently from its parts.
    So the joined text is counted as a whole, and the last line taken is dropped until it fits."""
    newline = count_tokens("\n")
    used = count_tokens(HEADER)
    lines: list[str] = []
    taken: list[SearchHit] = []
    if used <= budget:
        for hit in hits:
            line = render_line(hit.memory, now)
            cost = count_tokens(line) + newline
            if used + cost <= budget:
                lines.append(line)
                taken.append(hit)
                used += cost
    while taken:
        text = "\n".join([HEADER, *lines])
        tokens = count_tokens(text)
        if tokens <= budget:
            return Recall(taken, text, tokens, budget)
        lines.pop()
        taken.pop()
    note = (
        f"No relevant memory fits in {budget} tokens: ask for a larger token_budget."
        if hits
        else "No stored memory is relevant to this query."
    )
    return Recall([], "", 0, budget, note if count_tokens(note) <= budget else "")
