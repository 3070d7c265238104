"""Drift as a function over data: one cluster's repository side and what was read of it in,
its findings out (`compare_cluster`).

The comparison is a fold over the cluster's kinds (`Comparison`): each kind's LIST added as it
comes, every part whose kinds are all in compared at once, the rest when the reading ends (a
kind never added is unread: nothing of it is said). Parts are independent but for what they
name in `needs`:
- each kind's objects (repo against live, then live-only ones) need that kind and the
  context: the CRDs (schemas for defaults) and the kinds whose selectors say which labels are
  read (ClusterQueue, ClusterRole, admission policies: auditor/drift/metadata.py);
- RBAC powers and the tenants' need the four RBAC kinds; capacity, the Nodes; CRD drift, the
  CRDs; the Argo CD release the profile names, the release read running (`argocd`, last).
The read plan (drift/reading.py) puts the context first, so each other kind is compared as
soon as its LIST ends. While a kind is still to come, what it will need and what needs no more
of the cluster is done ahead (`Comparison.ahead`, in the child while it waits): the
repository's objects normalized, what the repository's bindings give with the live roles.
Memos only: taken once, and a step that fails is done again in its turn. The findings are
sorted once, at the end (`finish`): their order never depends on when a kind came. How the
kinds reach the fold (the same fold, in a child process while this one reads) is
auditor/drift/audit.py's and auditor/speed/stream.py's; this module does no I/O.
"""

from __future__ import annotations

import datetime
import functools
import logging
import typing as t
from dataclasses import dataclass, field

from auditor.drift import argocd, capacity, crds, findings, metadata, powers, tenants, unread
from auditor.drift.normalize import Normalized, normalize
from auditor.drift.reading import (
    CRD,
    NODES,
    SELECTOR_KINDS,
    Listed,
    Live,
    LiveSchemas,
    Planned,
    key_of,
    plan,
)
from auditor.errors import internal_error, processing
from auditor.k8s.objects import RBAC_KINDS, Json, ResourceKey
from auditor.model import Finding, Resource
from auditor.repo import suppressions
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.schemas.catalog import SchemaCatalog

if t.TYPE_CHECKING:
    from auditor.live.argocd import Running

log = logging.getLogger(__name__)
ROLE_KINDS = ("ClusterRole", "Role")  # all repo_granted reads of the cluster, in RBAC_KINDS' order


@dataclass
class RepoSide:
    """One cluster's repository side: the objects drift compares (their shape accepted,
    drift/shapes.py), a finding for each refused one, the schemas, the tenants' profiles, the
    identities files that did not load may define (drift/unread.py)."""

    profile: ClusterProfile
    desired: list[Resource]
    refused: list[Finding] = field(default_factory=list)
    catalog: SchemaCatalog | None = None
    tenants: t.Mapping[str, TenantProfile] = field(default_factory=dict)
    unread: unread.Unread = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.unread = {**unread.refused(self.refused), **self.unread}
        self.by_key = {r.key: r for r in self.desired}
        self.by_kind: dict[str, list[Resource]] = {}
        for resource in self.by_key.values():
            self.by_kind.setdefault(resource.kind, []).append(resource)
        self.owned = findings.kueue_owned(self.profile, self.desired)
        self.plan = plan(self.profile, self.desired)


@dataclass(frozen=True)
class Part:
    """One part of a cluster's comparison: what it is, and the kinds it needs read first."""

    what: str  # "objects", "rbac", "capacity", "crds" or "argocd"
    kind: str | None
    needs: frozenset[str]


def context_kinds(side: RepoSide) -> frozenset[str]:
    """The kinds the schemas and the label readers come from (those the plan reads)."""
    return frozenset({CRD[1], *SELECTOR_KINDS} & {p.kind for p in side.plan})


def parts(side: RepoSide) -> list[Part]:
    listed = {p.kind for p in side.plan}
    context = context_kinds(side)
    objects = [k for k in listed if k not in (CRD[1], NODES[1])]
    return [
        *(Part("objects", k, context | {k}) for k in sorted(objects)),
        Part("rbac", None, frozenset(RBAC_KINDS)),
        Part("capacity", None, frozenset({NODES[1]})),
        Part("crds", None, frozenset({CRD[1]})),
    ]


