"""Specs: what a plugin hook yields to register a named backend (conda-style).

A spec's ``factory`` must be cheap: it receives the core :class:`~mcp_memory_core.settings.Settings`
and returns a backend object; heavy imports and model loading happen later, inside the backend.

A plugin's own variables are a ``pydantic_settings.BaseSettings`` of its own (prefix ``MCP_MEMORY_``
or ``MCP_MEMORY_<PLUGIN>_``) that its factory reads; naming it as ``settings_model`` lets
``mcp-memory doctor`` list them and know them as read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from pydantic_settings import BaseSettings

from .protocols import Embedder, Ranker, Reranker, Store
from .tokens import TokenTable

if TYPE_CHECKING:
    from .settings import Settings

_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")

B = TypeVar("B")


@dataclass(frozen=True)
class BackendSpec(Generic[B]):
    name: str
    factory: Callable[[Settings], B]
    description: str = ""
    settings_model: type[BaseSettings] | None = None

    kind = "backend"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ValueError(
                f"Invalid {self.kind} name {self.name!r}: use 1-64 lowercase letters, digits, '-', '_' or '.', "
                "starting with a letter."
            )
        if not callable(self.factory):
            raise TypeError(f"The factory of {self.kind} {self.name!r} is not callable.")


@dataclass(frozen=True)
class EmbedderSpec(BackendSpec[Embedder]):
    kind = "embedder"


@dataclass(frozen=True)
class StoreSpec(BackendSpec[Store]):
    kind = "store"


@dataclass(frozen=True)
class RankerSpec(BackendSpec[Ranker]):
    kind = "ranker"


@dataclass(frozen=True)
class RerankerSpec(BackendSpec[Reranker]):
    kind = "reranker"


@dataclass(frozen=True)
class TokenTableSpec(BackendSpec[TokenTable]):
    """Bearer tokens kept beside a store: ``name`` is the store's name (the table is used when that
    store is configured and ``MCP_MEMORY_TOKENS_PATH`` is not set)."""

    kind = "token-table"
