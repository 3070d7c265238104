"""`validate` kept resident, for an editor (`kueue-gitops lsp`): the repository is loaded once,
and each edit computes again only what depends on the edited file.

Kept per manifest file: its objects and loading problems, and the validator's verdict on each
object (version contract, schema, CEL), which depends on the object alone. Kept per cluster and
check: its findings and what it read to make them (`checks.Reads`: the kinds it asked for, the
invalid objects, files of the tree). An edit of a file parses that file again, judges its
objects (those it left as they were keep a verdict without findings), and runs again only the
checks that read a kind the file held before or holds now, or read the file itself, each as
narrowly as its `RERUN` says (checks/protocol.py, docs/editor.md): on the objects whose text
the edit changed, on the objects naming one it changed, or not at all when what the check reads
of the objects is as it was. Editing a profile, a schema or a file that was not yet placed on a
cluster loads everything again.

The findings are `validate`'s for the same files: the same loader, verdicts, checks, suppressions
and collection (engine.collected), per cluster as validate's worker for that cluster makes them.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import datetime
import itertools
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
    data: bytes | None = None  # what it was read from: kept once edited (`texts`)
    unrendered: bool = False  # a finding says part of it was not read (UNRENDERED)
    _bodies: list[str] | None = None

    def __post_init__(self) -> None:
        self.own_entries = [suppressions.annotated(r)[0] for r in self.loaded.resources]
        self.unrendered = any(f.rule.id in UNRENDERED for f in self.loaded.findings)

    def bodies(self) -> list[str]:
        """Each object's body as its repr, to tell whether an edit changed it (`==` would take
        `true` for `1`); made once, for the file as edited and as it was at the next edit."""
        if self._bodies is None:
            self._bodies = [repr(r.body) for r in self.loaded.resources]
        return self._bodies

    def texts(self) -> dict[_Ident, tuple[int, bytes]] | None:
        """Each object's first line and text (up to the next object's), by its identity: the
        same, the findings about it are (their lines too). None when the bytes are not kept
        or two objects share an identity."""
        found = self.loaded.resources
        if self.data is None or any(a.line >= b.line for a, b in itertools.pairwise(found)):
            return None  # not known, or not one object after the other
        lines = self.data.splitlines(keepends=True)
        ends = [r.line - 1 for r in found[1:]] + [len(lines)] if found else []
        out = {
            _ident(r): (r.line, b"".join(lines[r.line - 1 : end]))
            for r, end in zip(found, ends, strict=True)
        }
        return out if len(out) == len(found) else None

    def keep_verdicts(self, before: _File) -> None:
        """The verdicts of `before` (this file as last read) on objects the edit left as they
        were: one of many queues edited, the others are not judged again. Only a verdict
        without findings is kept (a finding's line may have moved); an object is the same
        when its body is (`bodies`)."""
        old: dict[str, Verdict] = {}
        for i, body in enumerate(before.bodies()):
            verdict = before.verdicts.get(i)
            if verdict is not None and not verdict.findings:
                old[body] = verdict
        if not old:
            return
        for i, body in enumerate(self.bodies()):
            verdict = old.get(body)
            if verdict is not None:
                self.verdicts[i] = verdict

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
        data = self.repo.read(before.where)
        if isinstance(data, Loaded):  # it cannot be read: the finding that says why
            after = _File(before.where, data, before.rank)
        else:
            after = _File(before.where, layout.parse(before.where, data), before.rank, data=data)
        after.keep_verdicts(before)
        state.files[path] = after
        state.define(after)
        dropped = state.second_definitions()
        mine = {id(r) for r in (*before.loaded.resources, *after.loaded.resources)}
        others = (state.dropped ^ dropped) - mine  # another file's objects, doubled or no more
        doubled = mine & (state.dropped | dropped)  # an object of it, or its double, dropped
        state.dropped = dropped
        after.derive(dropped, state.validator)
        edit = _Edit(
            _moved(before, after),
            None if doubled else _changed(before, after),
            before.sound,
            after.sound,
        )
        kinds = {r.kind for r in (*before.loaded.resources, *after.loaded.resources)}
        if others:
            for file in state.files.values():
                file.derive(dropped, state.validator)
            self._check(state)
            return
        state.reindex(path, kinds)
        invalid = was_invalid or bool(after.invalid)
        self._recheck(state, path, frozenset(kinds), invalid, True, edit)

    def _context(self, state: _Cluster) -> checks.CheckContext:
        invalid = {k: v for f in state.files.values() if f.invalid for k, v in f.invalid.items()}
        sound = tuple(r for f in state.files.values() for r in f.sound)
        unrendered = any(f.unrendered for f in state.files.values())
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
        self,
        state: _Cluster,
        path: str,
        kinds: frozenset[str],
        invalid: bool,
        mine: bool,
        edit: _Edit | None = None,
    ) -> None:
        """Run again the checks a change to `path` (objects of `kinds`; `mine`: a file of
        this cluster; `edit`: what changed in it, when it is one of this cluster's) may
        change."""
        edit = edit or _Edit()
        stale = [
            c
            for c in state.checks
            if c.reads.touched(kinds, invalid, path, self.tree)
            and not (  # what it reads of the objects, as it was (`Rerun.project`)
                not c.reads.every and not (invalid and c.reads.invalid)
                and not c.reads.read(path, self.tree) and edit.keeps(c)
            )
        ]  # fmt: skip
        if not stale and not mine:
            return  # nothing of this cluster changed
        if stale:
            ctx = self._context(state)
            held = state.files.get(path)  # None: a file of another cluster, or none at all
            sound = held.sound if held is not None else []
            for check in stale:
                rerun = check.module.RERUN
                own = rerun.per_object_of
                if check.reads.read(path, self.tree):
                    _run_whole(check, ctx)
                elif rerun.per_object:
                    _run_file(check, ctx, path, sound, edit.changed)
                elif own and kinds and kinds <= own and not check.reads.every:
                    _run_kinds(check, ctx, path, own, sound, edit.changed)
                elif not (
                    rerun.refers and edit.moved is not None and own.isdisjoint(kinds)
                    and not check.reads.every and _run_referring(check, ctx, edit.moved)
                ):  # fmt: skip
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


def _run_file(
    check: _Check,
    ctx: checks.CheckContext,
    path: str,
    sound: list[Resource],
    changed: frozenset[_Ident] | None,
) -> None:
    """A `protocol.PER_OBJECT` check run again on the objects of `path` (`sound`) the edit
    changed (all of them when that is not known)."""
    again = sound if changed is None else [r for r in sound if _ident(r) in changed]
    mine = dataclasses.replace(ctx, resources=tuple(again), index=None)  # unrendered kept
    found, reads = checks.run_noting(check.module, mine)
    check.reads.add(reads)
    if not _renew(check, path, found, sound, changed):
        _run_file(check, ctx, path, sound, None)


def _run_kinds(
    check: _Check,
    ctx: checks.CheckContext,
    path: str,
    kinds: frozenset[str],
    sound: list[Resource],
    changed: frozenset[_Ident] | None,
) -> None:
    """A `protocol.per_object_of` check run again with only `path`'s objects of `kinds` the
    edit changed (all of them when that is not known) and every object of the other kinds."""
    assert ctx.index is not None
    by_kind = dict(ctx.index.by_kind)
    for kind in kinds:
        by_kind[kind] = [
            r for r in sound if r.kind == kind and (changed is None or _ident(r) in changed)
        ]
    mine = dataclasses.replace(ctx, index=checks.KindIndex(by_kind, ctx.index.place))
    found, reads = checks.run_noting(check.module, mine)
    check.reads.add(reads)
    if not _renew(check, path, found, sound, changed):
        _run_kinds(check, ctx, path, kinds, sound, None)


def _renew(
    check: _Check,
    path: str,
    found: list[Finding],
    sound: list[Resource],
    changed: frozenset[_Ident] | None,
) -> bool:
    """`path`'s findings of a check run again on the objects of it the edit changed (on every
    object: `changed` None): those about the others are kept, in the objects' order (a
    finding's line is in its object's text: a whole run's order once collected). False
    (nothing renewed) when a finding is about no object of `sound`; the rest, in other
    files (about the profiles), are kept as they were."""
    here = [f for f in found if f.file == path]
    if changed is not None:
        line = {_ident(r): r.line for r in sound}
        here += [f for f in check.by_file.get(path, ()) if _ident(f) not in changed]
        if any(_ident(f) not in line for f in here):
            return False
        here.sort(key=lambda f: line[_ident(f)])
    if here:
        check.by_file[path] = here
    else:
        check.by_file.pop(path, None)
    return True


_Ident = tuple[str | None, str | None, str | None]  # an object's kind, namespace and name


def _ident(what: Resource | Finding) -> _Ident:
    return what.kind or None, what.namespace, what.name or None


@dataclass(frozen=True)
class _Edit:
    """What an edit of a file changed: the (kind, name) of the objects whose body or line it
    changed (`_moved`), the identities of those whose text it changed (`_changed`); None
    where that is not known."""

    moved: frozenset[tuple[str, str]] | None = None
    changed: frozenset[_Ident] | None = None
    before: list[Resource] | None = None  # the file's sound objects, as they were and are
    after: list[Resource] | None = None

    def keeps(self, check: _Check) -> bool:
        """Whether the edit leaves all `check` reads of the objects (`Rerun.project`)."""
        project, kinds = check.module.RERUN.project, check.reads.kinds
        if project is None or self.before is None or self.after is None:
            return False
        seen = [
            collections.Counter(project(r) for r in objects if r.kind in kinds)
            for objects in (self.before, self.after)
        ]
        return None not in seen[0] and None not in seen[1] and seen[0] == seen[1]


def _changed(before: _File, after: _File) -> frozenset[_Ident] | None:
    """The identities of the objects of a file whose text or first line an edit changed, or
    that it added or removed; None when that is not known (`_File.texts`)."""
    old, new = before.texts(), after.texts()
    if old is None or new is None:
        return None
    return frozenset(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))


def _moved(before: _File, after: _File) -> frozenset[tuple[str, str]] | None:
    """The (kind, name) of each object of a file an edit changed (its body or its line), as it
    was and as it is; None when the edit added, removed or renamed one, or changed which of
    them are invalid (`Rerun.refers`: which objects there are is read by every object)."""

    def named(file: _File) -> list[tuple[str, str | None, str]]:
        return sorted((r.kind, r.namespace, r.name) for r in file.sound)

    if named(before) != named(after) or before.invalid.keys() != after.invalid.keys():
        return None
    old = {(b, r.line): r for b, r in zip(before.bodies(), before.loaded.resources, strict=True)}
    new = {(b, r.line): r for b, r in zip(after.bodies(), after.loaded.resources, strict=True)}
    return frozenset(
        (r.kind, r.name) for marks, other in ((old, new), (new, old))
        for mark, r in marks.items() if mark not in other
    )  # fmt: skip


def _about(what: Resource | Finding) -> tuple[str | None, str | None, str | None, str | None]:
    return what.file, what.kind or None, what.namespace, what.name or None


def _run_referring(
    check: _Check, ctx: checks.CheckContext, moved: frozenset[tuple[str, str]]
) -> bool:
    """A `per_object_of` check whose objects refer to others (`Rerun.refers`) run again on the
    objects referring to one the edit changed (`moved`): their findings replace theirs, each
    file's in the objects' order, as a whole run yields them. False (nothing renewed): one of
    them is rendered (its findings may be in any file), or a finding is about no such object."""
    rerun = check.module.RERUN
    assert ctx.index is not None and rerun.refers is not None
    by_kind = dict(ctx.index.by_kind)
    again: dict[tuple[str | None, ...], Resource] = {}
    for kind in rerun.per_object_of:
        by_kind[kind] = [r for r in by_kind.get(kind, ()) if not moved.isdisjoint(rerun.refers(r))]
        again.update((_about(r), r) for r in by_kind[kind])
    if any(r.rendered_from or r.sources for r in again.values()):
        return False
    mine = dataclasses.replace(ctx, index=checks.KindIndex(by_kind, ctx.index.place))
    found, reads = checks.run_noting(check.module, mine) if again else ([], checks.Reads())
    if any(_about(f) not in again for f in found):
        return False
    files = {r.file for r in again.values()}
    place = {
        _about(r): ctx.index.place(r)
        for kind in rerun.per_object_of
        for r in ctx.index.by_kind.get(kind, ())
        if r.file in files
    }
    renewed: dict[str, list[Finding]] = {}
    for file in files:
        kept = [f for f in check.by_file.get(file, ()) if _about(f) not in again]
        mine_now = [*kept, *(f for f in found if f.file == file)]
        if any(_about(f) not in place for f in mine_now):
            return False
        renewed[file] = sorted(mine_now, key=lambda f: place[_about(f)])  # stable: in order
    check.reads.add(reads)
    for file, now in renewed.items():
        if now:
            check.by_file[file] = now
        else:
            check.by_file.pop(file, None)
    return True
