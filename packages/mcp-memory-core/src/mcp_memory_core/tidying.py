"""The rules of tidying a memory, without a store: which memories are near-duplicates of each other,
which are junk, and what "the same words" means for a superseded leftover. The engine's tidy part
(:mod:`.engine.tidy`) reads the memories a scope may change and applies these rules to them.

- **Near-duplicates**: the cosine similarity of two memories' stored whole-text vectors is at or
  above the engine's duplicate threshold (``MCP_MEMORY_DUPLICATE_THRESHOLD``, 0.87, calibrated for
  all-MiniLM-L6-v2), and they are no *minimal pair*; a cluster is every memory linked to another by such a pair (transitive: single
  linkage), and it names each link with its similarity.
- **A minimal pair**: two texts one or two words apart (:func:`minimal_pair`: "Maya likes hiking" /
  "Maya likes skiing", "Maya is allergic to cats" / "Maya's son is allergic to cats", "Redis 6" /
  "now Redis 7"). Such a pair is a new value of one attribute or a different fact, and neither its
  cosine (often above 0.9) nor its words tell which: it is never folded, and no cluster holding one
  is proposed. Texts with the same words (case, punctuation and order aside) are no minimal pair.
- **Junk**: a memory without content worth keeping, the rule of :func:`~.junk.is_chit_chat`
  (greetings, thanks, acknowledgements, one-word replies, lines without a letter or digit). Short
  real facts ("Maya is vegetarian", "Use uv") are kept.
- **The same words**: case, punctuation and spacing aside (:func:`same_words`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .junk import is_chit_chat

MINIMAL_PAIR_WORDS = 2  # words added, removed or replaced between the texts of a minimal pair
BLOCK_FLOATS = 1 << 24  # cosines computed at once (64 MB): 1,600 rows of 10,000 memories

_WORDS = re.compile(r"\w+")


def is_junk(content: str) -> bool:
    """Whether a memory holds nothing worth keeping (see this module's docstring)."""
    return is_chit_chat(content)


def same_words(content: str) -> str:
    """``content`` reduced to its words, case-folded: two texts that differ only in case, punctuation
    or spacing reduce to the same string."""
    return " ".join(_WORDS.findall(content.casefold()))


def word_edits(first: str, second: str) -> int:
    """How many words must be added, removed or replaced to turn one text into the other (the
    Levenshtein distance over their words, case and punctuation aside)."""
    a, b = same_words(first).split(), same_words(second).split()
    row = list(range(len(b) + 1))
    for i, word in enumerate(a, start=1):
        diagonal, row[0] = row[0], i
        for j, other in enumerate(b, start=1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (word != other))
    return row[-1]


def minimal_pair(first: str, second: str) -> bool:
    """Whether two texts are one or two words apart (see this module's docstring); the same words in
    another order are not."""
    if sorted(same_words(first).split()) == sorted(same_words(second).split()):
        return False
    return word_edits(first, second) <= MINIMAL_PAIR_WORDS


@dataclass(frozen=True)
class Cluster:
    """Near-duplicates: ``members`` in the order given, and every ``links`` pair (first, second,
    cosine similarity) at or above the threshold among them, in the order of the members."""

    members: tuple[str, ...]
    links: tuple[tuple[str, str, float], ...]


def duplicate_clusters(
    ids: Sequence[str], vectors: npt.ArrayLike, threshold: float, texts: Sequence[str] | None = None
) -> list[Cluster]:
    """The clusters of two or more of ``ids`` linked by cosine similarities of at least ``threshold``
    (rows of ``vectors`` are unit vectors, one per id), in the order of their first member. Given the
    ``texts``, a minimal pair is never linked, and a cluster holding one is left out."""
    matrix = np.asarray(vectors, dtype=np.float32)
    parent = list(range(len(ids)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    links: list[tuple[int, int, float]] = []
    rows_at_once = max(1, BLOCK_FLOATS // max(len(ids), 1))
    for start in range(0, len(ids), rows_at_once):
        block = matrix[start : start + rows_at_once] @ matrix.T
        rows, columns = np.nonzero(block >= threshold)
        for row, column in zip(rows.tolist(), columns.tolist(), strict=True):
            first = start + row
            if column > first and (texts is None or not minimal_pair(texts[first], texts[column])):
                links.append((first, column, float(block[row, column])))
                parent[root(column)] = root(first)
    members: dict[int, list[int]] = {}
    for i in range(len(ids)):  # in the order given: each cluster's members, and the clusters
        members.setdefault(root(i), []).append(i)
    linked: dict[int, list[tuple[int, int, float]]] = {}
    for link in sorted(links):
        linked.setdefault(root(link[0]), []).append(link)
    clusters = [
        Cluster(
            members=tuple(ids[i] for i in group),
            links=tuple((ids[a], ids[b], round(similarity, 4)) for a, b, similarity in linked[key]),
        )
        for key, group in members.items()
        if len(group) > 1 and (texts is None or not _holds_minimal_pair([texts[i] for i in group]))
    ]
    return clusters


def _holds_minimal_pair(texts: Sequence[str]) -> bool:
    return any(minimal_pair(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :])
