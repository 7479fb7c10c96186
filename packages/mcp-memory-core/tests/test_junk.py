"""Chit-chat: which conversation turns an import leaves out (greetings, acknowledgements, one-word
replies, lines without content). Conservative: a short turn holding a fact, a number or a name is kept."""

from __future__ import annotations

import pytest

from mcp_memory_core.junk import is_chit_chat

CHIT_CHAT = [
    "hi",
    "Hi!",
    "hello there",
    "Hey ChatGPT",
    "heyyy",
    "good morning",
    "thanks!",
    "Thank you so much!!",
    "thx",
    "ok",
    "OK thanks",
    "okay, got it",
    "great, thanks 🙏",
    "Perfect.",
    "cool",
    "yes please",
    "no thanks",
    "sure",
    "lol",
    "hahaha",
    "hmm...",
    "continue",
    "Go on",
    "makes sense",
    "that's great, thank you",
    "bye!",
    "You’re welcome!",
    "...",
    "?",
    "👍",
    "  ",
    "whatever",  # one lowercase word: a reply that means nothing on its own
    "let me think about it",  # turns that only hold the conversation
    "hold on a second",
    "what do you think?",
    "one more thing",
]

NOT_CHIT_CHAT = [
    "Maya",  # a name
    "PostgreSQL",  # a name
    "42",  # a number
    "ok 42",
    "thanks, my flight is at 7:40",
    "I'm vegetarian",
    "thanks Maya",
    "My daughter's name is Lea",
    "yes, we use Postgres",
    "hi, I'm Tom from Berlin",
    "no peanuts please, I'm allergic",
    "user@example.com",
    "src/main.py",
    "v2",
    "Our kitchen cabinets are walnut.",
    "antidisestablishmentarianism",  # one long word: kept
    "let me think about the schema",
    "what do you think of Rust?",
    "one more thing: the deploy key expired",
]


@pytest.mark.parametrize("text", CHIT_CHAT)
def test_chit_chat_is_recognised(text: str) -> None:
    assert is_chit_chat(text)


@pytest.mark.parametrize("text", NOT_CHIT_CHAT)
def test_a_turn_with_a_fact_a_number_or_a_name_is_kept(text: str) -> None:
    assert not is_chit_chat(text)
