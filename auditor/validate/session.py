"""`validate` kept resident, for an editor (`kueue-gitops lsp`): the repository is loaded once,
and each edit computes again only what depends on the edited file.

Kept per manifest file: its objects and loading problems, and the validator's verdict on each
object (version contract, schema, CEL), which depends on the object alone. Kept per cluster and
check: its findings and what it read to make them (`checks.Reads`: the kinds it asked for, the
invalid objects, files of the tree). An edit of a file parses that file again, judges its
objects, and runs again only the checks that read a kind the file held before or holds now (a
check whose `RERUN` says so on that file's objects alone, checks/protocol.py) or read the file
itself. Editing a profile, a schema or a file that was not yet placed on a cluster loads
everything again.

The findings are `validate`'s for the same files: the same loader, verdicts, checks, suppressions
and collection (engine.collected), per cluster as validate's worker for that cluster makes them.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime
import posixpath
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from auditor.k8s.objects import ResourceKey
from auditor.model import Finding, Resource
from auditor.render.source import UNRENDERED
from auditor.repo import layout, suppressions
from auditor.repo.layout import RENDER_MARKERS, TENANTS, Loaded, Placed, Repository
from auditor.repo.profiles import PROFILE_FILE, ClusterProfile
from auditor.repo.root import CLUSTERS, ROOT_FILE
from auditor.repo.tree import Overlay
from auditor.schemas.validator import ClusterValidator, Verdict
from auditor.validate import checks, engine
from auditor.validate.checks.protocol import CLUSTER, Check

SCHEMAS = "schemas"


@dataclass
class _File:
    """One manifest file as last read: its objects and problems, the verdict on each object,
    and what they make of it given which of its objects are second definitions (`derive`)."""

    where: Placed
    loaded: Loaded
    rank: int  # its place in the cluster's load order
    verdicts: dict[int, Verdict] = field(default_factory=dict)  # by index in loaded.resources
    own_entries: list[list[suppressions.Entry]] = field(default_factory=list)  # per object
    sound: list[Resource] = field(default_factory=list)  # what the policy checks see of it
    invalid: dict[ResourceKey, Finding] = field(default_factory=dict)
    found: list[Finding] = field(default_factory=list)  # loading problems, then verdicts
    entries: list[suppressions.Entry] = field(default_factory=list)  # of the objects kept

    def __post_init__(self) -> None:
        self.own_entries = [suppressions.annotated(r)[0] for r in self.loaded.resources]

    def derive(self, dropped: t.AbstractSet[int], validator: ClusterValidator) -> None:
        kept: list[Resource] = []
        verdicts: list[Verdict] = []
        self.found, self.entries = list(self.loaded.findings), []
        for i, resource in enumerate(self.loaded.resources):
            if id(resource) in dropped:
                continue
            verdict = self.verdicts.get(i)
            if verdict is None:
                verdict = self.verdicts[i] = engine.judge(validator, resource, self.where.cluster)
            kept.append(resource)
            verdicts.append(verdict)
            self.found += verdict.findings
            self.entries += self.own_entries[i]
        self.sound, self.invalid = engine.sorted_out(kept, verdicts)


@dataclass
class _Check:
    module: Check
    reads: checks.Reads = field(default_factory=checks.Reads)
    findings: list[Finding] = field(default_factory=list)  # a check of the whole cluster
    by_file: dict[str, list[Finding]] = field(default_factory=dict)  # renewed per file


@dataclass
class _Cluster:
    profile: ClusterProfile
    validator: ClusterValidator
    files: dict[str, _File] = field(default_factory=dict)  # in the order validate loads them
    definitions: dict[tuple[str | None, ResourceKey], list[Resource]] = field(
        default_factory=dict
    )  # each object's definitions, in load order: more than one is a duplicate
    doubled: set[tuple[str | None, ResourceKey]] = field(default_factory=set)
    dropped: set[int] = field(default_factory=set)  # ids of the second (and later) definitions
    by_kind: dict[str, list[Resource]] = field(default_factory=dict)  # sound objects, in order
    checks: list[_Check] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # suppressions applied

    ranks: dict[int, int] = field(default_factory=dict)  # id of an object -> its file's rank

    def place(self, resource: Resource) -> tuple[int, int]:
        """An object's rank in load order (file, then line); a rendered object's `file` is
        its base, not the folder it was loaded with, hence the rank it was defined with."""
        return self.ranks[id(resource)], resource.line

    def define(self, file: _File) -> None:
        for resource in file.loaded.resources:
            self.ranks[id(resource)] = file.rank
            ident = (resource.cluster, resource.key)
            found = self.definitions.setdefault(ident, [])
            bisect.insort(found, resource, key=self.place)
            if len(found) > 1:
                self.doubled.add(ident)

    def undefine(self, file: _File) -> None:
        for resource in file.loaded.resources:
            ident = (resource.cluster, resource.key)
            self.ranks.pop(id(resource), None)
            found = [r for r in self.definitions.get(ident, ()) if r is not resource]
            if found:
                self.definitions[ident] = found
            else:
                self.definitions.pop(ident, None)
            if len(found) < 2:
                self.doubled.discard(ident)

    def second_definitions(self) -> set[int]:
        return {id(r) for ident in self.doubled for r in self.definitions[ident][1:]}

    def duplicates(self) -> list[Finding]:
        return [
            layout.duplicate(r, found[0])
            for found in (self.definitions[i] for i in self.doubled)
            for r in found[1:]
        ]

    def index(self) -> None:
        self.by_kind = {}
        for file in self.files.values():
            for resource in file.sound:
                self.by_kind.setdefault(resource.kind, []).append(resource)

    def reindex(self, path: str, kinds: t.AbstractSet[str]) -> None:
        """The lists of `kinds` with the objects of `path` as it is now."""
        file = self.files[path]
        for kind in kinds:
            found = [r for r in self.by_kind.get(kind, ()) if r.file != path]
            for resource in file.sound:
                if resource.kind == kind:
                    bisect.insort(found, resource, key=self.place)
            if found:
                self.by_kind[kind] = found
            else:
                self.by_kind.pop(kind, None)


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
        # A file a render reached -> the (cluster, file key) of each rendered folder it fed.
        self.inputs: dict[str, set[tuple[str, str]]] = {}
        self.findings: list[Finding] = []
        self.broken = False  # the last reload failed (a profile that does not parse, say)
        self.rendered = False  # see reload
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
        """Compute again what depends on `path`, which changed (in a buffer or on disk); a
        manifest that is gone (deleted, or a buffer closed unsaved) loads everything again."""
        gone = path not in self.tree.buffers and not (self.tree.root / path).exists()
        if self.broken or self._decides_layout(path) or (gone and path in self.placed):
            self.reload()
            return
        if path in self.inputs:  # a rendered folder's input: render those folders alone again
            fed = self.inputs[path]
            for name, state in self.clusters.items():
                keys = [key for cluster, key in fed if cluster == name]
                if keys:
                    self._render_again(state, keys)
                else:
                    self._recheck(state, path, frozenset(), False, False)
            self._collect()
            return
        cluster = self.placed.get(path)
        for name, state in self.clusters.items():
            if name == cluster:
                self._reread(state, path)
            else:
                self._recheck(state, path, frozenset(), False, False)
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
        placed, layout = self.repo.plan(names)
        self.layout = engine.layout_findings(self.repo, layout, names, self.today)
        self.broken = False
        self.clusters = {
            name: _Cluster(
                self.repo.cluster(name), engine.validator_of(self.repo, self.schemas, name)
            )
            for name in names
        }
        self.placed = {}
        self.inputs = {}
        # Laid out by Argo CD Applications, or rendering a folder: an edit outside the plain
        # files placed loads again, and the render cache (auditor/render/) renders again only
        # what the edit reached.
        self.rendered = not self.tree.is_dir(CLUSTERS) or any(w.source for w in placed)
        for rank, where in enumerate(placed):
            state = self.clusters[where.cluster]
            file = _File(where, self.repo.load_file(where), rank)
            key = where.path if where.path not in state.files else f"{where.path}#{rank}"
            state.files[key] = file
            state.define(file)
            if where.source is None:
                self.placed[where.path] = where.cluster
            self._note_inputs(where.cluster, key, file)
        for state in self.clusters.values():
            state.dropped = state.second_definitions()
            for file in state.files.values():
                file.derive(state.dropped, state.validator)
            self._check(state)
        self._collect()

    def _decides_layout(self, path: str) -> bool:
        """Whether a change to `path` may change which files sync where, the profiles or the
        schemas: then everything is loaded again."""
        top = path.split("/", 1)[0]
        if top == SCHEMAS or (self.rendered and path not in self.placed and not self._fed(path)):
            return True  # the Applications, a profile, a file no render reached yet
        if top not in (CLUSTERS, TENANTS):
            return False
        name = posixpath.basename(path)
        if name == PROFILE_FILE or name in RENDER_MARKERS:
            return True
        return path not in self.placed and path.endswith((".yaml", ".yml"))

    def _fed(self, path: str) -> bool:
        """Whether `path` only feeds renders: one reached, and no Argo CD object, profile or
        root file (those may change which folder syncs where)."""
        if path not in self.inputs or posixpath.basename(path) == ROOT_FILE:
            return False
        try:
            data = self.tree.read(path)
        except OSError:
            return False  # gone: what reached it changed
        return b"argoproj.io/" not in data and b"kueue-gitops.io/" not in data

    def _note_inputs(self, cluster: str, key: str, file: _File) -> None:
        for read in file.loaded.reads:
            self.inputs.setdefault(read, set()).add((cluster, key))

    def _render_again(self, state: _Cluster, keys: list[str]) -> None:
        """Render the folders of `keys` again (each render is cached by what it reads), then
        judge the cluster again: a render's objects come from many files."""
        for key in keys:
            before = state.files[key]
            state.undefine(before)
            after = _File(before.where, self.repo.load_file(before.where), before.rank)
            state.files[key] = after
            state.define(after)
            for read in before.loaded.reads - after.loaded.reads:
                self.inputs.get(read, set()).discard((state.profile.name, key))
            self._note_inputs(state.profile.name, key, after)
        state.dropped = state.second_definitions()
        for file in state.files.values():
            file.derive(state.dropped, state.validator)
        self._check(state)

    def _reread(self, state: _Cluster, path: str) -> None:
        before = state.files[path]
        was_invalid = bool(before.invalid)
        state.undefine(before)
        after = _File(before.where, self.repo.load_file(before.where), before.rank)
        state.files[path] = after
        state.define(after)
        dropped = state.second_definitions()
        mine = {id(r) for r in (*before.loaded.resources, *after.loaded.resources)}
        others = (state.dropped ^ dropped) - mine  # another file's objects, doubled or no more
        state.dropped = dropped
        after.derive(dropped, state.validator)
        kinds = {r.kind for r in (*before.loaded.resources, *after.loaded.resources)}
        if others:
            for file in state.files.values():
                file.derive(dropped, state.validator)
            self._check(state)
            return
        state.reindex(path, kinds)
        self._recheck(state, path, frozenset(kinds), was_invalid or bool(after.invalid), True)

    def _context(self, state: _Cluster) -> checks.CheckContext:
        invalid = {k: v for f in state.files.values() if f.invalid for k, v in f.invalid.items()}
        sound = tuple(r for f in state.files.values() for r in f.sound)
        unrendered = any(
            p.rule.id in UNRENDERED for f in state.files.values() for p in f.loaded.findings
        )
        return checks.CheckContext(
            self.repo, state.profile, sound, self.repo.tenants, self.today, invalid,
            checks.KindIndex(state.by_kind, state.place), unrendered,
        )  # fmt: skip

    def _check(self, state: _Cluster) -> None:
        """Run every check over the whole cluster, then gather its findings."""
        state.index()
        ctx = self._context(state)
        state.checks = [_Check(m) for m in checks.CHECKS.values()]
        for check in state.checks:
            _run_whole(check, ctx)
        self._gather(state)

    def _recheck(
        self, state: _Cluster, path: str, kinds: frozenset[str], invalid: bool, mine: bool
    ) -> None:
        """Run again the checks a change to `path` (objects of `kinds`; `mine`: a file of
        this cluster) may change."""
        stale = [c for c in state.checks if c.reads.touched(kinds, invalid, path)]
        if not stale and not mine:
            return  # nothing of this cluster changed
        if stale:
            ctx = self._context(state)
            held = state.files.get(path)  # None: a file of another cluster, or none at all
            sound = held.sound if held is not None else []
            for check in stale:
                rerun = check.module.RERUN
                own = rerun.per_object_of
                if check.reads.read(path):
                    _run_whole(check, ctx)
                elif rerun.per_object:
                    _run_file(check, ctx, path, sound)
                elif own and kinds and kinds <= own and not check.reads.every:
                    _run_kinds(check, ctx, path, own, sound)
                else:
                    _run_whole(check, ctx)
        self._gather(state)

    def _gather(self, state: _Cluster) -> None:
        """The cluster's findings as validate reports them, suppressions applied (to copies:
        the kept findings stay as their checks made them); the layout's are the session's."""
        found: list[Finding] = []
        entries = suppressions.from_profile(state.profile)
        for file in state.files.values():
            if file.found:
                found += file.found
            if file.entries:
                entries += file.entries
        found += state.duplicates()
        for check in state.checks:
            found += check.findings
            for mine in check.by_file.values():  # each file's in the check's order (the sort
                found += mine  # that collects them is stable and keys on the file first)
        copies = [dataclasses.replace(f) for f in found]
        suppressions.apply(copies, entries, self.today)
        state.findings = copies

    def _collect(self) -> None:
        self.findings = engine.collected(
            [*self.layout, *(f for c in self.clusters.values() for f in c.findings)]
        )


