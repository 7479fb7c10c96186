"""Who said a memory, and whether it answers the memory before it in its thread.

A thread holds a conversation's turns, but also whatever else one MCP session stored: an agent
saving five unrelated facts in a row puts them in one thread too. Only a turn by another speaker is
a reply ("Caroline: yes, the kids loved it" after "Mel: did you go camping?"), so search lets a
memory borrow from its previous turn only then. The speaker is the memory's leading label when it
reads as a name ("Caroline: …", "Dr. Okafor: …", "assistant: …"; see :func:`.passages.leading_label`)
or its ``speaker`` / ``role`` metadata (what imports of chat exports carry). A label that names a
topic ("Health checks: …", "The freshness SLO: …", "Decision: …") is not a speaker: facts an agent
files under headings are not a conversation, and two such facts in a row are not a question and its
answer.
"""

from __future__ import annotations

from functools import lru_cache

from .models import Memory
from .passages import leading_label, sentence_count

MAX_QUESTION_SENTENCES = 4  # a longer turn that ends by asking has said something first
MAX_NAME_WORDS = 3  # "Mary Ann Evans"; a longer label is a heading
# Labels that name who speaks whatever their case; and words that open or are a heading, not a name.
ROLES = frozenset({"user", "assistant", "human", "ai", "system", "bot", "me", "you"})
_HEADING_WORDS = (
    "a an the this that these those my our your their its his her "
    "note notes todo fyi update important decision reminder summary context tip warning caveat status "
    "goal idea question answer bug fix issue problem solution reason example rule preference fact task "
    "action outcome result q why how what when where who"
)
NOT_NAMES = frozenset(_HEADING_WORDS.split())

# The thread the server gives what one MCP session stores when the client names none.
SESSION_THREAD_PREFIX = "mcp-session:"


def session_thread_id(key: str) -> str:
    """The server's default thread for a session keyed by ``key`` (a uuid)."""
    return f"{SESSION_THREAD_PREFIX}{key}"


def in_conversation(memory: Memory) -> bool:
    """True when ``memory``'s thread is a conversation: a thread the client named, or a turn with a
    speaker. Facts that one MCP session stored in a row share the session's thread without being
    one conversation, so nothing that reads a thread as a conversation (its prior in ranking) should
    group them."""
    thread = memory.thread
    if thread is None:
        return False
    return not thread.startswith(SESSION_THREAD_PREFIX) or speaker_of(memory) is not None


def speaker_of(memory: Memory) -> str | None:
    label = _label_speaker(memory.content)
    if label is not None:
        return label
    for key in ("speaker", "role"):
        value = memory.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip().casefold()
    return None


def asks(memory: Memory) -> bool:
    """True when the turn asks something: its text ends with a question mark ("Mel: did you go
    camping?", "That sounds fun! Where did you go?"). A reply to it is about what it asked."""
    return memory.content.rstrip().endswith("?")


def mostly_asks(memory: Memory) -> bool:
    """True for a turn of a conversation (it has a speaker) that ends by asking and says little else
    (at most ``MAX_QUESTION_SENTENCES`` sentences): "Gina: When are you opening the studio?" names
    what a question about the opening is about without answering it."""
    return (
        speaker_of(memory) is not None
        and asks(memory)
        and sentence_count(memory.content) <= MAX_QUESTION_SENTENCES
    )


def is_reply(memory: Memory, previous: Memory) -> bool:
    """True when ``memory`` answers ``previous``: both have a speaker, and they differ."""
    mine, theirs = speaker_of(memory), speaker_of(previous)
    return mine is not None and theirs is not None and mine != theirs


@lru_cache(maxsize=4096)
def _label_speaker(content: str) -> str | None:
    """The casefolded leading label when it reads as a name: one regex match per distinct text (a
    search asks for each of its ~60 candidates two or three times: expansion, ranker, relevance floor)."""
    label = leading_label(content)
    return label.casefold() if label is not None and names_someone(label) else None


def names_someone(label: str) -> bool:
    """True for a label that reads as who speaks: a role ("assistant"), or one to three capitalised
    words without a digit that open with no article and are no common heading ("Caroline", "Dr.
    Okafor"); False for a topic ("Health checks", "The freshness SLO", "Decision", "Meeting notes
    2024-03-12")."""
    words = label.split()
    if label.casefold() in ROLES:
        return True
    return (
        0 < len(words) <= MAX_NAME_WORDS
        and all(word[:1].isupper() for word in words)
        and not any(ch.isdigit() for ch in label)
        and words[0].casefold().rstrip(".") not in NOT_NAMES
    )
