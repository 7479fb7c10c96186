"""The vault's folders as the store touches them: no symbolic link inside the vault is ever
followed, and no file is read whole before its size is known.

A folder is opened one component at a time from the vault's root (resolved once, when the store is
made: the root may be a link the user chose), each with ``O_NOFOLLOW`` relative to the folder above
(``openat``), so a folder swapped for a link between a check and a use is refused too. Every
operation inside it (stat, open, rename, link, unlink) is relative to that folder's descriptor.
Where descriptors of folders cannot be used (Windows), each component is checked with ``lstat``
(links and junctions refused) and the operations take paths.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

TEMP_PREFIX = ".mcp-memory-tmp-"
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO named like a note must not block a read
O_BINARY = getattr(os, "O_BINARY", 0)
_REPARSE_POINT = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)
_AT = {os.open, os.stat, os.rename, os.link, os.unlink, os.mkdir} <= os.supports_dir_fd
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Stamp:
    """What a scan sees of a file without reading it (``link``: it is a symbolic link, never read)."""

    mtime_ns: int
    size: int
    link: bool = False


class LinkInVault(Exception):
    """A symbolic link where the vault must hold a real folder or file: mcp-memory follows none."""

    def __init__(self, relative: str) -> None:
        super().__init__(relative)
        self.path = relative


class TooLarge(Exception):
    """A file bigger than the store reads."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} > {limit}")
        self.size = size
        self.limit = limit


class NotRegular(Exception):
    """Something that is not a regular file where a note or transcript is expected (a FIFO, a device)."""


def is_link(st: os.stat_result) -> bool:
    return stat.S_ISLNK(st.st_mode) or bool(getattr(st, "st_file_attributes", 0) & _REPARSE_POINT)


LINK = Stamp(0, 0, link=True)  # every link looks the same: it is reported once, not at each scan


def stamp_from(st: os.stat_result) -> Stamp:
    return LINK if is_link(st) else Stamp(st.st_mtime_ns, st.st_size)


