"""The pluggy hooks a plugin implements. Entry-point group: ``mcp_memory``.

A plugin is a module with one or more functions marked ``@hookimpl`` and named after a hook below;
each yields (or returns a list of) specs. Backends are never called through pluggy at query time:
the hooks only register them by name.
"""

from __future__ import annotations

from collections.abc import Iterable

import pluggy

from .specs import EmbedderSpec, RankerSpec, RerankerSpec, StoreSpec, TokenTableSpec

PROJECT_NAME = "mcp_memory"
ENTRY_POINT_GROUP = "mcp_memory"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def mcp_memory_embedders() -> Iterable[EmbedderSpec]:  # type: ignore[empty-body]
    """Register embedders: backends that turn text into unit vectors.

    :return: an iterable of :class:`EmbedderSpec`.

    Example::

        from mcp_memory_core import EmbedderSpec, hookimpl

        @hookimpl
        def mcp_memory_embedders():
            yield EmbedderSpec(
                name="my-embedder",
                factory=lambda settings: MyEmbedder(),
                description="What it embeds with",
            )
    """


@hookspec
def mcp_memory_stores() -> Iterable[StoreSpec]:  # type: ignore[empty-body]
    """Register stores: backends that persist memories and their vectors.

    :return: an iterable of :class:`StoreSpec`.

    Example::

        from mcp_memory_core import StoreSpec, hookimpl

        @hookimpl
        def mcp_memory_stores():
            yield StoreSpec(
                name="my-store",
                factory=lambda settings: MyStore(settings.db_path),
                description="Where it keeps memories",
            )
    """


@hookspec
def mcp_memory_rankers() -> Iterable[RankerSpec]:  # type: ignore[empty-body]
    """Register rankers: pure functions that order search candidates.

    :return: an iterable of :class:`RankerSpec`.

    Example::

        from mcp_memory_core import RankerSpec, hookimpl

        @hookimpl
        def mcp_memory_rankers():
            yield RankerSpec(
                name="my-ranker",
                factory=lambda settings: MyRanker(),
                description="How it orders results",
            )
    """


@hookspec
def mcp_memory_rerankers() -> Iterable[RerankerSpec]:  # type: ignore[empty-body]
    """Register rerankers: backends that reorder the ranker's best candidates with a closer look at
    the query and their text. None runs unless ``MCP_MEMORY_RERANKERS`` names it.

    :return: an iterable of :class:`RerankerSpec`.

    Example::

        from mcp_memory_core import RerankerSpec, hookimpl

        @hookimpl
        def mcp_memory_rerankers():
            yield RerankerSpec(
                name="my-reranker",
                factory=lambda settings: MyReranker(),  # its .name must be "my-reranker"
                description="What it looks at",
            )
    """


@hookspec
def mcp_memory_token_tables() -> Iterable[TokenTableSpec]:  # type: ignore[empty-body]
    """Register token tables: where the HTTP server keeps its bearer tokens when a store is
    configured. A spec is named after the store it belongs to; with that store configured (and no
    ``MCP_MEMORY_TOKENS_PATH``), the server and ``mcp-memory token …`` use its table instead of the
    ``tokens.db`` file, so every server on the store's database sees a new or revoked token at once.

    :return: an iterable of :class:`TokenTableSpec`; the factory returns a
        :class:`~mcp_memory_core.tokens.TokenTable` and must not open the store.

    Example::

        from mcp_memory_core import TokenTableSpec, hookimpl

        @hookimpl
        def mcp_memory_token_tables():
            yield TokenTableSpec(
                name="my-store",  # the name of the store it keeps tokens beside
                factory=lambda settings: MyTokenTable(settings.db_path),
                description="Where it keeps tokens",
            )
    """