class Comparison:
    """One cluster's comparison, its kinds added as they are read; `findings` ends it."""

    def __init__(self, side: RepoSide) -> None:
        self.side = side
        self.listed: dict[str, Listed] = {}
        self.pending = parts(side)
        self.found: list[Finding] = []
        self.error: str | None = None  # the first bug met: the cluster is then incomplete
        self._context: tuple[LiveSchemas, metadata.Readers] | None = None
        self._needs = context_kinds(side)
        self._ahead: dict[str, t.Any] = {}  # what `ahead` made, by step (None: it failed)

    def add(self, listed: Listed) -> None:
        """Take one kind's LIST; compare every part it completes."""
        self.listed[listed.kind] = listed
        ready = [p for p in self.pending if p.needs <= self.listed.keys()]
        self.pending = [p for p in self.pending if p not in ready]
        for part in ready:
            self._run(part)

    def argocd(self, running: Running) -> None:
        """Take the Argo CD release read running: compared with the profile's at once."""
        self._run(Part("argocd", None, frozenset()), running)

    def ahead(self) -> bool:
        """One step of what the kinds still to come need, done before they come (while the
        child waits for them); False when none is left. It only remembers: a step that fails
        is done again in its turn, where the comparison meets the same error."""
        for name, step in self._steps():
            if name not in self._ahead:
                try:
                    self._ahead[name] = step()
                except Exception:
                    self._ahead[name] = None
                return True
        return False

    def _steps(self) -> list[tuple[str, t.Callable[[], t.Any]]]:
        """The steps ahead that can be done now: the repository's RBAC with the live roles
        once those are in, then the repository's objects of each kind to come normalized once
        the context is, in the order the kinds are read."""
        if self.error is not None:
            return []
        kinds, steps = self.listed.keys(), list[tuple[str, t.Callable[[], t.Any]]]()
        if kinds >= set(ROLE_KINDS) and any(p.what == "rbac" for p in self.pending):
            steps.append(("rbac", self.granted))
            if "ClusterRoleBinding" in kinds:
                steps.append(("explained", self.explained))
        if self._needs <= kinds:
            coming = {p.kind for p in self.pending if p.what == "objects"}
            steps += [
                (f"objects {kind}", functools.partial(self.normalized, kind))
                for kind in dict.fromkeys(p.kind for p in self.side.plan)
                if kind in coming
            ]
        return steps

    def taken(self, name: str) -> t.Any:
        """What `ahead` made in step `name`, once (comparing changes it); None: not made."""
        return self._ahead.pop(name, None)

    def normalized(self, kind: str) -> dict[ResourceKey, Normalized]:
        """The repository's objects of `kind`, normalized with the cluster's schemas."""
        schemas, _ = self.context()
        return {
            r.key: normalize(r.body, schemas.schema(r.api_version, r.kind))
            for r in self.side.by_kind.get(kind, ())
        }

    def explained(self) -> powers.Held:
        """What the repository gives with the live roles and the ClusterRoleBindings: the
        RoleBindings are added in their turn (powers.explained's split)."""
        early = self.live_rbac(*ROLE_KINDS, "ClusterRoleBinding")
        return powers.explained(self.side.desired, early)

    def live_rbac(self, *kinds: str) -> list[Json]:
        """The live RBAC objects of `kinds`, in RBAC_KINDS' order (the order the policy takes)."""
        return [o for k in RBAC_KINDS if k in kinds for o in self.items(k) or ()]

    def granted(self) -> list[Finding]:
        """What the repository's bindings give with the live roles (repo_granted): its part of
        the RBAC comparison that needs no live binding."""
        return repo_granted(self.side, self.live_rbac(*ROLE_KINDS))

    def findings(self) -> tuple[list[Finding], str | None]:
        """Every finding, sorted (the parts left: their kinds unread); or the first bug's
        one-line error, with only the refused objects' findings."""
        for part in self.pending:
            self._run(part)
        self.pending = []
        if self.error is None:
            try:
                return finish(self.side, self.found), None
            except Exception as exc:
                log.debug("comparing cluster %s failed", self.side.profile.name, exc_info=True)
                self.error = internal_error(exc)
        return sorted(self.side.refused, key=order), self.error

    def _run(self, part: Part, running: Running | None = None) -> None:
        if self.error is not None:
            return
        try:
            with processing(f"comparing cluster {self.side.profile.name}"):
                if part.what == "argocd":
                    self.found.extend(argocd.release_drift(self.side.profile, running))
                else:
                    self.found.extend(compare_part(self, part))
        except Exception as exc:  # one cluster's bug must not hide the others' drift
            log.debug("comparing cluster %s failed", self.side.profile.name, exc_info=True)
            self.error = internal_error(exc)

    def items(self, kind: str) -> list[Json] | None:
        listed = self.listed.get(kind)
        return None if listed is None else listed.items

    def context(self) -> tuple[LiveSchemas, metadata.Readers]:
        """The schemas and the label readers, once their kinds are in (computed once)."""
        if self._context is None:
            live = [o for k in SELECTOR_KINDS for o in self.items(k) or ()]
            readers = metadata.readers(self.side.profile, self.side.desired, live)
            self._context = LiveSchemas(self.side.catalog, self.items(CRD[1]) or []), readers
        return self._context


