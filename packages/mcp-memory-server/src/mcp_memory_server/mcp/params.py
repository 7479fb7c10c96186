"""The tools' arguments as the model reads them: each a type with its description, and the limits
they quote; the filters search_memories and list_memories share, declared once (:data:`FILTER_ARGUMENTS`,
offered by :func:`filter_arguments`).

The limits come from :mod:`mcp_memory_core.limits`, which imports nothing: the rest of the core is
imported by the warm-up thread, after the handshake, so nothing else of it may be imported here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from pydantic import Field

from mcp_memory_core.limits import MAX_LIST_LIMIT as MAX_LIST_LIMIT
from mcp_memory_core.limits import MAX_SEARCH_LIMIT as MAX_SEARCH_LIMIT
from mcp_memory_core.limits import MAX_TOKEN_BUDGET as MAX_TOKEN_BUDGET

from ..operations.filters import FilterRequest
from ..operations.vocabulary import MemoryTypeName, PrivacyName, TagsMatchName

MemoryId = Annotated[
    str, Field(description="A memory id (UUID), as returned by store_memory or search_memories.")
]
Content = Annotated[
    str,
    Field(
        description=(
            "The text to remember: one self-contained fact, preference or decision, understandable "
            "without the current conversation."
        )
    ),
]
Metadata = Annotated[
    dict[str, Any] | None,
    Field(
        description='Optional key/value pairs about the memory, e.g. {"project": "atlas", "topic": "deploy"}.'
    ),
]
NamespaceArg = Annotated[
    str | None,
    Field(
        description=(
            '"user" for preferences and facts about the person (seen from every project); default: the '
            "current project's namespace, for facts about the project."
        )
    ),
]
ReadNamespaceArg = Annotated[
    str | None,
    Field(
        description=(
            'Namespace to read; default: the current project and "user" together; "*": every namespace '
            "you may read."
        )
    ),
]
PrivacyArg = Annotated[
    PrivacyName | None,
    Field(
        description=(
            "Who else may read it: private (only you: the default), team (members of your teams), "
            "public (every user of this server). Only you can ever change or delete it."
        )
    ),
]
TypeArg = Annotated[
    MemoryTypeName | None,
    Field(
        description=(
            "semantic (facts, preferences: the default), procedural (how to do things), episodic "
            "(what happened when), working (short-lived task state)."
        )
    ),
]
TagsArg = Annotated[list[str] | None, Field(description='Optional labels, e.g. ["python", "deploy"].')]
ImportanceArg = Annotated[float | None, Field(description="How much this matters (default 0.5).", ge=0, le=1)]
# Filters shared by search_memories and list_memories: they apply before the top-k, so a filtered
# search returns as many results as match.
FilterTypes = Annotated[list[MemoryTypeName] | None, Field(description="Only memories of these types.")]
FilterTags = Annotated[list[str] | None, Field(description="Only memories with these tags (see tags_match).")]
TagsMatch = Annotated[
    TagsMatchName, Field(description="any: at least one of the tags; all: every one of them.")
]
CreatedAfter = Annotated[
    str | None, Field(description="Only memories created at or after this ISO 8601 date/time.")
]
CreatedBefore = Annotated[
    str | None, Field(description="Only memories created before this ISO 8601 date/time.")
]
OccurredAt = Annotated[
    str | None,
    Field(
        description=(
            "When the remembered thing happened or was said, ISO 8601 (e.g. 2023-05-08 or "
            "2023-05-08T13:56:00Z); default: now. Give it when storing something from an earlier date."
        )
    ),
]
ThreadArg = Annotated[
    str | None,
    Field(
        description=(
            "An id for the conversation this memory comes from; default: this MCP session, so one "
            "chat's memories group together. Reuse one id to group memories across sessions."
        )
    ),
]
OccurredAfter = Annotated[
    str | None, Field(description="Only memories that happened at or after this ISO 8601 date/time.")
]
OccurredBefore = Annotated[
    str | None, Field(description="Only memories that happened before this ISO 8601 date/time.")
]
ThreadFilter = Annotated[str | None, Field(description="Only memories of this conversation thread.")]
MetadataFilter = Annotated[
    dict[str, str | int | float | bool | None] | None,
    Field(
        description='Only memories whose metadata has all these key = value pairs, e.g. {"project": "atlas"}.'
    ),
]


# The filters of search_memories and list_memories: one argument per field of the operations'
# FilterRequest, in its order and with its defaults; here, the type and the description the model reads.
FILTER_ARGUMENTS: dict[str, Any] = {
    "types": FilterTypes,
    "tags": FilterTags,
    "tags_match": TagsMatch,
    "created_after": CreatedAfter,
    "created_before": CreatedBefore,
    "occurred_after": OccurredAfter,
    "occurred_before": OccurredBefore,
    "thread": ThreadFilter,
    "metadata": MetadataFilter,
}
FILTERS_NOT_OFFERED = frozenset({"pinned"})  # the web UI's filter; the tools do not offer it

ToolFn = Callable[..., Awaitable[Any]]


def filter_arguments(tool: ToolFn) -> ToolFn:
    """``tool`` takes its filters as one ``filters: FilterRequest`` parameter; the tool the model sees
    takes one argument per filter (:data:`FILTER_ARGUMENTS`) in that parameter's place, and hands them
    to ``tool`` as the FilterRequest. The MCP SDK reads the arguments from the signature given here."""
    signature = inspect.signature(tool, eval_str=True)
    own = list(signature.parameters.values())
    at = [p.name for p in own].index("filters")
    defaults = {name: FilterRequest.model_fields[name].default for name in FILTER_ARGUMENTS}
    offered = [
        inspect.Parameter(
            name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=defaults[name], annotation=kind
        )
        for name, kind in FILTER_ARGUMENTS.items()
    ]

    @functools.wraps(tool)
    async def with_filters(**arguments: Any) -> Any:
        filters = FilterRequest(**{name: arguments.pop(name, defaults[name]) for name in FILTER_ARGUMENTS})
        return await tool(filters=filters, **arguments)

    with_filters.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*own[:at], *offered, *own[at + 1 :]]
    )
    return with_filters
