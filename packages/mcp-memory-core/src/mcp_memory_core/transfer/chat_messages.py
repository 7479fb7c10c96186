"""What a chat assistant's export becomes, whoever's export it is: one memory per message kept (its
conversation's thread, the message's time, where it came from in its metadata), chit-chat left out and
counted, each conversation's messages kept in the order they were sent, and a conversation listed
twice imported once. ChatGPT's and Claude.ai's readers find the messages; this module makes them
memories."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import InvalidInputError
from ..junk import is_chit_chat
from ..models import Memory, MemoryType, derived_id
from ..validation import Limits, validate_namespace
from .import_file import ImportFile, clip


def titled(index: int, conversation: Any, key: str) -> tuple[Mapping[str, Any], str, str]:
    """An export's conversation ``index`` as an object, its title (its ``key``, else "Untitled") and
    the words that name it in an error, or InvalidInputError when it is not an object."""
    if not isinstance(conversation, Mapping):
        raise InvalidInputError(
            f"conversation {index}: expected an object, got {type(conversation).__name__}."
        )
    title = conversation.get(key)
    title = title if isinstance(title, str) and title.strip() else "Untitled"
    return conversation, title, f"conversation {index} ({title!r})"


@dataclass(frozen=True)
class ChatConversation:
    """A conversation's own fields: its id (part of every message's memory id), its name (kept as
    the memory's ``conversation``), its thread, and how errors and origins name it (``where``)."""

    id: str
    name: str
    thread: str
    where: str


@dataclass
class ChatReading:
    """The memories read so far from the export of ``source`` (``chatgpt``, ``claude``: the memories'
    id prefix, ``source`` and tag), by id, where each came from, and the (conversation id, message id)
    pairs left out as chit-chat (a conversation listed twice counts once)."""

    source: str
    namespace: str
    roles: frozenset[str]
    memory_type: MemoryType
    limits: Limits
    memories: dict[str, Memory] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    chit_chat: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.namespace = validate_namespace(self.namespace)

    def is_chit_chat(self, conversation: ChatConversation, message_id: str, text: str) -> bool:
        """Whether ``text`` is chit-chat (:func:`~..junk.is_chit_chat`): then counted, and not kept."""
        if not is_chit_chat(text):
            return False
        self.chit_chat.add((conversation.id, message_id))
        return True

    def memory(
        self,
        conversation: ChatConversation,
        message_id: str,
        role: str,
        text: str,
        created: datetime,
        **metadata: Any,
    ) -> Memory:
        """The memory of one message: its text (cut to the content limit, which its metadata then
        says), dated when it was sent; ``metadata``: what the reader adds to the common fields."""
        content, clipped = clip(text, self.limits.content_bytes)
        return Memory(
            id=derived_id(self.source, self.namespace, conversation.id, message_id),
            content=content,
            metadata={
                "source": self.source,
                "conversation": conversation.name,
                "conversation_id": conversation.id,
                "message_id": message_id,
                "role": role,
                **metadata,
                **clipped,
            },
            created_at=created,
            updated_at=created,
            occurred_at=created,
            thread=conversation.thread,
            namespace=self.namespace,
            type=self.memory_type,
            tags=(self.source,),
        )

    def keep(self, conversation: ChatConversation, found: Iterable[tuple[Any, str, Memory]]) -> None:
        """A conversation's memories, each with its sort key (when it was sent first) and message id:
        kept in that order, each once."""
        for _, message_id, memory in sorted(found, key=lambda item: item[0]):
            if memory.id not in self.memories:
                self.memories[memory.id] = memory
                self.origins[memory.id] = f"{conversation.where}, message {message_id}"

    def result(self) -> ImportFile:
        return ImportFile(list(self.memories.values()), self.origins, chit_chat=len(self.chit_chat))
