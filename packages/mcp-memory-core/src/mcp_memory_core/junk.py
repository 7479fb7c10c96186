"""Chit-chat: the turns of a conversation that hold nothing worth remembering ("hi", "thanks!").

An importer of chat histories leaves them out (and says how many), so they are never recalled
into a session. The rule is conservative, a turn is chit-chat only when

- it holds no letter and no digit (``"..."``, ``"?"``, ``"👍"``, nothing); or
- it holds no digit and every word is a greeting, a thanks, an acknowledgement or a filler
  (:data:`CHIT_CHAT_WORDS`, laughter such as ``hahaha``; letters repeated for effect count once:
  ``heyyy`` is ``hey``), e.g. ``"Thank you so much!"``, ``"ok, got it"``, ``"yes please"``,
  ``"one more thing"``; or
- it is one short lowercase word and nothing else (``"whatever"``; at most
  :data:`MAX_ONE_WORD_CHARS` letters): a reply that means nothing without the question it answered.

Anything with a digit (``"ok 42"``), a capitalised word that is not one of those words (a name:
``"Maya"``, ``"thanks Maya"``), or a symbol inside a word (``user@example.com``, ``src/main.py``) is
kept, and so is every turn with a word outside the list (``"I'm vegetarian"``).
"""

from __future__ import annotations

import re

# Greetings, thanks, acknowledgements and the small words that glue them ("thank you so much").
_GROUPS = (
    "hi hello hey heya hiya yo howdy greetings morning afternoon evening night good day there",
    "bye goodbye cya later see soon take care cheers",
    "thanks thank thx ty tysm tyvm thanx appreciate appreciated you so much very a lot for the help",
    "you're welcome glad happy to",
    "it that that's this is was all again really truly",
    "ok okay k kk alright right sure yes yeah yep yup yea no nope nah fine",
    "got understood understand noted gotcha i see makes sense sounds",
    "great good nice cool perfect awesome amazing excellent wonderful brilliant fantastic neat lovely",
    "helpful useful works worked exactly correct indeed agreed true totally absolutely definitely",
    "wow oh ah aha oops sorry please pls plz np",
    "lol lmao rofl haha hehe hm hmm um uh er",
    "continue go on more next keep going",
    "let me think about hold second what do one thing",  # holding the conversation: "one more thing"
    "chatgpt gpt bot buddy man dude mate",
)
CHIT_CHAT_WORDS = frozenset(word for group in _GROUPS for word in group.split())

MAX_ONE_WORD_CHARS = 15  # a longer single word is kept (an identifier, a pasted string)

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
_REPEATED = re.compile(r"([^\W\d_])\1{2,}")  # heyyy -> hey, soooo -> so
_LAUGH = re.compile(r"(?:ha|he|hi|ja|ah)+h?|lo+l")


def _plain(word: str) -> str:
    return _REPEATED.sub(r"\1", word.casefold())


def _is_filler(word: str) -> bool:
    plain = _plain(word)
    return plain in CHIT_CHAT_WORDS or _LAUGH.fullmatch(plain) is not None


def is_chit_chat(text: str) -> bool:
    """Whether ``text`` is a turn without content worth keeping (the rule in this module's docstring)."""
    if any(char.isdigit() for char in text):
        return False
    words = _WORD.findall(text.replace("\u2019", "'"))
    if not words:
        return True
    if all(_is_filler(word) for word in words):
        return True
    tokens = text.split()
    if len(tokens) != 1:
        return False
    bare = tokens[0].strip(".,!?;:…")
    return bare.isalpha() and bare.islower() and len(bare) <= MAX_ONE_WORD_CHARS