def compare_part(comparison: Comparison, part: Part) -> list[Finding]:
    side = comparison.side
    if part.what == "objects":
        return compare_kind(comparison, str(part.kind))
    if part.what == "rbac":
        got = [comparison.items(k) for k in RBAC_KINDS]
        if any(g is None for g in got):
            return []  # judged only over every RBAC kind
        granted = comparison.taken("rbac")
        rbac_live = [o for g in got for o in g or ()]
        allowed = _allowed(comparison, rbac_live)
        granted = comparison.granted() if granted is None else granted
        return compare_rbac(side, rbac_live, allowed, granted)
    if part.what == "capacity":
        nodes = comparison.items(NODES[1])
        return [] if nodes is None else capacity.drift(side.profile, side.desired, nodes)
    return _crd_drift(side, comparison.items(CRD[1]))


def compare_kind(comparison: Comparison, kind: str) -> list[Finding]:
    """Each repository object of `kind` against its live twin, then the live ones the repo
    lacks. Nothing when the kind was not read: say nothing rather than something false."""
    side, listed = comparison.side, comparison.listed.get(kind)
    if listed is None or listed.items is None:
        return []
    profile, found = side.profile, []
    live = {key_of(o): o for o in listed.items}
    schemas, readers = comparison.context()
    wanted: dict[ResourceKey, Normalized] = comparison.taken(f"objects {kind}") or {}
    for resource in side.by_kind.get(kind, ()):
        live_obj = live.get(resource.key)
        if listed.not_served is not None:
            found.append(findings.not_served(profile, resource, listed.not_served))
        elif live_obj is None:
            found.append(findings.missing(profile, resource))
        elif live_obj.get("apiVersion") != resource.api_version:
            live_version = str(live_obj.get("apiVersion"))
            found.append(findings.version_differs(profile, resource, live_version))
        else:
            want = wanted.get(resource.key)
            found.extend(
                findings.modified(profile, resource, live_obj, schemas, readers, side.owned, want)
            )
    for key, obj in live.items():
        if key not in side.by_key and findings.unmanaged_matters(profile, obj):
            found.extend(_unmanaged(side, key, obj))
    return found


def _unmanaged(side: RepoSide, key: ResourceKey, obj: Json) -> list[Finding]:
    file = unread.source(side.unread, key)
    if file is None:
        return [findings.unmanaged(side.profile, obj)]
    # a file that did not load may define it ("": its refused object's own finding says so)
    return [unread.not_compared(side.profile, obj, file)] if file else []