def _run_whole(check: _Check, ctx: checks.CheckContext) -> None:
    found, reads = checks.run_noting(check.module, ctx)
    check.reads = reads
    if check.module.RERUN != CLUSTER:  # kept per file, to be renewed per file
        check.findings, check.by_file = [], {}
        for finding in found:
            check.by_file.setdefault(finding.file or "", []).append(finding)
    else:
        check.findings, check.by_file = found, {}


def _run_file(check: _Check, ctx: checks.CheckContext, path: str, sound: list[Resource]) -> None:
    """A `protocol.PER_OBJECT` check run again on the objects of `path` (`sound`) alone."""
    mine = checks.CheckContext(
        ctx.repo, ctx.cluster, tuple(sound), ctx.tenants, ctx.today, ctx.invalid
    )
    found, reads = checks.run_noting(check.module, mine)
    check.reads.paths |= reads.paths
    if found:
        check.by_file[path] = found
    else:
        check.by_file.pop(path, None)


def _run_kinds(
    check: _Check,
    ctx: checks.CheckContext,
    path: str,
    kinds: frozenset[str],
    sound: list[Resource],
) -> None:
    """A `protocol.per_object_of` check run again with only `path`'s objects of `kinds` (every
    object of the other kinds): its findings located in `path` replace that file's."""
    assert ctx.index is not None
    by_kind = dict(ctx.index.by_kind)
    for kind in kinds:
        by_kind[kind] = [r for r in sound if r.kind == kind]
    mine = dataclasses.replace(ctx, index=checks.KindIndex(by_kind, ctx.index.place))
    found, reads = checks.run_noting(check.module, mine)
    check.reads.paths |= reads.paths
    here = [f for f in found if f.file == path]
    if here:
        check.by_file[path] = here
    else:
        check.by_file.pop(path, None)
