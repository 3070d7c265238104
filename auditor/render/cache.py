"""Rendered output kept in the user cache (the cache home's `render` area, auditor/cache.py) by
the hash of everything that made it.

The key is the renderer's release, the source's spec, the cluster's kube version, and the
path and bytes of every file the render can reach: a change to any of them renders again, a
change anywhere else does not. Only a successful render is kept (a failure is cheap to repeat
and its message may depend on the machine).
"""

from __future__ import annotations

import typing as t
from pathlib import Path

from auditor import cache

FOLDER = "render"


def key(parts: t.Iterable[str], files: t.Iterable[tuple[str, bytes]]) -> str:
    return cache.key(*parts, files=files)


def _file(digest: str) -> Path:
    return cache.area(FOLDER) / digest[:2] / f"{digest}.yaml"


def get(digest: str) -> str | None:
    data = cache.read(_file(digest))
    return None if data is None else data.decode()


def put(digest: str, text: str) -> None:
    """Keep `text` under `digest` (a read-only cache only costs the next run a render)."""
    cache.write(_file(digest), text.encode())
