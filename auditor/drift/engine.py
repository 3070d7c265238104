"""The drift audit: read each cluster once, compare it with the repository, report what differs.

Per cluster, in a thread of its own: its kinds read (auditor.drift.reading: one paginated LIST
per kind, the watched kinds while the repository loads). Once every cluster is read, in forked
worker processes across the cores (auditor.drift.workers): desired and live objects normalized
the same way (auditor.drift.normalize), compared (auditor.drift.compare) and turned into findings
(auditor.drift.findings; RBAC by the powers it gives, auditor.drift.powers; the tenants' powers,
flavors' capacity and CRD fingerprints by their own modules). A finding on an object Argo CD
tracks names its Application and whether Argo CD will heal it (auditor.drift.argocd).

A kind that could not be read makes the cluster `incomplete` and nothing of it is compared:
never reported as clean when not read. One cluster that cannot be reached, has no kubeconfig
context, or trips a bug in the comparison leaves the others reported.
"""

from __future__ import annotations

import datetime
import logging
import typing as t
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from auditor.drift import (
    argocd,
    capacity,
    crds,
    findings,
    fleet,
    metadata,
    powers,
    tenants,
    workers,
)
from auditor.drift.reading import (
    CRD,
    NODES,
    Live,
    LiveSchemas,
    key_of,
    kinds_to_read,
    read,
    watched_kinds,
)
from auditor.errors import ClusterAccessError, internal_error
from auditor.k8s.objects import RBAC_KINDS
from auditor.live.kube import ContextMissing, KubeCluster
from auditor.model import ClusterResult, Finding, Report, Resource
from auditor.repo import manifests, suppressions
from auditor.repo.layout import Loaded, Repository
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.schemas.catalog import SchemaCatalog

log = logging.getLogger(__name__)


class Connector(t.Protocol):
    def __call__(self, profile: ClusterProfile) -> KubeCluster: ...


def audit(
    repo: Repository,
    clusters: list[str],
    connect: Connector,
    *,
    schemas_root: Path | None = None,
    load: t.Callable[[], Loaded] | None = None,
    with_fleet: bool = False,
) -> Report:
    """The drift report over `clusters` (each audited even when another fails).

    Each cluster is read in a thread of its own, the kinds it watches while the repository
    loads (they do not depend on it), then the repo's other kinds. `load`: the manifests of
    `clusters` from elsewhere (drift/preload.py) instead of `repo.load`. `with_fleet`: add
    the fleet summary as the report's section (auditor/drift/fleet.py) and judge version skew.
    """
    report = Report("drift")
    profiles = [repo.cluster(name) for name in clusters]
    lives: dict[str, Live] = {}
    compiled: dict[t.Any, t.Any] = {}  # each kind's schema compiled once for every cluster
    loaded_box: Future[Loaded] = Future()
    with ThreadPoolExecutor(max_workers=max(1, len(profiles))) as pool:
        jobs = [pool.submit(_read_cluster, connect, p, loaded_box) for p in profiles]
        try:
            loaded = load() if load else repo.load(clusters)
        except BaseException as exc:
            loaded_box.set_exception(exc)
            raise
        loaded_box.set_result(loaded)
        report.findings.extend(loaded.findings)  # a broken manifest: its objects are unknown
        # The shape check needs no live object: it runs (compiling schemas) while LISTs wait.
        catalogs = {
            p.name: SchemaCatalog(schemas_root, p.name) if schemas_root else None for p in profiles
        }
        checked = {
            p.name: _sound(p, catalogs[p.name], loaded.for_cluster(p.name), compiled)
            for p in profiles
        }
        reads = [_read_outcome(job) for job in jobs]
    # Every LIST is done and the readers' threads have ended: the comparisons may fork.
    tasks: list[workers.Comparison] = []
    for profile, got in zip(profiles, reads, strict=True):
        if isinstance(got, Live):
            lives[profile.name] = got
            schemas = LiveSchemas(catalogs[profile.name], got.crds)
            desired = checked[profile.name][0]
            tasks += [
                workers.Comparison(profile.name, compare_objects, (profile, desired, got, schemas)),
                workers.Comparison(
                    profile.name,
                    compare_aggregates,
                    (profile, desired, got, schemas, repo.tenants),
                ),
            ]
    compared = workers.run(tasks)
    for profile, got in zip(profiles, reads, strict=True):
        result = ClusterResult(profile.name)
        report.clusters.append(result)
        if not isinstance(got, Live):
            result.status, result.errors = "incomplete", [str(got)]
            continue
        if got.errors:
            result.status, result.errors = "incomplete", got.errors
        desired, refused = checked[profile.name]
        report.findings.extend(refused)
        parts = compared.pop(profile.name)
        failed = [p for p in parts if isinstance(p, str)]
        if failed:  # one cluster's bug must not hide the others' drift
            result.status = "incomplete"
            result.errors.append(failed[0])
            continue
        try:
            found = _not_unmanaged([f for p in parts for f in t.cast(list[Finding], p)], refused)
            accepted = suppressions.of_cluster(profile, desired)
            suppressions.apply(found, accepted, datetime.date.today())
            report.findings.extend(found)
        except Exception as exc:
            log.debug("comparing cluster %s failed", profile.name, exc_info=True)
            result.status = "incomplete"
            result.errors.append(internal_error(exc))
    apps = argocd.Applications(a for live in lives.values() for a in live.applications)
    argocd.name_applications(report.findings, {n: v.objects for n, v in lives.items()}, apps)
    if with_fleet:
        report.section = _fleet(repo, profiles, lives, report)
    return report


