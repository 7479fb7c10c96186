"""Exact phrases and names: lift the memories that contain, word for word, what the query names.

Embeddings blur exactly what people search for by name: ``PROJ-1234`` and ``PROJ-1243``, Melanie
and Caroline, 2022 and 2023, a quoted error message and a paraphrase of it all land close together.
This reranker reads the query for exact cues:

- quoted phrases: ``"like this"``, ``“like this”``, ``'like this'``;
- identifiers and numbers: words with a digit or inner punctuation (``.``, ``_``, ``/``, ``:``,
  ``@``, ``#``), ALL-CAPS and camelCase words (``PROJ-1234``, ``v2.3.1``, ``ops/deploy.sh``,
  ``2023``, ``OAuth``, ``API``);
- names: capitalised words and runs of them (``Caroline``, ``New York``), not the question words
  and other capitalised function words a sentence starts with (``What``, ``Did``, ``The`` …);

and lifts the candidates whose text contains them verbatim, on word boundaries (names as written,
phrases and identifiers in any case).
A cue weighs by how rare it is among the ``n`` candidates it looks at, ``log(n / df)`` for a cue
``df`` of them contain: a name in every candidate (the speaker of a whole conversation) tells them
apart no better than none and weighs nothing, nor does a cue no candidate contains. Quoted phrases weigh double: the user asked
for those words.

Each candidate's score is ``(1 - weight) * place + weight * coverage``: ``place`` is its place in
the order it was given (1 for the best down to 1/n), ``coverage`` the weighted share of the query's
cues its text contains (0 to 1, its ``phrases`` part). With the default weight 0.5 a memory rises
past ``coverage × n`` of the memories holding no cue: one holding every cue comes first, one holding
half of them (by weight) rises half the window. A query without cues leaves the order as it was.

Built only against ``mcp_memory_core``'s public API, as any third party would. Pure Python: nothing
to load, no model, no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from mcp_memory_core import RerankerSpec, ScoredCandidate, Settings, hookimpl

NAME = "phrases"
PHRASE_WEIGHT = 2.0  # a quoted phrase is the user's own "these exact words"

_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|(?<!\w)'([^']+)'(?!\w)")
_TOKEN = re.compile(r"[^\s\"“”'‘’()\[\]{}<>,;!?]+(?:['’][^\s\"“”'‘’()\[\]{}<>,;!?]+)*")
_EDGE = ".,:;!?-"
_INNER = re.compile(r"[._/:@#\\]")
_CAMEL = re.compile(r"[a-z][A-Z]|^[A-Z]{2,}[a-z]")
# Capitalised only because a sentence starts with them, or too common to name anything.
_NOT_NAMES = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "before",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "its",
        "may",
        "me",
        "might",
        "must",
        "my",
        "no",
        "not",
        "now",
        "of",
        "on",
        "or",
        "our",
        "ours",
        "please",
        "she",
        "should",
        "so",
        "some",
        "tell",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "yes",
        "you",
        "your",
        "show",
        "find",
        "give",
        "list",
        "remind",
        "remember",
        "recall",
        "search",
        "summarize",
        "explain",
        "describe",
        "today",
        "yesterday",
        "tomorrow",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
)


@dataclass(frozen=True)
class Cue:
    """Something the query names exactly: ``kind`` is ``phrase``, ``identifier`` or ``name``."""

    text: str
    kind: str

    @property
    def weight(self) -> float:
        return PHRASE_WEIGHT if self.kind == "phrase" else 1.0

    def pattern(self) -> re.Pattern[str]:
        """The cue as a regex: whitespace matches any whitespace, and a cue that starts or ends with
        a letter or digit only matches there on a word boundary. Phrases and identifiers match in
        any case; names as written (Bill is a name, a bill is not)."""
        body = r"\s+".join(re.escape(word) for word in self.text.split())
        before = r"(?<!\w)" if self.text[0].isalnum() else ""
        after = r"(?!\w)" if self.text[-1].isalnum() else ""
        return re.compile(before + body + after, 0 if self.kind == "name" else re.IGNORECASE)


def _clean(token: str) -> str:
    """A query word without surrounding punctuation or a possessive ('s)."""
    token = token.strip(_EDGE)
    for suffix in ("'s", "’s", "'", "’"):
        if token.endswith(suffix):
            token = token[: -len(suffix)]
    return token.strip(_EDGE)


def _is_identifier(token: str) -> bool:
    return (
        any(ch.isdigit() for ch in token)
        or bool(_INNER.search(token))
        or (token.isupper() and sum(ch.isalpha() for ch in token) >= 2)
        or bool(_CAMEL.search(token))
    )


def query_cues(query: str) -> list[Cue]:
    """The exact cues of ``query``, in the order they appear, each once (case-insensitively)."""
    cues: list[Cue] = []
    for match in _QUOTED.finditer(query):
        phrase = " ".join(next(g for g in match.groups() if g is not None).split())
        if phrase:
            cues.append(Cue(phrase, "phrase"))
    rest = _QUOTED.sub(" | ", query)  # a quote also ends a run of names
    run: list[str] = []

    def end_run() -> None:
        if len(run) > 1:
            cues.append(Cue(" ".join(run), "name"))
        run.clear()

    end = 0
    for match in _TOKEN.finditer(rest):
        if rest[end : match.start()].strip():  # punctuation between two names: "Alice, Bob"
            end_run()
        end = match.end()
        raw = match.group()
        token = _clean(raw)
        if len(token) < 2 or not any(ch.isalnum() for ch in token):
            end_run()
        elif _is_identifier(token):
            end_run()
            cues.append(Cue(token, "identifier"))
        elif token[0].isupper() and token.casefold() not in _NOT_NAMES:
            cues.append(Cue(token, "name"))
            run.append(token)
            if token != raw:  # "Alice's", "Alice." end a run
                end_run()
        else:
            end_run()
    end_run()
    seen: set[str] = set()
    unique = []
    for cue in cues:
        if cue.text.casefold() not in seen:
            seen.add(cue.text.casefold())
            unique.append(cue)
    return unique


class PhraseReranker:
    """Lifts candidates that contain the query's quoted phrases, identifiers and names verbatim.

    ``depth``: how many of the ranker's best it looks at; ``weight`` (0 to 1): how far exact cues
    may move a candidate (0 keeps the ranker's order).
    """

    name = NAME
    heavy = False  # pure Python: nothing to load

    def __init__(self, depth: int = 10, weight: float = 0.5) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth must be a whole number of at least 1; got {depth!r}")
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"weight must be from 0 to 1; got {weight!r}")
        self.depth = depth
        self.weight = float(weight)

    def load(self) -> None:
        """Nothing to load."""

    def rerank(self, query: str, ranked: Sequence[ScoredCandidate], now: datetime) -> list[ScoredCandidate]:
        n = len(ranked)
        patterns = [(cue, cue.pattern()) for cue in query_cues(query)]
        found = [
            [pattern.search(s.candidate.memory.content) is not None for _, pattern in patterns]
            for s in ranked
        ]
        weights = []
        for column, (cue, _) in enumerate(patterns):
            df = sum(row[column] for row in found)
            weights.append(cue.weight * math.log(n / df) if df else 0.0)
        total = sum(weights)
        scored = []
        for place, (given, row) in enumerate(zip(ranked, found, strict=True)):
            coverage = sum(w for w, hit in zip(weights, row, strict=True) if hit) / total if total else 0.0
            score = (1 - self.weight) * (1 - place / n) + self.weight * coverage
            scored.append(
                (-score, place, ScoredCandidate(given.candidate, score, {**given.parts, NAME: coverage}))
            )
        return [item for _, _, item in sorted(scored, key=lambda t: (t[0], t[1]))]


class PhrasesSettings(BaseSettings):
    """``MCP_MEMORY_PHRASES_DEPTH`` and ``MCP_MEMORY_PHRASES_WEIGHT``."""

    model_config = SettingsConfigDict(env_prefix="MCP_MEMORY_PHRASES_", extra="ignore")

    depth: int = Field(default=10, ge=1, le=1000, description="How many of the ranker's best it looks at")
    weight: float = Field(default=0.5, ge=0.0, le=1.0, description="How far exact cues may move a memory")


def _factory(settings: Settings) -> PhraseReranker:
    own = PhrasesSettings()
    return PhraseReranker(depth=own.depth, weight=own.weight)


@hookimpl
def mcp_memory_rerankers() -> Iterator[RerankerSpec]:
    yield RerankerSpec(
        name=NAME,
        factory=_factory,
        description="Lifts memories holding the query's quoted phrases, names and identifiers verbatim "
        "(example plugin)",
        settings_model=PhrasesSettings,
    )
