"""What gets a vector: a memory's whole text, plus each of its sentences when it has several.

A question usually targets one sentence of a memory; a mean-pooled vector of three sentences is
nearer to none of them. Searching the best passage of each memory (max similarity) keeps each
sentence findable, and keeps long memories searchable past the embedding model's 256-token window.
Short, single-sentence memories get one vector, as before.

A memory that opens with a short label ("Caroline: …", "Project Atlas: …", "User: …") says whom or
what all its sentences are about; each passage carries that label, so "Deploys are on Fridays." from
"Project Atlas: Uses Postgres. Deploys are on Fridays." is embedded as "Project Atlas: Deploys are on
Fridays.".

A sentence of a two-sentence fact (a memory without a speaker) counts at its similarity minus
``PASSAGE_DISCOUNT`` where it beats the fact's whole text (:func:`discounted`): one short sentence
alone matches loosely ("Avoid booking meetings after 6." for "Should I start a voice chat?"), and a
two-sentence fact must not outrank a one-sentence answer by half of itself. A longer memory's
sentences keep their full similarity (its whole text is diluted: the sentence is what a question
finds), and so do a conversation's turns (a question targets one sentence of a turn, and its label
carries whom it is about).
"""

from __future__ import annotations

import re

# A long memory's sentences may be embedded after its store is acknowledged (engine.passage_filler):
DEFAULT_PASSAGE_BACKLOG = 256  # at most this many memories wait for theirs; past it, embedded at once
DEFAULT_FILL_IDLE_SECONDS = 0.1  # the filler runs once callers' embeddings have been quiet this long
MAX_PASSAGES = 16  # sentences beyond this are merged into windows, so a long memory costs at most 17 vectors
MIN_WORDS = 3  # "Thanks!" or "Yes." carries no meaning of its own
# Chosen on the paraphrase worlds' dev halves (docs/benchmarks.md, "the sixth recall step"): 0.03-0.08
# give the same rank-1; 0.12 starts to empty answers.
PASSAGE_DISCOUNT = 0.05

_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])\s+|\n+")
_LABEL = re.compile(r"^\s*([^:\n]{1,40}?):\s+\S")
MAX_LABEL_WORDS = 4


def leading_label(text: str) -> str | None:
    """The short label a memory opens with ("Caroline" in "Caroline: I went …"), if any."""
    match = _LABEL.match(text)
    if match is None or len(match.group(1).split()) > MAX_LABEL_WORDS or "://" in text[: match.end()]:
        return None
    return match.group(1).strip()


def sentence_count(text: str) -> int:
    """How many sentences ``text`` has (each run of text ended by . ! ? … or a line break)."""
    return sum(1 for s in _SENTENCE_END.split(text) if s.strip())


def split_passages(text: str) -> list[str]:
    """The texts to embed for one memory: the whole text first, then its sentences (if ≥ 2 qualify)."""
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if len(s.split()) >= MIN_WORDS]
    if len(sentences) < 2:
        return [text]
    if len(sentences) > MAX_PASSAGES:
        size = -(-len(sentences) // MAX_PASSAGES)  # ceil: merge neighbours into equal windows
        sentences = [" ".join(sentences[i : i + size]) for i in range(0, len(sentences), size)]
    label = leading_label(text)
    if label is not None:
        sentences = [s if s.startswith(f"{label}:") else f"{label}: {s}" for s in sentences]
    return [text, *sentences]


def is_two_sentences(text: str) -> bool:
    """Whether ``text`` is embedded as its whole and two sentences (a cheap test first: a sentence
    end before its last character)."""
    return _SENTENCE_END.search(text.rstrip()) is not None and len(split_passages(text)) == 3


def discounted(similarity: float, whole: float) -> float:
    """A fact's similarity when its best match is one of its sentences (``similarity``) and its whole
    text scores ``whole``: the sentence counts ``PASSAGE_DISCOUNT`` less, never below the whole text."""
    return similarity if similarity <= whole else max(whole, similarity - PASSAGE_DISCOUNT)