def _fleet(
    repo: Repository, profiles: list[ClusterProfile], lives: dict[str, Live], report: Report
) -> fleet.Fleet:
    """The fleet summary (auditor/drift/fleet.py), and a finding per cluster too far behind."""
    top = fleet.newest(repo.clusters.values())
    found = fleet.Fleet(top)
    for profile in profiles:
        live = lives.get(profile.name)
        read_crds = live is not None and CRD[1] in live.read
        member = fleet.member(profile, top, live.crds if live is not None and read_crds else None)
        found.members.append(member)
        if top is not None and member.behind:
            docs, _ = manifests.load_bytes(repo.tree.read(profile.file), profile.file)
            late = fleet.behind(profile, member, top, docs[0]) if docs else None
            if late is not None:
                report.findings.append(late)
    return found


def _first(profile: ClusterProfile) -> list[tuple[str, str]]:
    return [*watched_kinds(profile), CRD, NODES]


def _read_cluster(connect: Connector, profile: ClusterProfile, loaded: Future[Loaded]) -> Live:
    """Everything drift reads of one cluster: the watched kinds, then the repo's others."""
    cluster = connect(profile)
    live = read(cluster, _first(profile))
    live.cluster = cluster
    first = set(_first(profile))
    desired = loaded.result().for_cluster(profile.name)
    read(cluster, [k for k in kinds_to_read(profile, desired) if k not in first], live)
    if not live.stopped:
        live.applications = argocd.read_applications(cluster)
    return live


def _read_outcome(job: Future[Live]) -> Live | ClusterAccessError | ContextMissing:
    """What was read of a cluster, or why it could not be reached at all."""
    try:
        return job.result()
    except (ClusterAccessError, ContextMissing) as exc:
        return exc


def compare_cluster(
    profile: ClusterProfile,
    desired: list[Resource],
    live: Live,
    schemas: LiveSchemas,
    tenant_profiles: t.Mapping[str, TenantProfile] | None = None,
) -> list[Finding]:
    """Every drift finding for one cluster, given what was read of it (and, with the tenants'
    profiles, the powers the repository grants them): its objects' then the aggregates'."""
    return [
        *compare_objects(profile, desired, live, schemas),
        *compare_aggregates(profile, desired, live, schemas, tenant_profiles),
    ]


def compare_objects(
    profile: ClusterProfile, desired: list[Resource], live: Live, schemas: LiveSchemas
) -> list[Finding]:
    """Each repository object against its live twin, then the live objects the repo lacks."""
    found: list[Finding] = []
    by_key = {r.key: r for r in desired}
    readers = metadata.readers(profile, desired, live.objects.values())
    owned = findings.kueue_owned(profile, desired)
    for key, resource in by_key.items():
        if key.kind not in live.read:
            continue  # not read: say nothing rather than something false
        live_obj = live.objects.get(key)
        if resource.kind in live.not_served:
            found.append(findings.not_served(profile, resource, live.not_served[resource.kind]))
        elif live_obj is None:
            found.append(findings.missing(profile, resource))
        elif live_obj.get("apiVersion") != resource.api_version:
            live_version = str(live_obj.get("apiVersion"))
            found.append(findings.version_differs(profile, resource, live_version))
        else:
            found.extend(findings.modified(profile, resource, live_obj, schemas, readers, owned))
    for key, obj in sorted(live.objects.items()):
        if key not in by_key and findings.unmanaged_matters(profile, obj):
            found.append(findings.unmanaged(profile, obj))
    return found


def compare_aggregates(
    profile: ClusterProfile,
    desired: list[Resource],
    live: Live,
    schemas: LiveSchemas,
    tenant_profiles: t.Mapping[str, TenantProfile] | None = None,
) -> list[Finding]:
    """What is judged over many objects: RBAC powers, the tenants' powers, capacity, CRDs."""
    found: list[Finding] = []
    if all(kind in live.read for kind in RBAC_KINDS):
        found.extend(powers.unexplained_powers(profile, desired, live))
        live_rbac = [o for k, o in live.objects.items() if k.kind in RBAC_KINDS]
        found.extend(tenants.granted(profile, desired, live_rbac, tenant_profiles or {}, key_of))
    if NODES[1] in live.read:
        found.extend(capacity.drift(profile, desired, live.nodes))
    if schemas.catalog and schemas.catalog.index and CRD[1] in live.read:
        found.extend(crds.drift(profile.name, schemas.catalog, live.crds))
    return found


def _sound(
    profile: ClusterProfile,
    catalog: SchemaCatalog | None,
    desired: list[Resource],
    compiled: dict[t.Any, t.Any],
) -> tuple[list[Resource], list[Finding]]:
    """The repo objects drift can compare, and a finding for each other one (drift/shapes.py)."""
    if catalog is None or not catalog.index:
        return desired, []
    from auditor.drift import shapes  # the schema validator and CEL's imports: only here

    return shapes.sound(profile, catalog, desired, compiled)


def _not_unmanaged(found: t.Iterable[Finding], refused: list[Finding]) -> list[Finding]:
    """`found`, less the live twins of refused repo objects: they are in the repo, malformed."""
    keys = {(f.kind, f.namespace, f.name) for f in refused}
    return [
        f for f in found if f.change != "unmanaged" or (f.kind, f.namespace, f.name) not in keys
    ]
