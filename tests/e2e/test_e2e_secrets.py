"""Secrets end to end, on the real sqlite-vec store and MiniLM: realistic secrets stored through a real
MCP client over stdio with the server's defaults are absent from every file of the database
afterwards (the receipts say what was redacted), and ordinary technical memories come back unaltered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import module_command, payload, server_env, stdio_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.usefixtures("default_plugins")]

# fake, correctly shaped secrets, each in a sentence an agent might store
SECRETS = {
    "AKIAQ3EGUJ7NYWPRT4FD": "The deploy user's AWS access key is AKIAQ3EGUJ7NYWPRT4FD",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9R3kTz5a": "and its secret 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, rotate in May.",
    "ghp_R8sT2vW4xY6zA1bC3dE5fG7hJ9kL0mN2pQ4r": "Release script token: ghp_R8sT2vW4xY6zA1bC3dE5fG7hJ9kL0mN2pQ4r",
    "S3cr3tP@ss!2026": "Staging DB is postgresql://admin:S3cr3tP@ss!2026@db.internal:5432/app",
    "xoxb-2048613557-4096813574-kQ7pXv2LmN9sR4tW8yZ1bC3d": "SLACK_BOT_TOKEN=xoxb-2048613557-4096813574-kQ7pXv2LmN9sR4tW8yZ1bC3d",
    "hunter22x": "The router admin password is hunter22x",
}
ORDINARY = [
    "Merged 9fceb02d0ae598e95dc970b74767f19372d61af8 into main; release v2.14.3 tagged on 2026-11-20.",
    "Request 550e8400-e29b-41d4-a716-446655440000 failed with 503 from https://api.example.com/v1/orders?page=2.",
    "The image is ghcr.io/acme/api@sha256:4f1a9c2e8b7d6f5a3c1e0b9d8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f.",
    "Config lives in ~/.config/acme/settings.toml; the API listens on 127.0.0.1:8080.",
]


async def call(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    return payload(await session.call_tool(tool, args))


async def test_secrets_stored_over_stdio_never_reach_the_database_files(
    db_path: Path, tmp_path: Path
) -> None:
    env = server_env(db_path, MCP_MEMORY_AUTO_CONTEXT="false")
    async with stdio_session(module_command(), env, tmp_path / "err.log") as session:
        for text in SECRETS.values():
            receipt = await call(session, "store_memory", content=text)
            assert receipt["redacted"] and "redacted" in receipt["redaction"], receipt
        stored = {}
        for text in ORDINARY:
            receipt = await call(session, "store_memory", content=text)
            assert not receipt.get("redacted"), receipt
            stored[text] = receipt["id"]
        for text, memory_id in stored.items():
            assert (await call(session, "get_memory", id=memory_id))["content"] == text
    files = [p for p in db_path.parent.iterdir() if p.is_file()]
    assert any(p.name == db_path.name for p in files)
    everything = b"".join(p.read_bytes() for p in files)
    assert [s for s in SECRETS if s.encode() in everything] == []
    assert all(text.encode() in everything for text in ORDINARY)
    assert not any(s in (tmp_path / "err.log").read_text(errors="replace") for s in SECRETS)
