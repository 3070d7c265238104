"""`validate` kept resident, for an editor (`kueue-gitops lsp`): the repository is loaded once,
and each edit computes again only what depends on the edited file.

Kept per manifest file: its objects and loading problems, and the validator's verdict on each
object (version contract, schema, CEL), which depends on the object alone. Kept per cluster and
check: its findings and what it read to make them (`checks.Reads`: the kinds it asked for, the
invalid objects, files of the tree). An edit of a file parses that file again, judges its
objects, and runs again only the checks that read a kind the file held before or holds now (a
check that says `PER_OBJECT` on that file's objects alone) or read the file itself. Editing a
profile, a schema or a file that was not yet placed on a cluster loads everything again.

The findings are `validate`'s for the same files: the same loader, verdicts, checks, suppressions
and collection (engine.collected), per cluster as validate's worker for that cluster makes them.
"""

from __future__ import annotations

import dataclasses
import datetime
import posixpath
import typing as t
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from auditor.model import Finding, Resource
from auditor.repo import suppressions
from auditor.repo.layout import (
    CLUSTERS,
    RENDER_MARKERS,
    TENANTS,
    Loaded,
    Placed,
    Repository,
    flag_duplicates,
)
from auditor.repo.profiles import PROFILE_FILE, ClusterProfile
from auditor.repo.tree import Overlay
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator, Verdict
from auditor.validate import checks, engine

SCHEMAS = "schemas"


@dataclass
class _File:
    """One manifest file as last read: its objects, problems, and verdicts (judged on demand)."""

    where: Placed
    loaded: Loaded
    verdicts: dict[int, Verdict] = field(default_factory=dict)  # by index in loaded.resources
    entries: list[list[suppressions.Entry]] = field(default_factory=list)  # per object

    def __post_init__(self) -> None:
        self.entries = [suppressions.annotated(r)[0] for r in self.loaded.resources]


@dataclass
class _Check:
    module: ModuleType
    reads: checks.Reads = field(default_factory=checks.Reads)
    findings: list[Finding] = field(default_factory=list)  # a check of the whole cluster
    by_file: dict[str, list[Finding]] = field(default_factory=dict)  # a PER_OBJECT check


@dataclass
class _Placed:
    sound: list[Resource]  # the objects the policy checks see
    verdicts: list[Verdict]  # of every object but duplicates, in order


@dataclass
class _Cluster:
    profile: ClusterProfile
    validator: ClusterValidator
    files: dict[str, _File] = field(default_factory=dict)  # in the order validate loads them
    dropped: frozenset[int] = frozenset()  # ids of objects defined a second time
    duplicates: list[Finding] = field(default_factory=list)
    invalid: dict[t.Any, Finding] = field(default_factory=dict)
    checks: list[_Check] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # suppressions applied


