"""Policy checks: one module per check, registered explicitly below.

A check module is a `protocol.Check` (checks/protocol.py): `ID` (kebab-case), `RULES` (its
rules, declared beside it in `<module>.rules.yaml`: `rules.of(__name__)`), `check(ctx)`, which
yields findings of those rules (each rule carries its severity, category and documentation),
and `RERUN`, what an edit makes an editor's server compute again of it. Strict mypy holds every
module of `_MODULES` to it; the modules import none of each other (an import-linter contract):
what several need is in checks/_common.py.
"""

from __future__ import annotations

import datetime
import functools
import heapq
import typing as t
from dataclasses import dataclass, field

from auditor.errors import ConfigError, processing
from auditor.k8s.objects import ResourceKey
from auditor.model import Finding, Resource
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.validate.checks import (
    admissible,
    admission_lockout,
    admission_policies,
    alert_coverage,
    cohort_tree,
    default_localqueue,
    default_priority_class,
    fair_sharing,
    flavors,
    kueue_config,
    kueue_webhook,
    localqueue_target,
    multikueue,
    namespace_selector,
    platform_powers,
    preemption,
    preemption_policy,
    priority,
    priority_levels,
    prune_guard,
    quantities,
    quotas,
    self_heal,
    stop_policy,
    tenant_objects,
    tenant_powers,
    tenant_rbac,
)
from auditor.validate.checks.protocol import Check

if t.TYPE_CHECKING:
    from auditor.repo.layout import Repository


@dataclass(frozen=True)
class KindIndex:
    """A context's objects by kind, each list in the order of its `resources`; `place` is an
    object's rank in that order (to merge the lists of several kinds back into it)."""

    by_kind: t.Mapping[str, list[Resource]]
    place: t.Callable[[Resource], t.Any]


@dataclass(frozen=True)
class CheckContext:
    """What a check sees: one cluster, its objects from the repo, and every profile."""

    repo: Repository
    cluster: ClusterProfile
    resources: tuple[Resource, ...]
    tenants: dict[str, TenantProfile]
    today: datetime.date = field(default_factory=datetime.date.today)  # evidence expires
    # Objects kept out of `resources` for a real type error, with the finding that says why,
    # so a reference to one is reported as invalid, not missing.
    invalid: t.Mapping[ResourceKey, Finding] = field(default_factory=dict)
    # `resources` by kind, kept by the caller (an editor's session) instead of derived here
    index: KindIndex | None = None
    # Some folder synced to the cluster did not render (a finding says why): the checks that
    # report what is absent say nothing, as it may be in what was not rendered.
    unrendered: bool = False

    def of_kind(self, *kinds: str) -> list[Resource]:
        index = self._index
        if len(kinds) == 1:
            return list(index.by_kind.get(kinds[0], ()))
        lists = [index.by_kind.get(k, ()) for k in dict.fromkeys(kinds)]
        return list(heapq.merge(*lists, key=index.place))  # back in the order of `resources`

    @functools.cached_property
    def _index(self) -> KindIndex:
        """`index`, else the objects of each kind made here once: every check asks for a few
        kinds (a walk of every object for each was a tenth of the checks' time)."""
        if self.index is not None:
            return self.index
        by_kind: dict[str, list[Resource]] = {}
        rank: dict[int, int] = {}
        for place, resource in enumerate(self.resources):
            by_kind.setdefault(resource.kind, []).append(resource)
            rank[id(resource)] = place
        return KindIndex(by_kind, lambda resource: rank[id(resource)])


# The check modules, in the order they run; a new check is imported above and added here.
_MODULES: tuple[Check, ...] = (
    tenant_objects,
    localqueue_target,
    namespace_selector,
    quotas,
    admissible,
    cohort_tree,
    flavors,
    preemption,
    preemption_policy,
    fair_sharing,
    multikueue,
    self_heal,
    priority,
    priority_levels,
    tenant_rbac,
    tenant_powers,
    platform_powers,
    quantities,
    kueue_webhook,
    stop_policy,
    prune_guard,
    default_localqueue,
    default_priority_class,
    alert_coverage,
    kueue_config,
    admission_lockout,
    admission_policies,
)

CHECKS: dict[str, Check] = {m.ID: m for m in _MODULES}


def get(check_id: str) -> Check:
    try:
        return CHECKS[check_id]
    except KeyError:
        raise ConfigError(f'no such check: "{check_id}"') from None


def run(ctx: CheckContext, only: t.Iterable[str] | None = None) -> list[Finding]:
    """Run the checks (all, or `only`) on one cluster; stamp the cluster on their findings."""
    modules = [get(i) for i in only] if only is not None else list(CHECKS.values())
    findings: list[Finding] = []
    for module in modules:
        findings += _run(module, ctx, ctx)
    return findings


