"""Whether a path can hold a file of ours (a SQLite database, a token file) before anything opens it."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def database_path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a database file, in words a user can act on, or None when it can.

    It cannot when it exists and is not a regular file (a folder; ``/dev/null`` or a pipe: SQLite
    would open it, put its -journal file beside it and keep nothing), or when a part of the path
    above it is a file, not a folder. A symlink to a regular file is fine.
    """
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        blocking = next((p for p in path.parents if os.path.lexists(p) and not p.is_dir()), None)
        if blocking is not None:
            return f"{path} cannot be a database: {blocking} is a file, not a folder"
        return None
    except OSError as exc:
        return f"{path} cannot be opened ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else "a device or other special file"
    return f"{path} is {kind}, not a database file"