class Session:
    """The findings of `validate` over a working tree with some files' text replaced by an
    editor's, kept current one edit at a time."""

    def __init__(self, root: Path, schemas: Path | None = None) -> None:
        self.tree = Overlay(root)
        self.repo = Repository(self.tree, str(root))
        self.schemas = schemas if schemas is not None else self.tree.root / SCHEMAS
        self.today = datetime.date.today()
        self.layout: list[Finding] = []
        self.clusters: dict[str, _Cluster] = {}
        self.placed: dict[str, str] = {}  # manifest path -> its cluster
        self.findings: list[Finding] = []
        self.broken = False  # the last reload failed (a profile that does not parse, say)
        self.reload()

    # -- what an editor calls -----------------------------------------------------------------

    def edit(self, path: str, text: bytes | None) -> None:
        """The editor's text of `path` (relative to the root; None: the file on disk again)."""
        if text is None:
            self.tree.buffers.pop(path, None)
        else:
            self.tree.buffers[path] = text
        self.changed(path)

    def changed(self, path: str) -> None:
        """Compute again what depends on `path`, which changed (in a buffer or on disk)."""
        if self.broken or self._decides_layout(path):
            self.reload()
            return
        cluster = self.placed.get(path)
        for name, state in self.clusters.items():
            if name == cluster:
                self._reread(state, path)
            else:
                self._recheck(state, path, frozenset(), False)
        self._collect()

    def of_file(self, path: str) -> list[Finding]:
        return [f for f in self.findings if f.file == path]

    # -- the work -----------------------------------------------------------------------------

    def reload(self) -> None:
        """Everything from the start: profiles, the layout, every file, every check."""
        self.repo.forget()
        self.today = datetime.date.today()
        self.broken = True
        names = sorted(self.repo.clusters)
        engine.require_schemas(self.repo, self.schemas, names)
        placed, self.layout = self.repo.plan(names)
        self.broken = False
        self.clusters = {
            name: _Cluster(
                self.repo.cluster(name), ClusterValidator(SchemaCatalog(self.schemas, name))
            )
            for name in names
        }
        self.placed = {}
        for where in placed:
            self.clusters[where.cluster].files[where.path] = _File(
                where, self.repo.load_file(where)
            )
            self.placed[where.path] = where.cluster
        for state in self.clusters.values():
            self._check(state)
        self._collect()

    def _decides_layout(self, path: str) -> bool:
        """Whether a change to `path` may change which files sync where, the profiles or the
        schemas: then everything is loaded again."""
        top = path.split("/", 1)[0]
        if top == SCHEMAS:
            return True
        if top not in (CLUSTERS, TENANTS):
            return False
        name = posixpath.basename(path)
        if name == PROFILE_FILE or name in RENDER_MARKERS:
            return True
        return path not in self.placed and path.endswith((".yaml", ".yml"))

    def _reread(self, state: _Cluster, path: str) -> None:
        before = state.files[path]
        old_ids = {id(r) for r in before.loaded.resources}
        was_invalid = any(r.key in state.invalid for r in before.loaded.resources)
        after = _File(before.where, self.repo.load_file(before.where))
        state.files[path] = after
        kinds = {r.kind for r in (*before.loaded.resources, *after.loaded.resources)}
        dropped = state.dropped - old_ids
        placed = self._place(state)
        if state.dropped - {id(r) for r in after.loaded.resources} != dropped:
            self._check(state, placed)  # another file's object became or stopped being a double
            return
        now_invalid = any(r.key in state.invalid for r in after.loaded.resources)
        self._recheck(state, path, frozenset(kinds), was_invalid or now_invalid, placed)

    def _place(self, state: _Cluster) -> _Placed:
        """The cluster's objects without duplicates, and their verdicts; the invalid ones and
        the objects defined twice noted on `state`."""
        every = [r for f in state.files.values() for r in f.loaded.resources]
        kept, state.duplicates = flag_duplicates(every)
        kept_ids = {id(r) for r in kept}
        state.dropped = frozenset(id(r) for r in every if id(r) not in kept_ids)
        verdicts: list[Verdict] = []
        name = state.profile.name
        for file in state.files.values():
            for i, resource in enumerate(file.loaded.resources):
                if id(resource) in state.dropped:
                    continue
                verdict = file.verdicts.get(i)
                if verdict is None:
                    verdict = file.verdicts[i] = engine.judge(state.validator, resource, name)
                verdicts.append(verdict)
        sound, state.invalid = engine.sorted_out(kept, verdicts)
        return _Placed(sound, verdicts)

    def _context(self, state: _Cluster, placed: _Placed) -> checks.CheckContext:
        return checks.CheckContext(
            self.repo, state.profile, tuple(placed.sound), self.repo.tenants, self.today,
            state.invalid,
        )  # fmt: skip

    def _check(self, state: _Cluster, placed: _Placed | None = None) -> None:
        """Run every check over the whole cluster, then gather its findings."""
        placed = placed or self._place(state)
        ctx = self._context(state, placed)
        state.checks = [_Check(m) for m in checks.CHECKS.values()]
        for check in state.checks:
            _run_whole(check, ctx)
        self._gather(state, placed)

    def _recheck(
        self,
        state: _Cluster,
        path: str,
        kinds: frozenset[str],
        invalid: bool,
        placed: _Placed | None = None,
    ) -> None:
        """Run again the checks a change to `path` (objects of `kinds`) may change."""
        stale = [c for c in state.checks if c.reads.touched(kinds, invalid, path)]
        if not stale and placed is None:
            return  # nothing of this cluster changed
        placed = placed or self._place(state)
        if stale:
            ctx = self._context(state, placed)
            for check in stale:
                if checks.per_object(check.module) and not check.reads.read(path):
                    _run_file(check, ctx, path)
                else:
                    _run_whole(check, ctx)
        self._gather(state, placed)

    def _gather(self, state: _Cluster, placed: _Placed) -> None:
        """The cluster's findings as validate's worker for it reports them, suppressions
        applied (to copies: the kept findings stay as their checks made them)."""
        name = state.profile.name
        found = [f for f in self.layout if f.cluster in (None, name)]  # as its worker plans
        entries = suppressions.from_profile(state.profile)
        for file in state.files.values():
            found += file.loaded.findings
            for resource, own in zip(file.loaded.resources, file.entries, strict=True):
                if id(resource) not in state.dropped:
                    entries += own
        found += state.duplicates
        for verdict in placed.verdicts:
            found += verdict.findings
        for check in state.checks:
            found += check.findings
            for mine in check.by_file.values():  # each file's in the check's order (the sort
                found += mine  # that collects them is stable and keys on the file first)
        copies = [dataclasses.replace(f) for f in found]
        suppressions.apply(copies, entries, self.today)
        state.findings = copies

    def _collect(self) -> None:
        self.findings = engine.collected(f for c in self.clusters.values() for f in c.findings)


def _run_whole(check: _Check, ctx: checks.CheckContext) -> None:
    found, reads = checks.run_noting(check.module, ctx)
    check.reads = reads
    if checks.per_object(check.module):
        check.findings, check.by_file = [], {}
        for finding in found:
            check.by_file.setdefault(finding.file or "", []).append(finding)
    else:
        check.findings, check.by_file = found, {}


def _run_file(check: _Check, ctx: checks.CheckContext, path: str) -> None:
    """A PER_OBJECT check run again on the objects of `path` alone."""
    mine = tuple(r for r in ctx.resources if r.file == path)
    found, reads = checks.run_noting(check.module, dataclasses.replace(ctx, resources=mine))
    check.reads.paths |= reads.paths
    if found:
        check.by_file[path] = found
    else:
        check.by_file.pop(path, None)
