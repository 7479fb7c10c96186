"""The ``memory://{id}`` and ``memory://stats`` resources and the ``memory_injection`` prompt, one
registration function each. They call the service in the request's Scope, as the tools do."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from ..operations.errors import rule_for
from ..operations.read import GetRequest, get, stats
from .params import MAX_TOKEN_BUDGET
from .toolbox import current_access_token

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from ..runtime.service import MemoryService


def add_memory_resource(mcp: MCPServer[Any], service: MemoryService) -> None:
    @mcp.resource(
        "memory://{id}",
        name="memory",
        title="A memory by id",
        description="One memory as JSON, exactly as get_memory returns it.",
        mime_type="application/json",
    )
    async def memory_resource(id: str) -> str:
        try:
            data = await service.call_scoped(
                lambda engine, scope: get(engine, scope, GetRequest(id=id)).full(),
                current_access_token(),
            )
        except Exception as exc:
            rule = rule_for(exc)
            if rule is None:
                raise
            refused = ResourceNotFoundError if rule.mcp_code == INVALID_PARAMS else ResourceError
            raise refused(rule.mcp_message(exc)) from exc

        return json.dumps(data, ensure_ascii=False)


def add_stats_resource(mcp: MCPServer[Any], service: MemoryService) -> None:
    @mcp.resource(
        "memory://stats",
        name="stats",
        title="Memory statistics",
        description="Counts per namespace and type, the model, the store and the TTL settings, as JSON.",
        mime_type="application/json",
    )
    async def stats_resource() -> str:
        counted = await service.call_scoped(stats, current_access_token())
        return json.dumps(counted, ensure_ascii=False)


def add_memory_injection(mcp: MCPServer[Any], service: MemoryService) -> None:
    @mcp.prompt(
        name="memory_injection",
        title="Inject relevant memories",
        description="The memories most relevant to a query, packed into a token budget, ready to prepend.",
    )
    async def memory_injection(query: str, token_budget: str = "500") -> str:
        """Relevant memories for ``query`` within ``token_budget`` tokens: the returned text, counted
        as a whole with the model's tokenizer, is never longer (see recall.pack)."""
        # Prompt arguments are strings. A bad one is an invalid-params error saying what to send (the
        # SDK would answer any exception with "Internal server error"); the engine checks the range.
        try:
            budget_tokens = int(token_budget)
        except ValueError:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"token_budget must be an integer from 1 to {MAX_TOKEN_BUDGET}; got {token_budget!r}.",
            ) from None
        try:
            recall = await service.call_scoped(
                lambda engine, scope: engine.recall(query, budget_tokens, scope=scope),
                current_access_token(),
            )
        except Exception as exc:
            rule = rule_for(exc)
            if rule is None:
                raise
            raise MCPError(code=rule.mcp_code, message=rule.mcp_message(exc)) from exc
        return recall.prompt
