"""The orders a list of memories can come in, and the key each one sorts by (what a store orders
by and what a page's cursor holds): every order ends with ``(created_at, id)``, so it is total."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal, get_args

from .errors import InvalidInputError

if TYPE_CHECKING:
    from .models import Memory

ListOrder = Literal["newest", "oldest", "importance"]
LIST_ORDERS: tuple[str, ...] = get_args(ListOrder)
NEWEST: ListOrder = "newest"

SortKey = tuple[datetime, str] | tuple[float, datetime, str]
"""``(created_at, id)``, or for ``importance`` ``(importance, created_at, id)``."""


def sort_key(memory: Memory, order: ListOrder) -> SortKey:
    if order == "importance":
        return (memory.importance, memory.created_at, memory.id)
    return (memory.created_at, memory.id)


def descending(order: ListOrder) -> bool:
    """Newest and most important first; oldest: ascending."""
    return order != "oldest"


def validate_order(order: str) -> ListOrder:
    if order not in LIST_ORDERS:
        raise InvalidInputError(f"order must be one of {', '.join(LIST_ORDERS)}; got {order!r}.")
    return order  # type: ignore[return-value]
