"""Which files of a working tree changed, for the resident validate (auditor/lsp/resident.py):
told by Linux's inotify, so a question after a one-file edit costs no walk of the tree.

`Files.look()` returns the paths (relative to the root, POSIX) that changed, appeared or went
away since the last look. The first look walks the tree, each folder watched before it is
listed, so a file written meanwhile is either listed or told. Every later look reads the
kernel's queue: a file written, attributes changed, created, deleted or moved; a folder created
or moved in is walked (and watched), one deleted or moved out takes its files with it. When
the queue overflowed, or inotify is not there or out of watches, a look walks the whole tree
again and compares each file's stat (mtime, ctime, size, inode) with the last, and the bytes of
a file written within two seconds of either look (a write within one timestamp tick keeps the
stat: git's and mypy's rule).

A linked folder is followed, as the tree follows it (auditor/repo/tree.py), unless it leads
back into a folder that holds it; a folder reached by two paths is watched once and its events
are told under both.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import os
import stat
import struct
import time

from auditor.repo.cache import RACY_NS

Stamp = tuple[int, int, int, int]  # mtime_ns, ctime_ns, size, inode

# <sys/inotify.h>
IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
MASK |= IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
SKIPPED = ".git"
Events = list[tuple[list[str], str, int]] | None  # (folders, name, mask); None: overflowed


class OutOfWatches(Exception):
    """inotify refused a watch (the user's limit): the tree is walked at each look instead."""


class _Inotify:
    """One inotify instance: watch descriptors and the folders (relative) each stands for."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.fd = self.libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.folders: dict[int, list[str]] = {}

    def watch(self, folder: str, rel: str) -> None:
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), MASK)
        if wd < 0:
            raise OutOfWatches(os.strerror(ctypes.get_errno()))
        self.folders.setdefault(wd, []).append(rel)

    def forget(self, prefix: str) -> None:
        """Tell nothing more under folder `prefix`: it moved away (its watches go with it)."""
        for wd, rels in self.folders.items():
            self.folders[wd] = [r for r in rels if not r.startswith(prefix)]

    def events(self) -> Events:
        """The queued events as (folder prefixes, name, mask); None: the queue overflowed."""
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(self.fd, 1 << 16):
                data += chunk
        found: list[tuple[list[str], str, int]] = []
        at = 0
        while at < len(data):
            wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + size].rstrip(b"\0")
            at += _EVENT.size + size
            if mask & IN_Q_OVERFLOW:
                return None
            if mask & IN_IGNORED:  # the folder is gone or no longer watched
                self.folders.pop(wd, None)
                continue
            found.append((self.folders.get(wd, []), os.fsdecode(name), mask))
        return found

    def close(self) -> None:
        os.close(self.fd)


class Files:
    """The files of a tree and their stat, kept current by looking (see the module's doc)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, Stamp] = {}
        self.digests: dict[str, bytes | None] = {}  # walking: files written near the last look
        self.inotify: _Inotify | None = None
        self.watching = True  # False once inotify failed: walk every time

    def look(self) -> set[str]:
        """The paths that changed since the last look (all of them, the first time)."""
        events = self.inotify.events() if self.inotify is not None else None
        if events is None:
            return self._walk_all()
        changed: set[str] = set()
        try:
            for prefixes, name, mask in events:
                for prefix in prefixes:
                    changed |= self._told(prefix, name, mask)
        except OutOfWatches:
            self.watching = False
            return changed | self._walk_all()
        return changed

    def _told(self, prefix: str, name: str, mask: int) -> set[str]:
        """What an event on `name` in folder `prefix` changed: a file's stat, a folder (or a
        link to one) created or moved in walked, whatever is no longer there dropped."""
        path = prefix + name
        if not name:  # about the watched folder itself (deleted, moved): its parent tells
            return set()
        try:
            st = os.stat(os.path.join(self.root, path))
        except OSError:
            return self._drop(path)
        if not stat.S_ISDIR(st.st_mode):
            self.files[path] = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
            return {path}
        if not mask & (IN_CREATE | IN_MOVED_TO):
            return set()  # a folder's own attributes: nothing of its files
        gone = self._drop(path)
        found = self._walk(os.path.join(self.root, path), path + "/", self._holders(prefix))
        self.files.update(found)
        return gone | set(found)

    def _drop(self, path: str) -> set[str]:
        """Forget `path`, a file or a folder (and what it held); the paths forgotten."""
        if self.files.pop(path, None) is not None:
            return {path}
        assert self.inotify is not None
        self.inotify.forget(path + "/")
        gone = {p for p in self.files if p.startswith(path + "/")}
        for p in gone:
            del self.files[p]
        return gone

    def _holders(self, prefix: str) -> frozenset[tuple[int, int]]:
        """The folders that hold folder `prefix` and it (a walk under it ends at a loop)."""
        held, folder = set(), self.root
        for part in ["", *prefix.split("/")[:-1]]:
            folder = os.path.join(folder, part) if part else folder
            info = os.stat(folder)
            held.add((info.st_dev, info.st_ino))
        return frozenset(held)

    def _walk_all(self) -> set[str]:
        """Walk the whole tree (watched anew); the paths whose stat, or bytes, differ."""
        racy_after = time.time_ns() - RACY_NS
        if self.inotify is not None:
            self.inotify.close()
            self.inotify = None
        if self.watching:
            try:
                self.inotify = _Inotify()
            except OSError:
                self.watching = False
        before = self.files
        try:
            self.files = self._walk(self.root, "")
        except OutOfWatches:
            assert self.inotify is not None
            self.inotify.close()
            self.inotify, self.watching = None, False
            self.files = self._walk(self.root, "")
        changed = set(before.keys() ^ self.files.keys())
        changed.update(p for p, stamp in self.files.items() if before.get(p, stamp) != stamp)
        return changed | self._racy(before, racy_after)

    def _racy(self, before: dict[str, Stamp], racy_after: int) -> set[str]:
        """The files written within a tick of this look or the last whose bytes changed."""
        changed, digests = set(), {}
        for path, stamp in self.files.items():
            if stamp[0] > racy_after or stamp[1] > racy_after or path in self.digests:
                digest = _digest(os.path.join(self.root, path))
                if before.get(path) == stamp and self.digests.get(path, digest) != digest:
                    changed.add(path)
                if stamp[0] > racy_after or stamp[1] > racy_after:
                    digests[path] = digest
        self.digests = digests
        return changed

    def _walk(
        self, top: str, rel: str, holders: frozenset[tuple[int, int]] = frozenset()
    ) -> dict[str, Stamp]:
        """The files under folder `top` (`rel` from the root; inside `holders`), each folder
        watched before it is listed; a folder that holds itself (a link loop) is not entered."""
        found: dict[str, Stamp] = {}
        folders: list[tuple[str, str, frozenset[tuple[int, int]]]] = [(top, rel, holders)]
        while folders:
            folder, prefix, above = folders.pop()
            try:
                info = os.stat(folder)
                if (info.st_dev, info.st_ino) in above:
                    continue
                if self.inotify is not None:
                    self.inotify.watch(folder, prefix)
                mine = above | {(info.st_dev, info.st_ino)}
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.name == SKIPPED:
                            continue
                        if entry.is_dir():
                            folders.append((entry.path, f"{prefix}{entry.name}/", mine))
                            continue
                        with contextlib.suppress(OSError):  # a dangling link: as before
                            st = entry.stat()
                            found[prefix + entry.name] = (
                                st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino,
                            )  # fmt: skip
            except OSError:
                continue  # gone meanwhile, or not ours to list: the tree says so when read
        return found

    def close(self) -> None:
        if self.inotify is not None:
            self.inotify.close()
            self.inotify = None


def _digest(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).digest()
    except OSError:
        return None
