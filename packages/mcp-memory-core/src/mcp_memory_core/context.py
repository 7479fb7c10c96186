"""Where the server runs: the default namespace (the project) and seed 001's automatic context.

The default namespace is the name of the git repository the server was started in, else the name of
the working directory, else ``default`` (the filesystem root or the home directory name no project).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from .models import DEFAULT_NAMESPACE

NAMESPACE_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def project_root(cwd: Path) -> Path | None:
    """The nearest directory at or above ``cwd`` holding ``.git``."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return None


def slug(name: str) -> str:
    """A directory name as a valid namespace: lowercase, other characters as '-', at most 64."""
    text = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-._")
    return text[:64].rstrip("-._")


def derive_namespace(cwd: Path | None = None) -> str:
    cwd = (cwd or Path.cwd()).resolve()
    root = project_root(cwd)
    if root is not None and slug(root.name):
        return slug(root.name)
    if cwd == Path(cwd.anchor) or cwd == Path.home().resolve():
        return DEFAULT_NAMESPACE
    return slug(cwd.name) or DEFAULT_NAMESPACE


def current_context(cwd: Path | None = None) -> dict[str, str]:
    """Seed 001's automatic context: working directory, project and platform."""
    cwd = (cwd or Path.cwd()).resolve()
    root = project_root(cwd)
    return {
        "cwd": str(cwd),
        "project": root.name if root is not None else cwd.name,
        "platform": sys.platform,
    }
