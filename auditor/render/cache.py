"""Rendered output kept in the user cache by the hash of everything that made it.

The key is the renderer's release, the source's spec, the cluster's kube version, and the
path and bytes of every file the render can reach: a change to any of them renders again, a
change anywhere else does not. Only a successful render is kept (a failure is cheap to repeat
and its message may depend on the machine).
"""

from __future__ import annotations

import hashlib
import os
import typing as t
from pathlib import Path

from auditor.repo.cache import user_cache_root

FOLDER = "render"


def key(parts: t.Iterable[str], files: t.Iterable[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    for path, data in sorted(files):
        digest.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _file(digest: str) -> Path:
    return user_cache_root() / FOLDER / digest[:2] / f"{digest}.yaml"


def get(digest: str) -> str | None:
    try:
        return _file(digest).read_text()
    except OSError:
        return None


def put(digest: str, text: str) -> None:
    """Keep `text` under `digest`; written aside and renamed, so a reader never sees half."""
    target = _file(digest)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(text)
        partial.replace(target)
    except OSError:
        pass  # a read-only cache only costs the next run a render
