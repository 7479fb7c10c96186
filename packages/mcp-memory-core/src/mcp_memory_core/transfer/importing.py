"""Importing what a reader returned through the engine, its refusals told by line or conversation."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import surrogates
from ..errors import ImportRecordError, InvalidInputError
from ..models import (
    USER_NAMESPACE,
    ImportOutcome,
    Memory,
)
from ..scope import Scope

if TYPE_CHECKING:
    from ..engine import MemoryEngine
from .chatgpt import parse_chatgpt_conversations
from .import_file import ImportFile
from .knowledge_graph import parse_knowledge_graph


@contextmanager
def _located(memories: Iterable[Memory]) -> Iterator[None]:
    """An engine refusal of one memory of an :class:`ImportFile`, told by its line or conversation."""
    try:
        yield
    except ImportRecordError as exc:
        if isinstance(memories, ImportFile):
            raise InvalidInputError(f"{memories.where(exc.memory_id)}: {exc.reason}") from None
        raise


def check_records(engine: MemoryEngine, memories: Sequence[Memory], *, scope: Scope | None = None) -> None:
    """Refuse, naming its line (for an :class:`ImportFile`), the first memory ``import_records`` would
    refuse; nothing is written."""
    with _located(memories):
        engine.check_import(memories, scope=scope)


def import_records(
    engine: MemoryEngine,
    memories: Iterable[Memory],
    *,
    batch_size: int = 64,
    on_batch: Callable[[int], None] | None = None,
    scope: Scope | None = None,
) -> ImportOutcome:
    """Insert whole memories as they are (ids, namespaces, chains, tombstones), embedding each one
    (superseded versions too, so their wording still finds the head) unless the file carries its
    vectors from the same model (then they are reused). Ids already present are
    skipped: importing the same records twice inserts nothing the second time. The engine checks
    every memory before it writes any (see ``MemoryEngine.import_memories``); given an
    :class:`ImportFile`, its refusal names the line or conversation, and the outcome counts the
    lone surrogates the reader repaired."""
    carried = memories.vectors if isinstance(memories, ImportFile) else None
    with _located(memories):
        outcome = engine.import_memories(
            memories, batch_size=batch_size, on_batch=on_batch, scope=scope, vectors=carried
        )
    if isinstance(memories, ImportFile) and (memories.repaired or memories.chit_chat):
        return replace(outcome, repaired=memories.repaired, chit_chat=memories.chit_chat)
    return outcome


def refused_records(memories: Sequence[Memory], outcome: ImportOutcome) -> list[dict[str, str]]:
    """Each memory the import refused (``outcome.refused``), in file order: its id, where it came
    from (``"line 7"`` for an :class:`ImportFile`) and why."""
    return _listed(memories, outcome.refused, "reason")


def redacted_records(memories: Sequence[Memory], outcome: ImportOutcome) -> list[dict[str, str]]:
    """Each memory the import wrote with its secrets redacted (``outcome.redacted``), in file order:
    its id, where it came from and what was redacted where."""
    return _listed(memories, outcome.redacted, "what")


def _listed(memories: Sequence[Memory], said: Mapping[str, str], key: str) -> list[dict[str, str]]:
    where = memories.where if isinstance(memories, ImportFile) else (lambda memory_id: f"memory {memory_id}")
    return [{"id": m.id, "where": where(m.id), key: said[m.id]} for m in memories if m.id in said]


def import_chatgpt(
    engine: MemoryEngine,
    conversations: Any,
    *,
    namespace: str | None = None,
    include_assistant: bool = False,
    batch_size: int = 64,
    on_batch: Callable[[int], None] | None = None,
) -> ImportOutcome:
    """Parse a ChatGPT export (the parsed ``conversations.json``; lone surrogates are repaired and
    counted, chit-chat left out and counted) and import it into ``namespace`` (default: ``user``,
    :func:`.files.default_import_namespace`)."""
    conversations, repaired = surrogates.repair(conversations)
    memories = parse_chatgpt_conversations(
        conversations,
        namespace=namespace or USER_NAMESPACE,
        include_assistant=include_assistant,
        limits=engine.limits,
    )
    return import_records(
        engine, replace(memories, repaired=repaired), batch_size=batch_size, on_batch=on_batch
    )


def import_knowledge_graph(
    engine: MemoryEngine,
    lines: Iterable[str],
    *,
    namespace: str | None = None,
    batch_size: int = 64,
    on_batch: Callable[[int], None] | None = None,
) -> ImportOutcome:
    """Parse an MCP knowledge graph and import it into ``namespace`` (default: the engine's)."""
    memories = parse_knowledge_graph(
        lines, namespace=namespace or engine.namespace, now=engine.clock(), limits=engine.limits
    )
    return import_records(engine, memories, batch_size=batch_size, on_batch=on_batch)
