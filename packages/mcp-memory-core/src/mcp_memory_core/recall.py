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
    """What fits: the memories packed, the text to inject, and the tokens it uses."""

    hits: list[SearchHit]
    text: str
    tokens: int
    budget: int


def pack(hits: Sequence[SearchHit], budget: int, count_tokens: Callable[[str], int], now: datetime) -> Recall:
    """Greedily take the best-ranked memories whose lines fit the budget (a line that does not fit is
    skipped, a shorter one after it may still fit). The header counts too."""
    used = count_tokens(HEADER)
    if used > budget:
        return Recall([], "", 0, budget)
    lines, taken = [HEADER], []
    for hit in hits:
        line = render_line(hit.memory, now)
        cost = count_tokens(line) + 1  # the newline
        if used + cost <= budget:
            lines.append(line)
            taken.append(hit)
            used += cost
    if not taken:
        return Recall([], "", 0, budget)
    return Recall(taken, "\n".join(lines), used, budget)
