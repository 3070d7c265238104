"""A tree of a few files, for the tests of auditor/render."""

from __future__ import annotations

import posixpath


class Files:
    """A tree of a few files (the Tree protocol's part that apps reads)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.data = files

    def files(self, folder: str, suffixes: tuple[str, ...] = (".yaml", ".yml")) -> list[str]:
        inside = "" if folder in ("", ".") else folder.rstrip("/") + "/"
        return sorted(p for p in self.data if p.startswith(inside) and p.endswith(suffixes))

    def read(self, path: str) -> bytes:
        return self.data[path].encode()

    def is_dir(self, folder: str) -> bool:
        return any(posixpath.dirname(p).startswith(folder) for p in self.data)

    def subfolders(self, folder: str) -> list[str]:
        inside = folder.rstrip("/") + "/"
        rests = [p[len(inside) :] for p in self.data if p.startswith(inside)]
        return sorted({rest.split("/")[0] for rest in rests if "/" in rest})
