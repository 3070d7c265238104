"""Where the repository's files come from: the working tree, or a git revision (gitsource).

Nothing below a folder is skipped in silence. A linked folder inside the repository is
followed and its files judged like any other; one that leads outside it, or back into a folder
that holds it, is listed and refused when read, as are FIFOs, sockets and devices (never
opened: a FIFO would block the reader forever) and files too large for Argo CD to sync.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
import typing as t
from pathlib import Path

MANIFEST_SUFFIXES = (".yaml", ".yml")
# Argo CD refuses a directory application whose manifests pass 10M together
# (reposerver.max.combined.directory.manifests.size), so a larger file can never sync.
MAX_FILE_BYTES = 10 * 1024 * 1024


class Tree(t.Protocol):
    """Read-only view of the repository's files, by POSIX path relative to its root.

    `files` lists manifests, and also what it refused (a linked folder outside the repository,
    say: its path ends in "/"); `read` of a refused path raises the reason (an OSError).
    """

    def files(self, folder: str, suffixes: tuple[str, ...] = MANIFEST_SUFFIXES) -> list[str]: ...

    def read(self, path: str) -> bytes: ...

    def is_dir(self, folder: str) -> bool: ...

    def subfolders(self, folder: str) -> list[str]: ...


class SymlinkOutside(OSError):
    """A file or folder is a link that leads out of the repository."""


class SymlinkLoop(OSError):
    """A linked folder leads back into a folder that holds it, or links go round in a circle."""


class NotAFile(OSError):
    """A manifest path is a FIFO, socket or device: refused without being opened."""


class FileTooLarge(OSError):
    """A manifest file is larger than any Argo CD syncs."""


def too_large(path: str, size: int) -> FileTooLarge:
    return FileTooLarge(
        f"{path} is {size / 2**20:.1f} MiB; Argo CD syncs at most {MAX_FILE_BYTES // 2**20} MiB "
        "of manifests per application (reposerver.max.combined.directory.manifests.size), "
        "so it is not read"
    )


class WorkTree:
    """The files on disk below `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._root = str(self.root)
        self._inside = os.path.join(self._root, "")
        self._refused: dict[str, OSError] = {}
        # Files the walk reached through real folders only: `read` opens them without
        # resolving every step of the path again (a third of reading a large repository).
        self._plain: set[str] = set()
        # Folders `subfolders` found real (no link on the way from the root): a file directly
        # in one (a tenant's profile, read before any walk) is opened the same way.
        self._real: set[str] = set()

    def _path(self, rel: str) -> Path:
        return self.root / rel

    def _located(self, folder: str) -> tuple[str, str]:
        """`folder`'s absolute path (normalized) and its POSIX path below the root: a plain
        relative path (`tenants/a`, as the loader names folders, thousands a run) as it is,
        any other through normpath and relpath."""
        plain = folder and folder[0] != "/" and folder[-1] != "/" and "//" not in folder
        if plain and "/." not in f"/{folder}" and os.sep == "/":
            return f"{self._inside}{folder}", folder
        top = os.path.normpath(os.path.join(self.root, folder))
        return top, os.path.relpath(top, self.root).replace(os.sep, "/")

    def _within(self, real: str) -> bool:
        return real == self._root or real.startswith(self._inside)

    def files(self, folder: str, suffixes: tuple[str, ...] = MANIFEST_SUFFIXES) -> list[str]:
        """The files below `folder` whose names end in one of `suffixes` (("",): every file,
        as a renderer reads a chart's templates and helpers)."""
        top, rel = self._located(folder)
        real = top if rel in self._real else os.path.realpath(top)  # known real: no lstats
        if not self._within(real):
            return [
                self._refuse(rel, SymlinkOutside(f"{rel} leads to {real}, outside the repository"))
            ]
        if not os.path.isdir(real):
            return []
        # The real folders from the root down to here: a link back to any of them is a loop.
        root = self._root
        steps = [] if real == root else real[len(self._inside) :].split(os.sep)
        chain = {root, *(os.path.join(root, *steps[:i]) for i in range(1, len(steps)))}
        found: list[str] = []
        self._walk(rel, real, frozenset(chain | {real}), found, suffixes)
        return sorted(found)

    def _walk(
        self,
        rel: str,
        real: str,
        chain: frozenset[str],
        found: list[str],
        suffixes: tuple[str, ...] = MANIFEST_SUFFIXES,
    ) -> None:
        # os.scandir and string joins: several times faster than rglob and relative_to
        try:
            entries = list(os.scandir(real))
        except OSError as exc:
            found.append(self._refuse(rel, exc))
            return
        plain = real == f"{self._inside}{rel}" if rel != "." else real == self._root
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel != "." else entry.name
            if entry.is_symlink():
                self._link(child, entry, chain, found, suffixes)
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                self._walk(child, entry.path, chain | {entry.path}, found, suffixes)
            elif entry.name.endswith(suffixes):
                found.append(child)
                if plain:
                    self._plain.add(child)

    def _link(
        self,
        child: str,
        entry: os.DirEntry[str],
        chain: frozenset[str],
        found: list[str],
        suffixes: tuple[str, ...] = MANIFEST_SUFFIXES,
    ) -> None:
        """Follow a linked folder inside the repository; refuse one outside, or a loop."""
        target = os.path.realpath(entry.path)
        why: OSError | None = None
        if os.path.isdir(target):
            if not self._within(target):
                why = SymlinkOutside(
                    f"{child} is a link to the folder {target}, outside the repository"
                )
            elif target in chain:
                why = SymlinkLoop(f"{child} is a link to {target}, a folder that holds it: a loop")
            else:
                self._walk(child, target, chain | {target}, found, suffixes)
        elif entry.name.endswith(suffixes):
            found.append(child)  # read() judges where it leads
        elif not os.path.exists(entry.path):  # perhaps a folder link, broken or in a circle
            why = _broken(child, entry.path)
        if why is not None:
            found.append(self._refuse(child, why))

    def _refuse(self, rel: str, why: OSError) -> str:
        """List a refused folder (as "path/") so whoever reads it hears why."""
        key = rel.rstrip("/") + "/"
        self._refused[key] = why
        return key

    def read(self, path: str) -> bytes:
        refused = self._refused.get(path)
        if refused is not None:
            raise refused
        full = os.path.join(self.root, path)
        if path in self._plain or posixpath.dirname(path) in self._real:
            data = self._read_plain(path, full)
            if data is not None:
                return data
        real = os.path.realpath(full)
        if not self._within(real):
            raise SymlinkOutside(f"{path} leads to {real}, outside the repository")
        try:
            info = os.stat(full)  # follows links
        except OSError:
            if os.path.islink(full):
                raise _broken(path, full) from None
            raise
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile(f"{path} is {_kind(info.st_mode)}, not a regular file; not opened")
        if info.st_size > MAX_FILE_BYTES:
            raise too_large(path, info.st_size)
        fd = os.open(full, os.O_RDONLY)
        try:
            return _read_bounded(fd, info.st_size)
        finally:
            os.close(fd)

    def _read_plain(self, path: str, full: str) -> bytes | None:
        """A walked file's bytes, opened without following a link (None: it is one now, or
        gone; `read` then judges it the long way). Non-blocking, should a FIFO have replaced it."""
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise NotAFile(f"{path} is {_kind(info.st_mode)}, not a regular file; not opened")
            if info.st_size > MAX_FILE_BYTES:
                raise too_large(path, info.st_size)
            return _read_bounded(fd, info.st_size)
        finally:
            os.close(fd)

    def is_dir(self, folder: str) -> bool:
        return self._path(folder).is_dir()

    def subfolders(self, folder: str) -> list[str]:
        top, rel = self._located(folder)
        try:  # scandir knows most entries' types without a stat each (thousands of tenants)
            with os.scandir(top) as entries:
                found = [e for e in entries if not e.name.startswith(".") and e.is_dir()]
        except (NotADirectoryError, FileNotFoundError):
            return []
        if rel in self._real or os.path.realpath(top) == top:  # real: so are its own folders
            inside = "" if rel == "." else f"{rel}/"
            self._real.update(inside + e.name for e in found if not e.is_symlink())
        return sorted(e.name for e in found)


def _read_bounded(fd: int, size: int) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes, should the file grow in the meantime. Reading the size
    the file has: asking for the bound each time costs a 10 MiB buffer per file."""
    data = b""
    while len(data) <= MAX_FILE_BYTES:
        chunk = os.read(fd, max(size + 1 - len(data), 1 << 16))
        if not chunk:
            break
        data += chunk
    return data[: MAX_FILE_BYTES + 1]


def _broken(rel: str, full: str) -> OSError:
    try:
        os.stat(full)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return SymlinkLoop(f"{rel} is a link that leads round in a circle")
        return FileNotFoundError(f"{rel} is a link to {os.readlink(full)}, which does not exist")
    return FileNotFoundError(f"{rel} is a link that cannot be followed")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"


class Overlay(WorkTree):
    """The files on disk below `root`, with the unsaved text of the files an editor has open
    in their place (`kueue-gitops lsp`): a buffer is read as if it were the file, and a buffer
    with no file yet is listed with the others of its folder."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.buffers: dict[str, bytes] = {}  # by POSIX path relative to the root

    def files(self, folder: str, suffixes: tuple[str, ...] = MANIFEST_SUFFIXES) -> list[str]:
        found = super().files(folder, suffixes)
        inside = "" if folder in ("", ".") else folder.rstrip("/") + "/"
        extra = [
            p
            for p in self.buffers
            if p.startswith(inside) and p.endswith(suffixes) and p not in found
        ]
        return sorted(found + extra) if extra else found

    def read(self, path: str) -> bytes:
        data = self.buffers.get(path)
        return super().read(path) if data is None else data
