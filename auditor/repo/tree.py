"""Where the repository's files come from: the working tree, or a git revision (gitsource)."""

from __future__ import annotations

import os
import typing as t
from pathlib import Path

MANIFEST_SUFFIXES = (".yaml", ".yml")


class Tree(t.Protocol):
    """Read-only view of the repository's files, by POSIX path relative to its root."""

    def files(self, folder: str) -> list[str]: ...

    def read(self, path: str) -> bytes: ...

    def is_dir(self, folder: str) -> bool: ...

    def subfolders(self, folder: str) -> list[str]: ...


class SymlinkOutside(OSError):
    """A file is a link that leads out of the repository."""


class WorkTree:
    """The files on disk below `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def _path(self, rel: str) -> Path:
        return self.root / rel

    def files(self, folder: str) -> list[str]:
        base = os.path.normpath(os.path.join(self.root, folder))
        if not os.path.isdir(base):
            return []
        found = []
        skip = len(os.path.join(self.root, ""))
        # os.walk and string slicing: several times faster than rglob and relative_to
        for folder_path, _dirs, names in os.walk(base):
            rel = folder_path[skip:].replace(os.sep, "/") or "."
            found += [f"{rel}/{n}" for n in names if n.endswith(MANIFEST_SUFFIXES)]
        return sorted(found)

    def read(self, path: str) -> bytes:
        full = os.path.join(self.root, path)
        if os.path.islink(full):
            target = Path(full).resolve()
            if not target.is_relative_to(self.root):
                raise SymlinkOutside(f"{path} is a link to {target}, outside the repository")
        with open(full, "rb") as f:
            return f.read()

    def is_dir(self, folder: str) -> bool:
        return self._path(folder).is_dir()

    def subfolders(self, folder: str) -> list[str]:
        base = self._path(folder)
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
