"""How many tokens a tool result costs the client's model: compact results against the full ones.

Sixty short memories (five facts, each stored twelve times with a note number; a third tagged)
go into a fresh database through the real MCP tools over an in-process client, with the default
plugins (sqlite-vec, MiniLM, hybrid) and automatic context on, as a user's would be. Then each
result is measured as the client receives it (the tools' JSON text), in two units: the MiniLM
WordPiece tokens of the embedder (``count_tokens``) and the server's budget estimate, UTF-8 bytes / 4.

"before" is what the server sent until issue 13, item 5: the full dicts (today's ``verbose=true``;
store_memory's result then echoed the whole memory) as indented JSON (the MCP SDK's rendering).

    uv run python benchmarks/result_size.py [--out docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from report import write_section

FACTS = [
    "The user prefers dark mode in every editor",
    "Project Atlas deploys with ops/deploy.sh after the CI pipeline passes",
    "Caroline went to the LGBTQ support group on 7 May 2023 and found it inspiring",
    "The team standup is at 9:30 every weekday in the small meeting room",
    "Use ruff and mypy --strict before every commit; the CI rejects lint errors",
]
QUERY = "when is the standup"


def indented(data: Any) -> str:
    """The text the MCP SDK makes of a returned dict (what the server sent before)."""
    import pydantic_core

    return pydantic_core.to_json(data, fallback=str, indent=2).decode()


async def measure() -> list[tuple[str, str, str]]:
    """(what, before text, after text) for each result."""
    from mcp import Client

    from mcp_memory_core.settings import Settings
    from mcp_memory_server.mcp.app import build_app

    app = build_app(Settings())
    rows = []
    try:
        async with Client(app) as client:

            async def call(tool: str, **args: Any) -> tuple[dict[str, Any], str]:
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.content
                return dict(result.structured_content), result.content[0].text

            for i in range(60):
                tags = {"tags": ["atlas"]} if i % 3 == 0 else {}
                await call("store_memory", content=f"{FACTS[i % 5]} (note {i})", **tags)
            full, _ = await call("search_memories", query=QUERY, verbose=True)
            compact, text = await call("search_memories", query=QUERY)
            rows.append((f"search_memories, limit 10 ({compact['count']} hits)", indented(full), text))
            rows.append(
                (
                    "one search hit",
                    indented(full["results"][0]),
                    json.dumps(compact["results"][0], ensure_ascii=False),
                )
            )
            rows.append(
                ("its content alone", full["results"][0]["content"], compact["results"][0]["content"])
            )
            full, _ = await call("list_memories", verbose=True)
            compact, text = await call("list_memories")
            rows.append(
                (f"list_memories, default page ({len(compact['memories'])} memories)", indented(full), text)
            )
            receipt, text = await call("store_memory", content="The office plants need water on Fridays")
            memory, _ = await call("get_memory", id=receipt["id"])
            for key in ("status", "head_id"):
                memory.pop(key)
            before = {"id": receipt["id"], "status": receipt["status"], "memory": memory, "similar": []}
            rows.append(("store_memory (nothing similar)", indented(before), text))
    finally:
        app.memory_service.close()
    return rows


def table(rows: list[tuple[str, str, str]], count_tokens: Any) -> str:
    lines = [
        "| result | before: MiniLM tokens | before: bytes / 4 | now: MiniLM tokens | now: bytes / 4 |",
        "|---|---:|---:|---:|---:|",
    ]
    for what, before, after in rows:
        cells = [
            f"{n:,}"
            for text in (before, after)
            for n in (count_tokens(text), math.ceil(len(text.encode()) / 4))
        ]
        lines.append(f"| {what} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the table into this markdown file's section")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update(
            {
                "MCP_MEMORY_DB_PATH": f"{tmp}/memories.db",
                "MCP_MEMORY_NAMESPACE": "atlas",
                "MCP_MEMORY_MAX_RESULT_TOKENS": "100000",  # measure whole results, uncut
                "MCP_MEMORY_LOG_LEVEL": "WARNING",
            }
        )
        rows = asyncio.run(measure())
    from mcp_memory_minilm.embedder import MiniLMEmbedder

    body = table(rows, MiniLMEmbedder().count_tokens)
    print(body)
    if args.out:
        write_section(args.out, body, "result-size")


if __name__ == "__main__":
    main()
