"""What `validate` learned about each manifest file, kept in the user cache directory.

One pack per repository and cluster (`validate/<repository hash>/<cluster>.pickle` under the
cache root) holds, per file path: the file's stat signature, the SHA-256 of its bytes, its parsed
documents and loading problems, and the validator's per-object results (opaque bytes here; the
validate pipeline makes and reads them); and per policy check what validate/kept.py keeps of it.
The root, atomic writes and size limits are the cache home's (auditor/cache.py); this module is
the validate area's layout and keys. A pack is used only when its tool key (package version,
cache format and a hash of the auditor source, so an edited checkout never reuses old results)
and the cluster's schema fingerprint (every file under `schemas/<cluster>/`) are the current
ones; otherwise it starts empty.

A file is served from its entry when its stat signature (mtime, ctime, size, inode) is unchanged
and the file was already older than two seconds when the signature was taken (mypy's and git's
fast path; ctime changes on every write, even one that puts the mtime back), or else when the
SHA-256 of its bytes is unchanged. A pack that cannot be read is ignored and rebuilt, never an
error.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import pickle
import shutil
import sys
import time
import types
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from auditor import cache

FORMAT = 2  # bump when what a pack holds changes shape or meaning
FOLDER = "validate"
STALE_DAYS = 30  # a repository's packs not written for this long are removed
RACY_NS = 2_000_000_000  # a file changed this recently may change again within one mtime tick
_SOURCE = Path(__file__).resolve().parents[1]  # the auditor package


def validate_cache_root() -> Path:
    return cache.area(FOLDER)


def clear() -> Path:
    """Remove every validate pack; the folder that held them."""
    folder = validate_cache_root()
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def tool_key(source: Path = _SOURCE) -> str:
    """The package version, the cache format and a hash of every source file of `auditor` (its
    rules files too: a finding pickles as a reference to its rule's declaration)."""
    digest = hashlib.sha256(f"{cache.version()}\0{FORMAT}".encode())
    for folder, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".yaml")):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, source).encode() + b"\0")
                with open(path, "rb") as f:
                    digest.update(f.read())
    return digest.hexdigest()


