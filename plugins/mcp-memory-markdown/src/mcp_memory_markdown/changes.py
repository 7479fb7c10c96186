"""What changed in the vault since the last look: the paths to check, or "scan everything".

On Linux an inotify watch on every folder of the vault answers from the kernel's event queue, read
without blocking at each call: an edit that finished before the call is in the queue, so the next
search sees it, and a call when nothing changed costs one system call (a full scan of 10k notes costs
tens of milliseconds: docs/benchmarks.md). Elsewhere, or when inotify cannot watch (its watch limit,
a queue overflow, a folder created or moved), the answer is "scan everything".
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

from .vault_files import SUFFIXES

log = logging.getLogger(__name__)

EVERYTHING = None


class ChangeWatch:
    """``changes()``: the relative paths touched since the previous call, or ``None`` for "scan the
    whole vault" (the first call always says so)."""

    def __init__(self, vault: Path, skip: tuple[str, ...] = (), *, use_inotify: bool = True) -> None:
        self._vault = vault
        self._skip = set(skip)
        self._notify: Any = None
        self._folders: dict[int, str] = {}  # watch descriptor -> relative folder ('' = the vault)
        self._rescan = True
        if use_inotify and sys.platform == "linux":
            self._start()

    @property
    def watching(self) -> bool:
        return self._notify is not None

    def _start(self) -> None:
        try:
            from inotify_simple import INotify
        except ImportError:  # pragma: no cover - a dependency on Linux
            return
        try:
            self._notify = INotify(nonblocking=True)
            self._watch_tree("")
        except OSError as exc:
            log.warning(
                "Cannot watch the vault %s for edits (%s): every call scans it instead.", self._vault, exc
            )
            self.close()

    def _mask(self) -> int:
        from inotify_simple import flags

        return int(
            flags.CREATE
            | flags.DELETE
            | flags.MODIFY
            | flags.CLOSE_WRITE
            | flags.MOVED_FROM
            | flags.MOVED_TO
            | flags.ATTRIB
            | flags.DELETE_SELF
            | flags.MOVE_SELF
            | flags.ONLYDIR
            | flags.DONT_FOLLOW  # a folder swapped for a link is not watched through it
        )

    def _watch_tree(self, relative: str) -> None:
        stack = [relative]
        mask = self._mask()
        while stack:
            folder = stack.pop()
            path = self._vault / folder if folder else self._vault
            try:
                wd = self._notify.add_watch(str(path), mask)
            except FileNotFoundError:
                continue
            self._folders[wd] = folder
            with contextlib.suppress(OSError), os.scandir(path) as entries:
                for entry in entries:
                    child = f"{folder}/{entry.name}" if folder else entry.name
                    if (
                        not entry.name.startswith(".")
                        and child not in self._skip
                        and entry.is_dir(follow_symlinks=False)
                    ):
                        stack.append(child)

    def changes(self) -> set[str] | None:
        if self._notify is None:
            return EVERYTHING
        from inotify_simple import flags

        try:
            events = self._notify.read(timeout=0)
        except OSError as exc:
            log.warning("Reading the vault's change events failed (%s): scanning it instead.", exc)
            self.close()
            return EVERYTHING
        touched: set[str] = set()
        rescan, self._rescan = self._rescan, False
        for event in events:
            mask = event.mask
            if mask & flags.Q_OVERFLOW:
                rescan = True
                continue
            folder = self._folders.get(event.wd)
            if folder is None:
                continue
            if mask & (flags.DELETE_SELF | flags.MOVE_SELF | flags.IGNORED):
                self._folders.pop(event.wd, None)
                rescan = True
                continue
            path = f"{folder}/{event.name}" if folder and event.name else event.name or folder
            if mask & flags.ISDIR:
                if event.name.startswith(".") or path in self._skip:
                    continue
                if mask & (flags.CREATE | flags.MOVED_TO):
                    try:
                        self._watch_tree(path)
                    except OSError as exc:
                        log.warning("Cannot watch %s (%s): scanning the vault instead.", path, exc)
                        self.close()
                        return EVERYTHING
                rescan = True  # a folder came or went with whatever it holds
                continue
            if path.endswith(SUFFIXES):
                touched.add(path)
        return EVERYTHING if rescan else touched

    def close(self) -> None:
        notify, self._notify = self._notify, None
        self._folders = {}
        if notify is not None:
            with contextlib.suppress(OSError):
                notify.close()
