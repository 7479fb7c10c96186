"""Time to live by memory type (seed 002): working memories expire after 48 hours, episodic after 90
days, semantic and procedural never. Pinned memories never expire. An expired memory is hidden from
search and lists at once; a sweep then tombstones it with ``deleted_at`` = the moment it expired."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .errors import InvalidInputError
from .models import Memory, MemoryType

DEFAULT_TTL: dict[MemoryType, timedelta | None] = {
    MemoryType.WORKING: timedelta(hours=48),
    MemoryType.EPISODIC: timedelta(days=90),
    MemoryType.SEMANTIC: None,
    MemoryType.PROCEDURAL: None,
}

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)?\s*$", re.IGNORECASE)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_NEVER = {"never", "none", "off", "0", ""}
# Expiry dates are datetimes (year 9999 at most): a longer lifetime than this is "never".
MAX_LIFETIME = timedelta(days=1000 * 365)


def parse_duration(text: str | float | int | timedelta | None) -> timedelta | None:
    """``48h``, ``90d``, ``2w``, ``30m``, ``3600`` (seconds) or ``never`` (None); at most 1000 years."""
    if text is None or isinstance(text, timedelta):
        return text
    if isinstance(text, int | float):
        seconds = math.inf if text > MAX_LIFETIME.total_seconds() else float(text)
    elif text.strip().lower() in _NEVER:
        return None
    else:
        match = _DURATION.match(text)
        if match is None:
            raise InvalidInputError(
                f"{_shown(text)} is not a duration: use e.g. 48h, 90d, 2w, 30m, 3600 or never."
            )
        seconds = float(match.group(1)) * _UNITS[(match.group(2) or "s").lower()]
    if not seconds > 0:
        return None
    if seconds > MAX_LIFETIME.total_seconds():  # also inf, and 10**30 days
        raise InvalidInputError(
            f"{_shown(text)} is longer than 1000 years: use never for a lifetime without end."
        )
    return timedelta(seconds=seconds)


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:36]}…{text[-3:]}"


@dataclass(frozen=True)
class TTLPolicy:
    """How long each memory type lives. ``None`` = forever."""

    ttl: Mapping[MemoryType, timedelta | None] = field(default_factory=lambda: dict(DEFAULT_TTL))

    def expires_at(self, memory: Memory) -> datetime | None:
        lifetime = self.ttl.get(memory.type)
        if memory.pinned or lifetime is None:
            return None
        return memory.created_at + lifetime

    def is_expired(self, memory: Memory, now: datetime) -> bool:
        expiry = self.expires_at(memory)
        return expiry is not None and expiry <= now

    def expiring_types(self) -> dict[MemoryType, timedelta]:
        return {t: lifetime for t, lifetime in self.ttl.items() if lifetime is not None}