def _run(module: Check, ctx: CheckContext, seen: t.Any) -> list[Finding]:
    """One check's findings on `ctx`'s cluster; the check is handed `seen` (`ctx`, or a view
    of it that notes what the check reads)."""
    findings: list[Finding] = []
    with processing(f"running check {module.ID} on cluster {ctx.cluster.name}"):
        for finding in module.check(seen):
            if module.RULES.get(finding.rule.id) is not finding.rule:
                raise AssertionError(
                    f"check {module.ID} yielded a rule it does not declare: {finding.rule.id}"
                )
            finding.cluster = finding.cluster or ctx.cluster.name
            findings.append(finding)
    return findings


@dataclass
class Reads:
    """What one run of a check read of its context: the kinds it asked for, whether it went
    through every object or the invalid ones, and the repository files and folders (a folder
    as "path/") it read through the tree. A change to none of them cannot change its findings,
    so an editor's server (auditor/validate/session.py) keeps them."""

    kinds: set[str] = field(default_factory=set)
    every: bool = False  # `resources`: every object of the cluster
    invalid: bool = False
    paths: set[str] = field(default_factory=set)
    loads: bool = False  # it loaded manifests itself (`repo.load`): of other clusters too
    unrendered: bool = False  # it asked whether some folder of the cluster did not render
    # Of the folders in `paths`: those listed, and what it was told of whether each folder it
    # asked about is one. Asking whether clusters/ is a folder is not reading what is in it:
    # an edit of a file there changes the answer only if the folder comes or goes.
    listed: set[str] = field(default_factory=set)
    folders: dict[str, bool] = field(default_factory=dict)

    def touched(self, kinds: t.AbstractSet[str], invalid: bool, path: str, tree: t.Any) -> bool:
        """Whether a change to objects of `kinds` in file `path` (`invalid`: one of them was or
        is invalid; no kinds: a file of another cluster, or one that held no object before and
        holds none now) may change what the check finds; `tree` is the repository's now."""
        return (
            (self.every and bool(kinds))
            or not self.kinds.isdisjoint(kinds)
            or (invalid and self.invalid)
            or self.read(path, tree)
        )

    def read(self, path: str, tree: t.Any) -> bool:
        """Whether the check read `path` through the tree, listed a folder holding it, or was
        told a folder is or is not one that `tree` (as it is now) says otherwise of."""
        return (
            path in self.paths
            or any(path.startswith(p) for p in self.listed)
            or any(tree.is_dir(f) is not was for f, was in self.folders.items())
        )

    def add(self, other: Reads) -> None:
        """What `other` (a run on part of the objects) read of the tree, added to this."""
        self.paths |= other.paths
        self.listed |= other.listed
        self.folders.update(other.folders)


def run_noting(module: Check, ctx: CheckContext) -> tuple[list[Finding], Reads]:
    """One check's findings on `ctx`'s cluster, and what it read to make them."""
    reads = Reads()
    return _run(module, ctx, _Noting(ctx, reads)), reads


class _Noting:
    """A CheckContext that notes in `reads` what the check asks of it."""

    def __init__(self, ctx: CheckContext, reads: Reads) -> None:
        self._ctx, self._reads = ctx, reads

    def of_kind(self, *kinds: str) -> list[Resource]:
        self._reads.kinds.update(kinds)
        return self._ctx.of_kind(*kinds)

    @property
    def resources(self) -> tuple[Resource, ...]:
        self._reads.every = True
        return self._ctx.resources

    @property
    def invalid(self) -> t.Mapping[ResourceKey, Finding]:
        self._reads.invalid = True
        return self._ctx.invalid

    @property
    def unrendered(self) -> bool:
        self._reads.unrendered = True
        return self._ctx.unrendered

    @property
    def repo(self) -> t.Any:
        return _NotingRepo(self._ctx.repo, self._reads)

    def __getattr__(self, name: str) -> t.Any:
        return getattr(self._ctx, name)


class _NotingRepo:
    def __init__(self, repo: Repository, reads: Reads) -> None:
        self._repo, self._reads = repo, reads

    @property
    def tree(self) -> t.Any:
        return _NotingTree(self._repo.tree, self._reads)

    def __getattr__(self, name: str) -> t.Any:
        if name in ("load", "plan", "load_file", "load_placed"):  # the manifests, all of them
            self._reads.every = self._reads.loads = True
        return getattr(self._repo, name)


class _NotingTree:
    def __init__(self, tree: t.Any, reads: Reads) -> None:
        self._tree, self._reads = tree, reads

    def read(self, path: str) -> bytes:
        self._reads.paths.add(path)
        return t.cast(bytes, self._tree.read(path))

    def files(self, folder: str) -> list[str]:
        self._list(folder)
        return t.cast(list[str], self._tree.files(folder))

    def subfolders(self, folder: str) -> list[str]:
        self._list(folder)
        return t.cast(list[str], self._tree.subfolders(folder))

    def is_dir(self, folder: str) -> bool:
        answer = bool(self._tree.is_dir(folder))
        self._reads.paths.add(folder.rstrip("/") + "/")
        self._reads.folders[folder] = answer
        return answer

    def _list(self, folder: str) -> None:
        self._reads.paths.add(folder.rstrip("/") + "/")
        self._reads.listed.add("" if folder in ("", ".") else folder.rstrip("/") + "/")