def fingerprint(folder: Path) -> str:
    """The SHA-256 of every file's name and bytes under `folder` (a cluster's schemas)."""
    digest = hashlib.sha256()
    for here, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(here, name)
            digest.update(os.path.relpath(path, folder).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(hashlib.sha256(f.read()).digest())
    return digest.hexdigest()


Signature = tuple[int, int, int, int]  # mtime_ns, ctime_ns, size, inode


@dataclass
class Entry:
    signature: Signature
    seen_ns: int  # when the signature was taken
    digest: bytes  # SHA-256 of the file's bytes
    parsed: bytes  # pickled, as the repository loader stored it
    results: bytes | None = None  # pickled, as the validate pipeline stored it


@dataclass
class Pack:
    key: tuple[str, str]  # tool key, schema fingerprint
    entries: dict[str, Entry] = field(default_factory=dict)
    checks: dict[str, t.Any] = field(default_factory=dict)  # as the validate pipeline keeps them


class FileCache:
    """One cluster's pack for one repository: entries by file path, looked up by content."""

    def __init__(self, root: Path, cluster: str, tool: str, schemas: str) -> None:
        self.root = str(root)
        repo = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:16]
        self.file = validate_cache_root() / repo / f"{cluster}.pickle"
        self.key = (tool, schemas)
        found = self._read()
        self.old = found.entries
        self.old_checks = found.checks  # per check: what the validate pipeline kept of it
        self.new: dict[str, Entry] = {}  # the entries of this run's files, saved at the end
        self.new_checks: dict[str, t.Any] = {}
        self.changed = False

    def _read(self) -> Pack:
        try:
            with open(self.file, "rb") as f:
                pack = pickle.load(f)
        except Exception:  # missing, truncated, written by another format: start afresh
            return Pack(self.key)
        if not isinstance(pack, Pack) or pack.key != self.key:
            return Pack(self.key)
        return pack

    def digest(self, path: str) -> bytes | None:
        """The SHA-256 of `path`'s bytes as this run read or served them."""
        entry = self.new.get(path)
        return None if entry is None else entry.digest

    def store_check(self, check: str, kept: t.Any) -> None:
        self.new_checks[check] = kept
        self.changed = True

    def _signature(self, path: str) -> Signature | None:
        try:
            info = os.lstat(os.path.join(self.root, path))
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)

    def unchanged(self, path: str) -> Entry | None:
        """The entry of `path` when its stat signature says the file is the one it describes."""
        entry = self.old.get(path)
        if entry is None:
            return None
        signature = self._signature(path)
        if signature is None or signature != entry.signature:
            return None
        if signature[0] + RACY_NS > entry.seen_ns:  # it may have changed within one mtime tick
            return None
        self.new[path] = entry
        return entry

    def same_content(self, path: str, data: bytes) -> Entry | None:
        """The entry of `path` when its bytes are those it describes (the stat said otherwise)."""
        entry = self.old.get(path)
        if entry is None or entry.digest != hashlib.sha256(data).digest():
            return None
        signature = self._signature(path)
        if signature is not None:
            entry.signature, entry.seen_ns = signature, time.time_ns()
            self.changed = True
        self.new[path] = entry
        return entry

    def store(self, path: str, data: bytes, parsed: t.Any) -> None:
        """Remember what loading `path` (whose bytes are `data`) found."""
        signature = self._signature(path)
        if signature is None:
            return
        blob = pickle.dumps(parsed, pickle.HIGHEST_PROTOCOL)
        self.new[path] = Entry(signature, time.time_ns(), hashlib.sha256(data).digest(), blob)
        self.changed = True

    def results(self, path: str) -> bytes | None:
        entry = self.new.get(path)
        return None if entry is None else entry.results

    def store_results(self, path: str, results: t.Any) -> None:
        entry = self.new.get(path)
        if entry is not None:
            entry.results = pickle.dumps(results, pickle.HIGHEST_PROTOCOL)
            self.changed = True

    def save(self) -> None:
        """Write this run's entries (files gone since are dropped); never fails the run."""
        if not self.changed and self.new.keys() == self.old.keys():
            return
        for check, kept in self.old_checks.items():  # a check served from the pack: kept
            self.new_checks.setdefault(check, kept)
        if not self.file.parent.exists():  # a repository seen for the first time
            _prune(self.file.parent.parent)
        pack = Pack(self.key, self.new, self.new_checks)
        cache.write(self.file, pickle.dumps(pack, pickle.HIGHEST_PROTOCOL))  # never fails the run


def _prune(folder: Path, days: int = STALE_DAYS) -> None:
    """Remove the packs of repositories not written for `days` (a clone deleted long ago, a
    test's temporary copy): the cache stays the size of the repositories in use."""
    cutoff = time.time() - days * 86400
    try:
        with os.scandir(folder) as entries:
            stale = [e.path for e in entries if e.is_dir() and e.stat().st_mtime < cutoff]
    except OSError:
        return
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)


CODE_FOLDER = "validators"  # compiled validators' code (the manifests' too: schemas/validator.py)


def kept_code(key: str, generate: t.Callable[[], str], name: str) -> types.CodeType:
    """The code object of `generate()`'s Python source, kept in the user cache (its
    `validators` area, auditor/cache.py) by the hash of `key` (what the source is made from)
    and of Python's version: generating and compiling a validator costs milliseconds to tenths
    of a second, loading kept code about one. A file that cannot be read or written is
    generated again, never an error."""
    digest = cache.key(sys.version, key)
    path = cache.area(CODE_FOLDER) / f"{digest}.marshal"
    try:
        return t.cast(types.CodeType, marshal.loads(cache.read(path) or b""))
    except (ValueError, EOFError, TypeError):
        pass
    code = compile(generate(), f"<{name} {digest[:12]}>", "exec")
    cache.write(path, marshal.dumps(code))
    return code
