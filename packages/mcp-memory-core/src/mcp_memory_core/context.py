"""Where the server runs: the project namespace and seed 001's automatic context.

The project is the git repository the server was started in, named after the repository's main
working tree, so every worktree of one repository (``git worktree add``) shares its namespace; a
plain directory is a project of its own name. The filesystem root and the home directory (where
Claude Desktop starts its servers) are no project: writes then go to the personal ``user``
namespace. ``user`` itself is reserved for that: a project called "user" becomes "user-project".
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .models import USER_NAMESPACE

NAMESPACE_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def project_root(cwd: Path) -> Path | None:
    """The nearest directory at or above ``cwd`` holding ``.git``."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return None


def main_worktree(root: Path) -> Path:
    """The main working tree of the repository whose (linked or main) worktree is ``root``.

    A linked worktree's ``.git`` is a file ``gitdir: <main>/.git/worktrees/<name>``, and that
    directory's ``commondir`` names the shared ``.git``; a submodule's ``.git`` file points into its
    superproject's ``.git/modules`` and has no ``commondir``: it stays a project of its own."""
    marker = root / ".git"
    if not marker.is_file():
        return root
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return root
    if not text.startswith("gitdir:"):
        return root
    gitdir = Path(text.removeprefix("gitdir:").strip())
    gitdir = (root / gitdir).resolve() if not gitdir.is_absolute() else gitdir
    try:
        common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return root
    return common.parent if common.name == ".git" else common


def slug(name: str) -> str:
    """A directory name as a valid namespace: lowercase, other characters as '-', at most 64."""
    text = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    return text[:64].rstrip("-._")


def derive_project(cwd: Path | None = None) -> str | None:
    """The project namespace of ``cwd`` (see the module docstring), or None when there is none."""
    cwd = (cwd or Path.cwd()).resolve()
    root = project_root(cwd)
    if root is not None and (name := slug(main_worktree(root).name)):
        return _not_reserved(name)
    if cwd == Path(cwd.anchor) or cwd == Path.home().resolve():
        return None
    name = slug(cwd.name)
    return _not_reserved(name) if name else None


def derive_namespace(cwd: Path | None = None) -> str:
    """Where writes go by default: the project, else the personal ``user`` namespace."""
    return derive_project(cwd) or USER_NAMESPACE


def _not_reserved(name: str) -> str:
    return f"{name}-project" if name == USER_NAMESPACE else name


def current_context(cwd: Path | None = None) -> dict[str, str]:
    """Seed 001's automatic context: working directory, project and platform."""
    cwd = (cwd or Path.cwd()).resolve()
    root = project_root(cwd)
    return {
        "cwd": str(cwd),
        "project": main_worktree(root).name if root is not None else cwd.name,
        "platform": sys.platform,
    }
