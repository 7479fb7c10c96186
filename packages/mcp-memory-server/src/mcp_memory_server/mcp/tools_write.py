"""The tools that write: store_memory, update_memory, delete_memory, pin_memory and clear_memories,
one registration function each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ..operations.serialize import (
    delete_receipt,
    pin_receipt,
)
from ..operations.write import StoreRequest, UpdateRequest, store, update
from .budget import fit_entries, listing
from .params import (
    Content,
    ImportanceArg,
    MemoryId,
    Metadata,
    NamespaceArg,
    OccurredAt,
    PrivacyArg,
    TagsArg,
    ThreadArg,
    TypeArg,
)
from .toolbox import DELETE, WRITE, ToolBox, session_key

if TYPE_CHECKING:
    from mcp_memory_core.engine import MemoryEngine
    from mcp_memory_core.scope import Scope


def add_store_memory(box: ToolBox) -> None:
    @box.tool(WRITE)
    async def store_memory(
        content: Content,
        metadata: Metadata = None,
        type: TypeArg = None,
        tags: TagsArg = None,
        importance: ImportanceArg = None,
        pinned: Annotated[bool, Field(description="Pinned memories never expire.")] = False,
        namespace: NamespaceArg = None,
        privacy_scope: PrivacyArg = None,
        occurred_at: OccurredAt = None,
        thread: ThreadArg = None,
        ctx: Context[Any, Any] | None = None,
    ) -> dict[str, Any]:
        """Store a new memory: a durable fact, preference or decision worth recalling in later conversations.

        occurred_at says when it happened or was said (default now); thread groups one conversation's
        memories (default: this session).
        Returns id, namespace and status: "stored"; "duplicate" (the same content was already stored: its
        id is returned, nothing was written); or "superseded" (server policy replaced a near-duplicate).
        similar lists close existing memories, each with a relation: "duplicate" (very close: most likely
        this memory restates it or gives it a new value) or "related" (the same thing or a neighbouring
        fact: check). If one says the same thing in an older form, call update_memory on it instead.
        If the memory replaces something stored before, use update_memory.
        """

        session = session_key(ctx)  # read here, on the request's task

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            from mcp_memory_core.turns import session_thread_id

            default_thread = session_thread_id(session) if session is not None else None
            request = StoreRequest(
                content=content,
                metadata=metadata,
                type=type,
                tags=tags,
                importance=importance,
                pinned=pinned,
                namespace=namespace,
                privacy_scope=privacy_scope,
                occurred_at=occurred_at,
                thread=thread if thread is not None else default_thread,
            )
            receipt = store(engine, scope, request).full()
            build = listing(
                receipt,
                "similar",
                budget=box.budget(),
                noun="similar memory",
                plural="similar memories",
                how="get_memory returns any of them in full",
            )
            return fit_entries(receipt["similar"], build, box.budget(), name=lambda s: s["id"])

        return await box.run(do)


def add_update_memory(box: ToolBox) -> None:
    @box.tool(WRITE)
    async def update_memory(
        id: MemoryId,
        content: Content,
        metadata: Metadata = None,
        type: TypeArg = None,
        tags: TagsArg = None,
        importance: ImportanceArg = None,
        privacy_scope: PrivacyArg = None,
        occurred_at: OccurredAt = None,
    ) -> dict[str, Any]:
        """Replace a memory whose fact changed: creates a new version and marks the old one superseded.

        Use this instead of storing a contradicting memory. Only the current version can be updated.
        metadata, type, tags and importance replace the old values; omit them to keep the old ones.
        Returns the new id, the superseded (old) id and status "updated" (get_memory shows the new version).
        """

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            request = UpdateRequest(
                id=id,
                content=content,
                metadata=metadata,
                type=type,
                tags=tags,
                importance=importance,
                privacy_scope=privacy_scope,
                occurred_at=occurred_at,
            )
            return update(engine, scope, request).full()

        return await box.run(do)


def add_delete_memory(box: ToolBox) -> None:
    @box.tool(DELETE)
    async def delete_memory(
        id: MemoryId,
        hard: Annotated[
            bool,
            Field(
                description=(
                    "Purge for good: content, vectors and every version of the memory. Default false: a "
                    "tombstone (hidden everywhere, history kept)."
                )
            ),
        ] = False,
    ) -> dict[str, Any]:
        """Delete a memory that is wrong or that the user wants forgotten; it never appears in search again.

        Returns status "deleted", "already_deleted", or "purged" (hard=true; purged lists removed ids).
        """

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            outcome = engine.delete_memory(id, hard=hard, scope=scope)
            data = delete_receipt(outcome)
            if not hard:
                return data
            data.pop("purged")  # the ids come back below, as many as fit the result budget
            tokens = box.budget()

            def build(kept: list[Any], named: list[str], left_out: int) -> dict[str, Any]:
                result = {**data, "purged": kept}
                if left_out:
                    result["hint"] = (
                        f"{len(outcome.purged):,} versions were purged; the ids of {left_out:,} of them "
                        f"did not fit in the {tokens:,}-token result budget (MCP_MEMORY_MAX_RESULT_TOKENS)."
                    )
                return result

            return fit_entries(list(outcome.purged), build, tokens, shortenable=False)

        return await box.run(do)


def add_pin_memory(box: ToolBox) -> None:
    @box.tool(WRITE)
    async def pin_memory(
        id: MemoryId,
        pinned: Annotated[bool, Field(description="true to pin, false to unpin.")] = True,
    ) -> dict[str, Any]:
        """Pin a memory so it never expires (working memories otherwise expire after 48 hours, episodic
        after 90 days), or unpin it. Returns its id, pinned and expires_at (null: never)."""

        def do(engine: MemoryEngine, scope: Scope) -> dict[str, Any]:
            return pin_receipt(engine.pin_memory(id, pinned, scope=scope), engine.ttl)

        return await box.run(do)


def add_clear_memories(box: ToolBox) -> None:
    @box.tool(DELETE)
    async def clear_memories(
        namespace: Annotated[str, Field(description="The namespace to clear.")],
        confirm: Annotated[
            str,
            Field(description="Must repeat the namespace name exactly, as confirmation that the user asked."),
        ],
    ) -> dict[str, Any]:
        """Permanently delete EVERY memory of a namespace (all versions, no undo). Only when the user
        explicitly asks to wipe that namespace; confirm must repeat the namespace name."""
        if confirm != namespace:
            raise ToolError(
                f"Not cleared: confirm must repeat the namespace name exactly ({namespace!r}). Ask the user first."
            )
        removed = await box.run(lambda engine, scope: engine.clear_namespace(namespace, scope=scope))
        return {"namespace": namespace, "status": "cleared", "purged": removed}
