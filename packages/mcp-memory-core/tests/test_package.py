"""The package root is cheap to import, and every name it offers resolves."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import mcp_memory_core

HEAVY = ("numpy", "mcp_memory_core.engine", "mcp_memory_core.settings", "pluggy")


def loaded_after(statement: str) -> list[str]:
    script = (
        f"import json, sys; {statement}; print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded: list[str] = json.loads(proc.stdout)
    return loaded


def test_importing_the_package_imports_neither_the_engine_nor_numpy() -> None:
    assert loaded_after("import mcp_memory_core") == []


def test_importing_the_models_imports_neither_the_engine_nor_numpy() -> None:
    assert loaded_after("from mcp_memory_core.models import Memory, MemoryFilter") == []


def test_a_name_of_the_package_loads_its_module_on_first_use() -> None:
    assert loaded_after("from mcp_memory_core import MemoryEngine") == ["mcp_memory_core.engine", "numpy"]


def test_every_public_name_resolves() -> None:
    for name in mcp_memory_core.__all__:
        assert getattr(mcp_memory_core, name) is not None, name
    assert set(mcp_memory_core.__all__) <= set(dir(mcp_memory_core))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        mcp_memory_core.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


@pytest.mark.parametrize(("module", "name"), [("limits", "MAX_SEARCH_LIMIT"), ("vocabulary", "MemoryType")])
def test_the_modules_surfaces_quote_load_nothing_else_of_the_core(module: str, name: str) -> None:
    """The limits and the vocabulary: the server quotes them before the MCP handshake."""
    script = (
        f"import json, sys; from mcp_memory_core.{module} import {name}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mcp_memory_core'))))"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert json.loads(proc.stdout) == ["mcp_memory_core", f"mcp_memory_core.{module}"], proc.stderr


def test_the_models_and_the_transfer_use_the_vocabularys_words() -> None:
    from mcp_memory_core import memory, transfer, vocabulary

    assert memory.MemoryType is vocabulary.MemoryType and memory.PrivacyScope is vocabulary.PrivacyScope
    assert transfer.Format is vocabulary.Format and transfer.FORMATS == vocabulary.FORMATS
