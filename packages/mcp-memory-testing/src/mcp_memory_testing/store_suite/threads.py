"""Conversation threads (``Memory.thread``): ``thread_neighbours``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from mcp_memory_core import Memory, MemoryFilter, MemoryType, Store

from .base import StoreSuite
from .data import BASE_TIME, memory


def _reference_neighbours(
    items: Sequence[Memory], where: MemoryFilter
) -> dict[str, tuple[str | None, str | None]]:
    """``thread_neighbours`` of every item, by the reference semantics."""
    matching = sorted(
        (m for m in items if where.matches(m) and m.thread is not None),
        key=lambda m: (m.occurred_at, m.created_at, m.id),
    )
    out: dict[str, tuple[str | None, str | None]] = {}
    for thread in {m.thread for m in matching}:
        order = [m.id for m in matching if m.thread == thread]
        for i, memory_id in enumerate(order):
            out[memory_id] = (order[i - 1] if i else None, order[i + 1] if i + 1 < len(order) else None)
    return out


class ThreadTests(StoreSuite):
    """``thread_neighbours``: the order of a conversation thread, under filters."""

    def test_thread_neighbours(self, opened: Store) -> None:
        """Troubleshooting: ``thread_neighbours`` orders a thread by ``(occurred_at, created_at, id)``
        (a conversation imported later keeps the order it was held in; memories of one moment keep
        the order they were stored in), counts only memories matching ``where`` (a deleted turn, a
        superseded version or another namespace is skipped over, not returned), and leaves out ids
        without a thread or outside ``where``. SQL: ``LAG``/``LEAD`` over ``PARTITION BY thread``."""
        said = BASE_TIME - timedelta(days=30)
        items = [
            memory(
                9, content="turn 3", thread="chat", occurred_at=said + timedelta(minutes=2)
            ),  # stored last
            memory(1, content="turn 1", thread="chat", occurred_at=said),  # same moment: stored first
            memory(2, content="turn 2", thread="chat", occurred_at=said),
            memory(3, content="deleted turn", thread="chat", occurred_at=said, deleted_at=BASE_TIME),
            memory(4, content="elsewhere", thread="chat", occurred_at=said, namespace="other"),
            memory(6, content="turn 4", thread="chat", occurred_at=said + timedelta(minutes=3)),
            memory(7, content="alone", thread="other chat"),
            memory(8, content="no thread"),
        ]
        self.add(opened, items)
        turn3, turn1, turn2, _deleted, elsewhere, turn4, alone, _unthreaded = (m.id for m in items)
        got = opened.thread_neighbours([m.id for m in items] + ["no-such-id"], MemoryFilter())
        assert got == {
            turn1: (None, turn2),
            turn2: (turn1, turn3),
            turn3: (turn2, turn4),
            turn4: (turn3, None),
            alone: (None, None),
        }
        both = MemoryFilter(namespace=None, namespaces=frozenset({"default", "other"}))
        assert opened.thread_neighbours([turn2, elsewhere], both) == {
            turn2: (turn1, elsewhere),  # same moment, stored after turn 2
            elsewhere: (turn2, turn3),
        }
        assert opened.thread_neighbours([], MemoryFilter()) == {}
        # Against the reference semantics, under filters: the filter corpus has four threads.
        corpus, _ = self._filter_corpus(opened)
        for where in (
            MemoryFilter(namespace="default"),
            MemoryFilter(namespace=None, include_superseded=False),
            MemoryFilter(namespace=None, types=frozenset({MemoryType.EPISODIC, MemoryType.SEMANTIC})),
        ):
            expected = _reference_neighbours(corpus, where)
            assert opened.thread_neighbours([m.id for m in corpus], where) == expected, where
