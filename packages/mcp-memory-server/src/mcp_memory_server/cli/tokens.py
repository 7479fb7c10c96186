"""``mcp-memory token …``: the bearer tokens of the HTTP server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from .common import emit_json, expected_errors, load_settings

if TYPE_CHECKING:
    from mcp_memory_core.tokens import TokenRegistry

    from ..runtime.settings import ServerSettings


@click.group()
def token() -> None:
    """Bearer tokens for `mcp-memory serve --transport http`, stored hashed: in MCP_MEMORY_TOKENS_PATH
    when set; else in the store's database when its plugin keeps tokens (MCP_MEMORY_STORE=postgres);
    else in tokens.db beside the database."""


@contextmanager
def _registry(settings: ServerSettings | None = None) -> Iterator[TokenRegistry]:
    """Where the tokens live (as the HTTP server decides it); its errors are one line on stderr."""
    from ..runtime.assembly import token_registry

    with expected_errors(), token_registry(settings or load_settings()) as registry:
        yield registry


def another_user_note(token_user: str, local_user: str) -> str | None:
    """One line when a token would act as someone else than the person at the machine, who owns what
    stdio, the CLI and the hooks store: that token's user will not see their private memories."""
    if token_user == local_user:
        return None
    return (
        f"Note: this token acts as {token_user}, another user than the CLI, stdio and hooks "
        f"({local_user}), whose private memories it will not see; to be one user everywhere, set "
        f"MCP_MEMORY_USER={token_user} or create the token without a name."
    )


@token.command("create")
@click.argument("user", required=False)
@click.option("--team", "teams", multiple=True, help="A team the user belongs to (repeat for several).")
@click.option("--json", "as_json", is_flag=True, help='Print JSON (the token under "token").')
def token_create(user: str | None, teams: tuple[str, ...], as_json: bool) -> None:
    """Create a token for USER and print it (once: only its hash is kept) as one line on stdout.

    Without USER the token is yours: the user the CLI, the stdio server and the hooks act as
    (MCP_MEMORY_USER, default `local`), so the web UI and HTTP clients see what they stored."""
    settings = load_settings()
    with _registry(settings) as registry:
        secret, info = registry.create(user if user is not None else settings.user, teams)
    note = another_user_note(info.user, settings.user)
    if note:
        click.echo(note, err=True)
    if as_json:
        emit_json(
            {
                "token": secret,
                "id": info.id,
                "user": info.user,
                "teams": list(info.teams),
                "location": registry.location,
            }
        )
        return
    click.echo(secret)
    shown = f" in team(s) {', '.join(info.teams)}" if info.teams else ""
    click.echo(
        f"Created token {info.id} for {info.user}{shown}, kept in {registry.location}. "
        "It is shown only this once.",
        err=True,
    )


@token.command("list")
@click.option("--all", "show_all", is_flag=True, help="Also show revoked tokens.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def token_list(show_all: bool, as_json: bool) -> None:
    """List tokens: id, user, teams, created (never the secret); where they live on stderr."""
    with _registry() as registry:
        rows = [t for t in registry.tokens() if show_all or t.active]
    if as_json:
        emit_json([{**t.__dict__, "teams": list(t.teams), "active": t.active} for t in rows])
        return
    click.echo(f"Tokens in {registry.location}:", err=True)
    if not rows:
        click.echo("No tokens. Create yours with `mcp-memory token create`.")
        return
    from .display import stdout_is_terminal, table

    if stdout_is_terminal():
        table(
            ("ID", "USER", "TEAMS", "CREATED", "REVOKED"),
            [(t.id, t.user, ",".join(t.teams) or "-", t.created_at, t.revoked_at or "") for t in rows],
        )
        return
    for t in rows:
        state = "" if t.active else f"  revoked {t.revoked_at}"
        click.echo(f"{t.id}  {t.user}  teams={','.join(t.teams) or '-'}  created {t.created_at}{state}")


@token.command("revoke")
@click.argument("token_id", required=False)
@click.option("--user", default=None, help="Revoke every active token of this user.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def token_revoke(token_id: str | None, user: str | None, as_json: bool) -> None:
    """Revoke the token TOKEN_ID (see `token list`), or every token of --user. Takes effect at once."""
    with _registry() as registry:
        revoked = registry.revoke(token_id, user=user)
    if as_json:
        emit_json({"revoked": [t.id for t in revoked]})
        return
    click.echo(f"Revoked {len(revoked)} token(s): {', '.join(t.id for t in revoked) or 'none'}")
