"""The one home of the user cache: its root, its areas, keys, atomic writes, size limits, clean.

Every cache of kueue-gitops is an area (a folder) under one root: $KUEUE_GITOPS_CACHE, else
$XDG_CACHE_HOME/kueue-gitops, else ~/.cache/kueue-gitops. Its clients (validate's packs, the
render cache, compiled validators and the CEL grammar, the sandbox's builds) name their area
here, so what lives under the root, how big it may grow and what `cache clean` frees is read
in one place. A key is the SHA-256 of the tool's version and the content of every input; an
entry is written aside and renamed, so a reader (another process, a parallel worker) never sees
half of one; an area past its limit loses its least recently written files first.

The builds (Kubernetes, Kueue, the simulator, the pinned tools: twenty minutes on two cores)
keep the paths their builders chose (auditor/sandbox/build.py) and are removed only when asked
for by name (`cache clean --builds`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import tempfile
import time
import typing as t
from dataclasses import dataclass
from pathlib import Path

ROOT_ENV = "KUEUE_GITOPS_CACHE"
MiB = 1 << 20


@dataclass(frozen=True)
class Area:
    name: str  # its folder under the root
    what: str  # for `cache clean`'s listing
    limit: int | None = None  # bytes; past it, the least recently written files go
    build: bool = False  # removed only by `cache clean --builds`
    cleaned: bool = True  # False: its owner removes it (a running sandbox's certificates)


AREAS = {
    area.name: area
    for area in (
        Area("validate", "validate's and drift's packs, per repository and cluster", 2048 * MiB),
        Area("render", "kustomize's and Helm's output, by its inputs", 512 * MiB),
        Area("validators", "compiled JSON Schema validators", 256 * MiB),
        Area("cel", "the CEL grammar's parser tables", 16 * MiB),
        Area("testenv", "the control plane: kube-apiserver, etcd, Kueue", build=True),
        Area("tools", "kustomize, Helm and Argo CD at their pinned releases", build=True),
        Area("kueue", "Kueue releases' sources and CRDs", build=True),
        Area("kueuesim", "the simulator, per Kueue release", build=True),
        Area("sandboxes", "sandboxes' state: `sandbox down` removes it", cleaned=False),
        Area("resident", "the resident validate's socket and lock", cleaned=False),
        Area("mermaid", "the tests' mermaid parser", build=True),
    )
}


def root() -> Path:
    """$KUEUE_GITOPS_CACHE, else $XDG_CACHE_HOME/kueue-gitops, else ~/.cache/kueue-gitops."""
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kueue-gitops"


def area(name: str) -> Path:
    """The folder of area `name` (a KeyError for an area not declared above)."""
    return root() / AREAS[name].name


@functools.cache
def version() -> str:
    """The installed tool's version, part of every key."""
    from importlib import metadata  # ~0.03 s of imports: only a run that keeps something

    try:
        return metadata.version("kueue-gitops")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "unknown"


def key(*parts: str | int, files: t.Iterable[tuple[str, bytes]] = ()) -> str:
    """The SHA-256 of the tool's version, `parts` and each file's path and bytes (any order)."""
    digest = hashlib.sha256(version().encode() + b"\0")
    for part in parts:
        digest.update(str(part).encode() + b"\0")
    for path, data in sorted(files):
        digest.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def read(path: Path) -> bytes | None:
    """The entry at `path`; None when it is missing or unreadable (a cache is never an error)."""
    try:
        return path.read_bytes()
    except OSError:
        return None


_trimmed: set[str] = set()  # the areas this process has held to their limit
TRIM_EVERY = 3600  # seconds: an area is measured at most this often (6000 packs: ~0.5 s)
STAMP = ".{}.measured"  # beside the areas: its mtime is when area {} was last measured


def write(path: Path, data: bytes) -> bool:
    """Keep `data` at `path` (under the root), written aside and renamed; False when the cache
    cannot be written (read-only, full), which only costs the next run its work."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        return False
    name = _area_of(path)
    if name is not None and name not in _trimmed:
        _trimmed.add(name)
        _trim_now_and_then(name)
    return True


def _trim_now_and_then(name: str) -> None:
    """Hold area `name` to its limit when no process did in the last TRIM_EVERY seconds: a
    validate run that writes one pack should not pay for measuring thousands."""
    stamp = root() / STAMP.format(name, name)
    try:
        if time.time() - stamp.stat().st_mtime < TRIM_EVERY:
            return
    except OSError:
        pass  # never measured
    try:
        stamp.touch()  # the area exists (a write just made it): so does the root
    except OSError:
        return
    trim(name)


def _area_of(path: Path) -> str | None:
    try:
        first = path.resolve().relative_to(root().resolve()).parts[0]
    except (ValueError, IndexError, OSError):
        return None
    return first if first in AREAS else None


@dataclass(frozen=True)
class Entry:
    path: Path
    size: int
    mtime: float


def entries(name: str) -> list[Entry]:
    """Every file of area `name`, least recently written first (symbolic links not followed)."""
    found = []
    for here, _, files in os.walk(area(name)):
        for file in files:
            path = Path(here, file)
            try:
                info = path.lstat()
            except OSError:
                continue
            found.append(Entry(path, info.st_size, info.st_mtime))
    return sorted(found, key=lambda e: e.mtime)


def trim(name: str, limit: int | None = None) -> list[Entry]:
    """Remove area `name`'s least recently written files until it holds at most `limit` bytes
    (the area's own limit by default; none: nothing goes); the files removed."""
    limit = AREAS[name].limit if limit is None else limit
    if limit is None:
        return []
    found = entries(name)
    total = sum(e.size for e in found)
    gone = []
    for entry in found:
        if total <= limit:
            break
        try:
            entry.path.unlink()
        except OSError:
            continue
        total -= entry.size
        gone.append(entry)
    return gone


@dataclass(frozen=True)
class Freed:
    area: Area
    path: Path
    size: int


def clean(builds: bool = False, dry_run: bool = False) -> list[Freed]:
    """Remove every area but the builds (with `builds`, those too) and the sandboxes' state (a
    running sandbox's: `sandbox down` removes it); with `dry_run`, only say what would go.
    Only the declared areas, each a real folder directly under the root: a symbolic link, or
    anything else under the root, is left where it is."""
    top = root()
    freed = []
    for declared in AREAS.values():
        folder = top / declared.name
        if not declared.cleaned or (declared.build and not builds):
            continue
        if folder.is_symlink() or not folder.is_dir():
            continue
        size = sum(e.size for e in entries(declared.name))
        if not dry_run:
            shutil.rmtree(folder, ignore_errors=True)
        freed.append(Freed(declared, folder, size))
    return freed