class Folder:
    """One folder of the vault, reached without following links (see the module docstring)."""

    def __init__(self, path: Path, relative: str, fd: int | None) -> None:
        self.path = path
        self.relative = relative
        self._fd = fd

    def _at(self, name: str) -> str:
        return name if self._fd is not None else str(self.path / name)

    def child(self, name: str) -> str:
        """The relative path of ``name`` in this folder."""
        return f"{self.relative}/{name}" if self.relative else name

    def lstat(self, name: str) -> os.stat_result | None:
        try:
            return os.stat(self._at(name), dir_fd=self._fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None

    def stamp(self, name: str) -> Stamp | None:
        st = self.lstat(name)
        return stamp_from(st) if st is not None else None

    def open_read(self, name: str) -> int:
        """A descriptor of the regular file ``name`` (LinkInVault for a link, NotRegular for the rest)."""
        if self._fd is None:  # no O_NOFOLLOW here: check first (Windows)
            st = self.lstat(name)
            if st is not None and is_link(st):
                raise LinkInVault(self.child(name))
        try:
            fd = os.open(self._at(name), os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_BINARY, dir_fd=self._fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK) and (st := self.lstat(name)) and is_link(st):
                raise LinkInVault(self.child(name)) from None
            raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise NotRegular(self.child(name))
        return fd

    def read(self, name: str, limit: int) -> tuple[bytes, Stamp]:
        """The bytes of ``name`` and its stamp, reading at most ``limit`` + 1 bytes (TooLarge beyond)."""
        fd = self.open_read(name)
        try:
            st = os.fstat(fd)
            if st.st_size > limit:
                raise TooLarge(st.st_size, limit)
            data = read_at_most(fd, limit + 1)
            if len(data) > limit:
                raise TooLarge(len(data), limit)
            return data, stamp_from(st)
        finally:
            os.close(fd)

    def write_temp(self, data: bytes | Iterable[bytes]) -> tuple[str, Stamp]:
        """A new hidden file holding ``data`` (or its chunks), flushed to disk: its name and stamp."""
        name = f"{TEMP_PREFIX}{secrets.token_hex(8)}.md"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY
        fd = os.open(self._at(name), flags, 0o666, dir_fd=self._fd)  # the umask applies
        try:
            for chunk in [data] if isinstance(data, bytes) else data:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            os.fsync(fd)
            stamp = stamp_from(os.fstat(fd))
        except BaseException:
            os.close(fd)
            self.unlink_quietly(name)
            raise
        os.close(fd)
        return name, stamp

    def rename(self, source: str, target: str) -> None:
        """Rename within this folder (replaces ``target`` on POSIX: only for fresh hidden names)."""
        os.rename(self._at(source), self._at(target), src_dir_fd=self._fd, dst_dir_fd=self._fd)

    def place(self, source: str, target: str) -> Stamp | None:
        """Give ``source``'s file the name ``target`` without ever replacing a file there
        (FileExistsError); ``source``'s name is gone afterwards. A hard link is atomic and never
        replaces; where the file system has none, Windows' rename never replaces either, and POSIX
        falls back to an exclusive create and a copy (whose stamp is returned: another file's)."""
        copied: Stamp | None = None
        try:
            os.link(self._at(source), self._at(target), src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
                raise
            if os.name == "nt":
                os.rename(self._at(source), self._at(target))
                return None
            copied = self._copy_exclusive(source, target)
        os.unlink(self._at(source), dir_fd=self._fd)
        return copied

    def _copy_exclusive(self, source: str, target: str) -> Stamp:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_BINARY
        fd_in = self.open_read(source)
        try:
            fd_out = os.open(self._at(target), flags, 0o666, dir_fd=self._fd)
            try:
                for chunk in chunks_of(fd_in):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd_out, view) :]
                os.fsync(fd_out)
                return stamp_from(os.fstat(fd_out))
            finally:
                os.close(fd_out)
        finally:
            os.close(fd_in)

    def replace(self, source: str, target: str) -> None:
        """Rename ``source`` over ``target`` (for the store's own files, never for notes)."""
        os.replace(self._at(source), self._at(target), src_dir_fd=self._fd, dst_dir_fd=self._fd)

    def unlink(self, name: str) -> None:
        os.unlink(self._at(name), dir_fd=self._fd)

    def unlink_quietly(self, name: str) -> None:
        with contextlib.suppress(OSError):
            self.unlink(name)

    def names(self) -> list[str]:
        return [name for name, _ in self.entries()]

    def entries(self) -> list[tuple[str, bool]]:
        """Each entry's name, and whether it is a folder (a link to one is not)."""
        with os.scandir(self._fd if self._fd is not None else self.path) as found:
            return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in found]

    def sync(self) -> None:
        """fsync the folder so a rename or unlink in it survives a crash (a no-op where it cannot)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self._fd)
        else:
            sync_folder(self.path)


@contextlib.contextmanager
def open_folder(vault: Path, relative: str, *, create: bool = False, mode: int = 0o777) -> Iterator[Folder]:
    """The folder ``relative`` (posix, '' = the vault) of ``vault``, created if ``create`` (with
    ``mode``, less the umask). LinkInVault names the first component that is a link;
    FileNotFoundError if it is missing."""
    parts = [part for part in relative.split("/") if part]
    if not _AT:
        _check_components(vault, parts, create, mode)
        yield Folder(vault.joinpath(*parts), "/".join(parts), None)
        return
    fd = os.open(vault, os.O_RDONLY | O_DIRECTORY)
    try:
        for depth, part in enumerate(parts, start=1):
            child = _open_child(fd, part, "/".join(parts[:depth]), create, mode)
            os.close(fd)
            fd = child
        yield Folder(vault.joinpath(*parts), "/".join(parts), fd)
    finally:
        os.close(fd)


def _open_child(fd: int, name: str, relative: str, create: bool, mode: int) -> int:
    flags = os.O_RDONLY | O_DIRECTORY | O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, mode, dir_fd=fd)
        return _open_child(fd, name, relative, False, mode)
    except OSError:
        with contextlib.suppress(OSError):
            if is_link(os.stat(name, dir_fd=fd, follow_symlinks=False)):
                raise LinkInVault(relative) from None
        raise


def _check_components(vault: Path, parts: list[str], create: bool, mode: int) -> None:
    for depth in range(1, len(parts) + 1):
        path = vault.joinpath(*parts[:depth])
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if not create:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, mode)
            st = os.lstat(path)
        if is_link(st):
            raise LinkInVault("/".join(parts[:depth]))
        if not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", str(path))


def split(relative: str) -> tuple[str, str]:
    """``(folder, name)`` of a relative posix path."""
    folder, _, name = relative.rpartition("/")
    return folder, name


def stamp_in(vault: Path, relative: str) -> Stamp | None:
    """The stamp of the file at ``relative`` (``link=True`` when it, or a folder above it, is a link;
    None when it is missing)."""
    folder, name = split(relative)
    try:
        with open_folder(vault, folder) as opened:
            return opened.stamp(name)
    except LinkInVault:
        return LINK
    except (FileNotFoundError, NotADirectoryError):
        return None


def read_file(vault: Path, relative: str, limit: int) -> tuple[bytes, Stamp]:
    """The bytes of the file at ``relative`` (at most ``limit``) and its stamp. Raises LinkInVault,
    TooLarge, NotRegular, FileNotFoundError or another OSError."""
    folder, name = split(relative)
    with open_folder(vault, folder) as opened:
        return opened.read(name, limit)


def write_atomic(vault: Path, relative: str, data: bytes) -> Stamp:
    """Replace the store's own file ``relative`` (``ids.json``) with ``data``, atomically and durably."""
    folder, name = split(relative)
    with open_folder(vault, folder, create=True) as opened:
        temp, stamp = opened.write_temp(data)
        try:
            opened.replace(temp, name)
        except BaseException:
            opened.unlink_quietly(temp)
            raise
        opened.sync()
        return stamp


def create_file(vault: Path, relative: str, data: bytes) -> bool:
    """Write ``data`` as a new file at ``relative``; False (nothing written) if one is there."""
    folder, name = split(relative)
    with open_folder(vault, folder, create=True) as opened:
        if opened.lstat(name) is not None:
            return False
        temp, _ = opened.write_temp(data)
        try:
            opened.place(temp, name)
        except FileExistsError:
            return False
        finally:
            opened.unlink_quietly(temp)
        opened.sync()
        return True


def read_at_most(fd: int, limit: int) -> bytes:
    parts: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, min(left, _CHUNK))):
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def chunks_of(fd: int) -> Iterator[bytes]:
    """The bytes of the file behind ``fd`` from its start, in chunks."""
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, _CHUNK):
        yield chunk


def digest_of(fd: int) -> str:
    """sha256 of the file behind ``fd`` from its start, read in chunks."""
    digest = hashlib.sha256()
    for chunk in chunks_of(fd):
        digest.update(chunk)
    return digest.hexdigest()


def sync_folder(folder: Path) -> None:
    """fsync a folder so a rename or unlink in it survives a crash (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
