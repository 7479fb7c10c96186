"""The server's registries list everything their modules define: a command or a tool written in its
module but left out of ``COMMANDS`` / ``TOOLS`` / ``RESOURCES_AND_PROMPTS`` would silently not exist."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import click

import mcp_memory_server.cli as cli_package
from mcp_memory_server.cli.main import COMMANDS, cli
from mcp_memory_server.mcp import app, resources, tools_read, tools_write


def _defined_commands() -> set[click.Command]:
    """Every click command or group defined at the top of a module of ``cli/`` (a group's own
    subcommands hang off it), the root group aside."""
    found: set[click.Command] = set()
    for info in pkgutil.iter_modules(cli_package.__path__):
        module = importlib.import_module(f"{cli_package.__name__}.{info.name}")
        found |= {
            value
            for value in vars(module).values()
            if isinstance(value, click.Command) and value is not cli and not _is_subcommand(value)
        }
    return found


def _is_subcommand(command: click.Command) -> bool:
    groups = [c for c in COMMANDS if isinstance(c, click.Group)]
    return any(command in group.commands.values() for group in groups)


def test_every_command_of_the_cli_modules_is_added_to_the_group() -> None:
    defined = _defined_commands()
    assert defined, "no command found: the discovery above is broken"
    assert {c.name for c in defined} == {c.name for c in COMMANDS}
    assert set(cli.commands.values()) == set(COMMANDS)


def test_every_tool_registration_is_listed_in_tools() -> None:
    defined = {
        fn
        for module in (tools_read, tools_write)
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if name.startswith("add_") and fn.__module__ == module.__name__
    }
    assert defined, "no registration found: the discovery above is broken"
    assert {fn.__name__ for fn in defined} == {fn.__name__ for fn in app.TOOLS}


def test_every_resource_and_prompt_registration_is_listed() -> None:
    defined = {
        fn
        for name, fn in inspect.getmembers(resources, inspect.isfunction)
        if name.startswith("add_") and fn.__module__ == resources.__name__
    }
    assert defined, "no registration found: the discovery above is broken"
    assert {fn.__name__ for fn in defined} == {fn.__name__ for fn in app.RESOURCES_AND_PROMPTS}
