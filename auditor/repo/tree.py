"""Where the repository's files come from: the working tree, or a git revision (gitsource)."""

from __future__ import annotations

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
        base = self._path(folder)
        if not base.is_dir():
            return []
        return sorted(
            p.relative_to(self.root).as_posix()
            for p in base.rglob("*")
            if p.suffix in MANIFEST_SUFFIXES and (p.is_file() or p.is_symlink())
        )

    def read(self, path: str) -> bytes:
        full = self._path(path)
        if full.is_symlink():
            target = full.resolve()
            if not target.is_relative_to(self.root):
                raise SymlinkOutside(f"{path} is a link to {target}, outside the repository")
        return full.read_bytes()

    def is_dir(self, folder: str) -> bool:
        return self._path(folder).is_dir()

    def subfolders(self, folder: str) -> list[str]:
        base = self._path(folder)
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
