"""The ids of hand-written notes (notes whose frontmatter has no ``id``), kept beside the vault's
notes instead of in them: the user's file is never rewritten to give it an id.

A hand-written note's id is ``uuid5`` of its path in the vault (:func:`.notes.note_id`), so every
copy of the vault gives it the same id with nothing stored at all. Only when such a note is renamed
or moved (found as the same bytes under a new path in one refresh) does the old id have to follow
it: the sidecar ``.mcp-memory/ids.json`` records ``{"new/path.md": "<its id>"}``. It lives in the
vault's hidden folder, outside the index (``reindex`` deletes the index, never this file), and the
folder's own ``.gitignore`` leaves it to git while ignoring the index.

Several servers may share a vault: a change is written inside the index's write transaction (one
writer at a time), merged with what the file holds now, atomically (temp file + rename).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterable
from pathlib import Path

from .notes import note_id
from .vault_files import Stamp, stamp_of
from .vault_io import LinkInVault, NotRegular, TooLarge, create_file, read_file, write_atomic

log = logging.getLogger(__name__)

SIDECAR_NAME = "ids.json"
SIDECAR_BYTES = 16 * 1024 * 1024  # a bigger ids.json is ignored (about 150k renamed notes)
GITIGNORE = "# mcp-memory: the index is derived from the notes; ids.json is not (keep it with them)\n*\n!.gitignore\n!ids.json\n"


class NoteIds:
    """Which id a hand-written note at a path has."""

    def __init__(self, vault: Path, folder: str) -> None:
        self._vault = vault
        self._relative = f"{folder}/{SIDECAR_NAME}"
        self._path = vault / self._relative
        self._ids: dict[str, str] = {}
        self._stamp: Stamp | None = None
        self._loaded = False

    @property
    def path(self) -> Path:
        return self._path

    def id_of(self, relative_path: str) -> str:
        """The id a hand-written note at ``relative_path`` has."""
        self._reload()
        return self._ids.get(relative_path) or note_id(relative_path)

    def is_hand_written(self, relative_path: str, memory_id: str) -> bool:
        """Whether the memory the index knows at ``relative_path`` was read from a hand-written note."""
        return memory_id == self.id_of(relative_path)

    def record(self, moved: Iterable[tuple[str, str]], gone: Iterable[str]) -> None:
        """Save ``(new path, id)`` for notes that moved and forget the paths that are ``gone``
        (call inside the index's write transaction). A no-op when nothing changes."""
        moved = list(moved)
        gone = set(gone)
        self._reload(force=True)
        ids = {path: memory_id for path, memory_id in self._ids.items() if path not in gone}
        for path, memory_id in moved:
            if memory_id == note_id(path):
                ids.pop(path, None)  # its path gives it already (moved back)
            else:
                ids[path] = memory_id
        if ids == self._ids:
            return
        data = json.dumps(dict(sorted(ids.items())), indent=1, ensure_ascii=False) + "\n"
        self._stamp = write_atomic(self._vault, self._relative, data.encode("utf-8"))
        self._ids = ids

    def _reload(self, *, force: bool = False) -> None:
        stamp = stamp_of(self._path)
        if self._loaded and stamp == self._stamp and not force:
            return
        self._loaded, self._stamp = True, stamp
        if stamp is None:
            self._ids = {}
            return
        try:
            raw, _ = read_file(self._vault, self._relative, SIDECAR_BYTES)
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not an object")
            self._ids = {str(path): str(memory_id) for path, memory_id in data.items()}
        except (OSError, ValueError, LinkInVault, TooLarge, NotRegular) as exc:
            log.warning(
                "Ignoring %s (%s): renamed hand-written notes get the ids of their paths.", self._path, exc
            )
            self._ids = {}


def write_gitignore(vault: Path, folder: str) -> None:
    """The hidden folder's ``.gitignore``: git keeps ``ids.json``, never the index."""
    with contextlib.suppress(OSError, LinkInVault):
        create_file(vault, f"{folder}/.gitignore", GITIGNORE.encode("utf-8"))