def _allowed(comparison: Comparison, rbac_live: list[Json]) -> powers.Held:
    """What the repository gives: from what was explained ahead, the RoleBindings added."""
    ahead: powers.Held | None = comparison.taken("explained")
    if ahead is None:
        return powers.explained(comparison.side.desired, rbac_live)
    late = comparison.live_rbac(*ROLE_KINDS, "RoleBinding")
    return ahead | powers.explained(comparison.side.desired, late, repo_bindings=False)


def compare_rbac(
    side: RepoSide, rbac_live: list[Json], allowed: powers.Held, granted: list[Finding]
) -> list[Finding]:
    """The RBAC powers held live that the repo does not give (`allowed`: powers.explained),
    then what the repository's own bindings give beyond validate's view (`granted`:
    repo_granted, with the live roles)."""
    live = powers.unexplained_powers(side.profile, side.desired, rbac_live, allowed)
    return [*live, *granted]


def repo_granted(side: RepoSide, live_roles: list[Json]) -> list[Finding]:
    """The tenants' powers beyond their baseline and the platform's powers validate cannot see
    that the repository's bindings give with the roles it leaves out as they are live: the
    live roles are all they need of the cluster."""
    profile, desired, tenant_profiles = side.profile, side.desired, side.tenants
    views = powers.Views.of(desired, live_roles)
    return [
        *tenants.granted(profile, desired, views, tenant_profiles, key_of),
        *powers.platform_granted(profile, desired, views, tenant_profiles),
    ]


def _crd_drift(side: RepoSide, live_crds: list[Json] | None) -> list[Finding]:
    """The CRDs against committed schemas only: the package's set says what a release serves,
    not what this repository recorded of the cluster (whose other CRDs may differ)."""
    found = side.catalog
    if live_crds is None or found is None or found.source.folder is None or not found.index:
        return []
    return crds.drift(side.profile.name, found, live_crds)


def finish(side: RepoSide, found: list[Finding]) -> list[Finding]:
    """The cluster's findings: the refused objects' and the comparison's (less the live twins
    of refused objects: in the repo, malformed), suppressions applied, in one order."""
    keys = {(f.kind, f.namespace, f.name) for f in side.refused}
    kept = [
        f for f in found if f.change != "unmanaged" or (f.kind, f.namespace, f.name) not in keys
    ]
    accepted = suppressions.of_cluster(side.profile, side.desired)
    suppressions.apply(kept, accepted, datetime.date.today())
    return sorted([*side.refused, *kept], key=order)


def order(f: Finding) -> tuple[t.Any, ...]:
    """The one order of a cluster's findings: by file and line (live-only objects, with no
    file, first), then the object, the rule and the field."""
    where = (f.file or "", f.line or 0, f.kind or "", f.namespace or "", f.name or "")
    return (*where, f.rule.id, f.path or "", f.message)


def listed_of(live: Live, planned: t.Iterable[Planned]) -> t.Iterator[Listed]:
    """What a reader's `Live` holds, kind by kind, in the plan's order."""
    by_kind: dict[str, list[Json]] = {CRD[1]: live.crds, NODES[1]: live.nodes}
    for key, obj in live.objects.items():
        if key.kind not in (CRD[1], NODES[1]):
            by_kind.setdefault(key.kind, []).append(obj)
    for kind in dict.fromkeys(p.kind for p in planned):
        items = by_kind.get(kind, []) if kind in live.read else None
        yield Listed(kind, items, live.not_served.get(kind))


def compare_cluster(side: RepoSide, live: Live) -> list[Finding]:
    """Every drift finding of one cluster, sorted, from what was read of it (`live`): the
    fold production runs as the LISTs arrive, over all of them at once. A bug: raised."""
    comparison = Comparison(side)
    for listed in listed_of(live, side.plan):
        comparison.add(listed)
    if live.argocd is not None:
        comparison.argocd(live.argocd)
    found, error = comparison.findings()
    if error is not None:
        raise RuntimeError(error)
    return found
