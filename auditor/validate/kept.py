"""What `validate` keeps across runs in a cluster's cache pack (auditor/speed/packs.py), beside
the parsed documents the loader's layer keeps there (auditor/repo/cached.py): the validator's
verdict on each object, and each policy check's findings.

A file served from the pack has its objects' verdicts served too (they depend on the object, the
cluster's schemas and Kueue release, which key the pack); the others are judged and stored.

A check whose inputs did not change since the last run is not run again; its findings come from
the pack.

A check's findings depend on what it read (`checks.Reads`, noted while it ran): the objects of
the kinds it asked for (or every object), the invalid objects, the repository files and folders
it read, and, for every check, the profiles (every cluster's and tenant's) and the day (evidence
expires). Kept per check: the SHA-256 of those inputs as they were, what it read and its
findings. A run computes the same digest over the inputs as they are now (the files' digests
come from the cache's entries, which the loader's layer just checked); equal, the findings are
served, else the check runs and is kept again. A check that loads manifests itself
(`repo.load`, which reads other clusters' files) always runs.
"""

from __future__ import annotations

import hashlib
import pickle
import typing as t
from dataclasses import dataclass

from auditor.model import Finding, Resource
from auditor.repo.cache import FileCache
from auditor.schemas.validator import Verdict

if t.TYPE_CHECKING:  # the checks load with the policy stage (validate --only schema runs none)
    from auditor.validate import checks
    from auditor.validate.checks.protocol import Check


def verdicts(
    resources: list[Resource], judge: t.Callable[[Resource], Verdict], cache: FileCache | None
) -> list[Verdict]:
    """`judge`'s verdict on each object: from the cache for a file served from it, judged (and
    stored for the next run) otherwise. Objects are keyed by file and line."""
    out: list[Verdict] = []
    stored: dict[str, dict[int, Verdict]] = {}
    judged: dict[str, dict[int, Verdict]] = {}
    for resource in resources:
        file = resource.file
        if file not in stored:
            blob = cache.results(file) if cache is not None else None
            stored[file] = pickle.loads(blob) if blob else {}
        verdict = stored[file].get(resource.line)
        if verdict is None:
            verdict = judge(resource)
            judged.setdefault(file, {})[resource.line] = verdict
        out.append(verdict)
    if cache is not None:  # stored now, before anything downstream marks a finding suppressed
        for file, found in judged.items():
            cache.store_results(file, {**stored[file], **found})
    return out


@dataclass
class Kept:
    digest: str  # of the check's inputs when it ran
    reads: checks.Reads
    findings: bytes  # pickled, before suppressions mark any


def run(ctx: checks.CheckContext, resources: list[Resource], cache: FileCache) -> list[Finding]:
    """Every check's findings on `ctx`'s cluster, each served from `cache` while what it read
    is unchanged. `resources`: every object of the cluster as loaded (sound or not)."""
    from auditor.validate import checks

    inputs = _Inputs(ctx, resources, cache)
    out: list[Finding] = []
    for module in checks.CHECKS.values():
        out += _one(module, ctx, cache, inputs)
    return out


def _one(
    module: Check, ctx: checks.CheckContext, cache: FileCache, inputs: _Inputs
) -> list[Finding]:
    kept = cache.old_checks.get(module.ID)
    if isinstance(kept, Kept) and not kept.reads.loads:
        digest = inputs.digest(kept.reads)
        if digest is not None and digest == kept.digest:
            return t.cast(list[Finding], pickle.loads(kept.findings))
    from auditor.validate import checks

    found, reads = checks.run_noting(module, ctx)
    digest = inputs.digest(reads)
    if digest is not None and not reads.loads:
        blob = pickle.dumps(found, pickle.HIGHEST_PROTOCOL)
        cache.store_check(module.ID, Kept(digest, reads, blob))
    return found


class _Inputs:
    """The digests of a cluster's inputs, each computed once per run when first asked for."""

    def __init__(
        self, ctx: checks.CheckContext, resources: list[Resource], cache: FileCache
    ) -> None:
        self.ctx, self.resources, self.cache = ctx, resources, cache
        self._base: str | None = None
        self._kinds: dict[str, list[str]] | None = None  # kind -> its files, in load order
        self._files: dict[str, bytes | None] = {}

    def digest(self, reads: checks.Reads) -> str | None:
        """The SHA-256 of what `reads` names, as it is now; None when it cannot be known."""
        base = self.base()
        if base is None:
            return None
        digest = hashlib.sha256(base.encode())
        kinds = self.kinds()
        files: list[str] = []
        if reads.every:
            files = list(dict.fromkeys(r.file for r in self.resources))
        else:
            for kind in sorted(reads.kinds):
                files += [f"\0{kind}", *kinds.get(kind, ())]
        for path in files:
            found = self.file(path) if not path.startswith("\0") else path.encode()
            if found is None:
                return None
            digest.update(path.encode() + b"\0" + found)
        if reads.invalid:
            invalid = sorted((str(k), f.rule.id, f.message) for k, f in self.ctx.invalid.items())
            digest.update(repr(invalid).encode())
        if reads.unrendered:  # its findings of absence depend on whether all of it rendered
            digest.update(b"\0unrendered\0" + str(self.ctx.unrendered).encode())
        for path in sorted(reads.paths):
            digest.update(b"\0read\0" + path.encode() + b"\0" + self.read(path))
        return digest.hexdigest()

    def base(self) -> str | None:
        """Every check's inputs: the day, every cluster's profile and the tenants' profiles."""
        if self._base is None:
            repo = self.ctx.repo
            tenants = repo.tenants_fingerprint
            if tenants is None:
                return None
            digest = hashlib.sha256(f"{self.ctx.today.isoformat()}\0{tenants}".encode())
            for name in sorted(repo.clusters):
                profile = repo.clusters[name].file
                digest.update(profile.encode() + b"\0" + self.read(profile))
            self._base = digest.hexdigest()
        return self._base

    def kinds(self) -> dict[str, list[str]]:
        if self._kinds is None:
            out: dict[str, dict[str, None]] = {}
            for resource in self.resources:
                out.setdefault(resource.kind, {})[resource.file] = None
            self._kinds = {kind: list(files) for kind, files in out.items()}
        return self._kinds

    def file(self, path: str) -> bytes | None:
        """A manifest file's digest, from the cache's entry of this run."""
        if path not in self._files:
            self._files[path] = self.cache.digest(path)
        return self._files[path]

    def read(self, path: str) -> bytes:
        """The digest of a file (or, for "folder/", the listing) a check read through the tree."""
        tree = self.ctx.repo.tree
        try:
            if path.endswith("/"):
                folder = path.rstrip("/")
                if not tree.is_dir(folder):
                    return b"no folder"
                listing = [*tree.files(folder), "\0", *tree.subfolders(folder)]
                return hashlib.sha256("\n".join(listing).encode()).digest()
            return hashlib.sha256(tree.read(path)).digest()
        except (OSError, KeyError):
            return b"unreadable"
