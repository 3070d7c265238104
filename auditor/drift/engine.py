"""The drift audit: read each cluster once, compare it with the repository, report what differs.

Over several clusters, the drift command shares them among processes, one per core, each
auditing its group (`_group_job`) while this process loads the repository for the report
(auditor/speed/parallel.py owns the forks). Per cluster, in a thread of its own: its kinds read
(auditor.drift.reading: one paginated LIST per kind, the watched kinds while the repository
loads). Once every cluster is read, in parts shared across the cores (auditor.drift.workers):
desired and live objects normalized
the same way (auditor.drift.normalize), compared (auditor.drift.compare) and turned into findings
(auditor.drift.findings; RBAC by the powers it gives, auditor.drift.powers; the tenants' powers,
flavors' capacity and CRD fingerprints by their own modules). A finding on an object Argo CD
tracks names its Application and whether Argo CD will heal it (auditor.drift.argocd).

A kind that could not be read makes the cluster `incomplete` and nothing of it is compared:
never reported as clean when not read. One cluster that cannot be reached, has no kubeconfig
context, whose credential plugin fails or hangs, or that trips a bug in the comparison leaves
the others reported (a failed plugin is exit 2 only when its cluster is the run's one).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import logging
import typing as t
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
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
    unread,
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
    read_instead,
    watched_kinds,
)
from auditor.errors import ClusterAccessError, ConfigError, internal_error
from auditor.k8s.objects import RBAC_KINDS, Json, ResourceKey
from auditor.live import argocd as live_argocd
from auditor.live.credentials import ContextMissing, PluginFailed
from auditor.live.kube import KubeCluster
from auditor.model import ClusterResult, Finding, Report, Resource
from auditor.repo import cached, manifests, suppressions
from auditor.repo.cache import FileCache
from auditor.repo.layout import Loaded, Repository
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.schemas import catalog
from auditor.schemas.catalog import SchemaCatalog
from auditor.speed import parallel

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
    caches: t.Mapping[str, FileCache] | None = None,
    with_fleet: bool = False,
    processes: int = 1,
) -> Report:
    """The drift report over `clusters` (each audited even when another fails).

    Each cluster is read in a thread of its own, the kinds it watches while the repository
    loads (they do not depend on it), then the repo's other kinds. `load`: the manifests of
    `clusters` from elsewhere (drift/preload.py) instead of `repo.load`; `caches`: the
    validate cache packs to load them from in a worker. `with_fleet`: add the fleet summary
    as the report's section (auditor/drift/fleet.py) and judge version skew. `processes`:
    with more than one, the clusters are audited in that many forked worker processes
    (each reading, checking and comparing its share), the report the same, in the same order.
    """
    report = Report("drift")
    profiles = [repo.cluster(name) for name in clusters]
    count = parallel.processes(processes, len(profiles))
    if count > 1:
        groups = [[p.name for p in profiles[i::count]] for i in range(count)]
        job = functools.partial(_group_job, repo, connect, schemas_root, caches or {})
        running = parallel.start(job, groups, count, share=False)
        # Meanwhile this process loads the repository for the report.
        loaded = load() if load else repo.load(clusters)
        outcomes = {k: v for group in running.results() for k, v in group.items()}
    else:
        loaded, outcomes = _here(repo, profiles, connect, schemas_root, load)
    if len(profiles) == 1 and outcomes[profiles[0].name].plugin_failed:
        # the run's one cluster: its kubeconfig cannot be used at all (docs/usage.md)
        raise PluginFailed(outcomes[profiles[0].name].result.errors[0])
    report.findings.extend(loaded.findings)  # a broken manifest: its objects are unknown
    for profile in profiles:
        report.clusters.append(outcomes[profile.name].result)
        report.findings.extend(outcomes[profile.name].findings)
    reached = [outcomes[p.name] for p in profiles if outcomes[p.name].objects is not None]
    apps = argocd.Applications(a for o in reached for a in o.applications)
    objects = {o.result.name: o.objects or {} for o in reached}
    argocd.name_applications(report.findings, objects, apps)
    if with_fleet:
        report.section = _fleet(repo, profiles, outcomes, report)
    return report


@contextlib.contextmanager
def _readers(count: int) -> t.Iterator[ThreadPoolExecutor]:
    """The clusters' reading threads. Ctrl-C or SIGTERM leaves them reading: the process ends
    at once (auditor/cli/signals.py), and a read in flight would hold it until its deadline."""
    pool = ThreadPoolExecutor(max_workers=count)
    try:
        yield pool
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    except BaseException:
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)


@dataclass
class Outcome:
    """What auditing one cluster came to, all the report needs of it."""

    result: ClusterResult
    findings: list[Finding] = field(default_factory=list)
    objects: dict[ResourceKey, Json] | None = None  # None: not reached
    applications: list[Json] = field(default_factory=list)  # Argo CD's, when it runs there
    versions: fleet.Versions | None = None  # what its Kueue CRDs serve and store, when read
    plugin_failed: bool = False  # not reached: its exec credential plugin failed


def _here(
    repo: Repository,
    profiles: list[ClusterProfile],
    connect: Connector,
    schemas_root: Path | None,
    load: t.Callable[[], Loaded] | None,
    jobs: int | None = None,
) -> tuple[Loaded, dict[str, Outcome]]:
    """Audit `profiles` in this process: read them while the repository loads, then compare
    each in parts shared across the cores (auditor/drift/workers.py), then one outcome each."""
    loaded, repo_side, rbac, reads = _read_all(repo, profiles, connect, schemas_root, load)
    # Every LIST is done and the readers' threads have ended: the comparisons may fork.
    tasks = [
        task
        for profile, got in zip(profiles, reads, strict=True)
        if isinstance(got, Live)
        for task in _comparisons(repo, loaded, profile, repo_side[profile.name], got)
    ]
    compared = workers.run(tasks, jobs)
    outcomes = {
        profile.name: _outcome(
            profile,
            repo_side[profile.name],
            got,
            [*compared.get(profile.name, [])],
            rbac[profile.name],
        )
        for profile, got in zip(profiles, reads, strict=True)
    }
    return loaded, outcomes


@dataclass(frozen=True)
class _RepoSide:
    """One cluster's repository objects: those drift compares, a finding for each it cannot
    (drift/shapes.py), and the schemas that judged them."""

    desired: list[Resource]
    refused: list[Finding]
    catalog: SchemaCatalog | None


def _read_all(
    repo: Repository,
    profiles: list[ClusterProfile],
    connect: Connector,
    schemas_root: Path | None,
    load: t.Callable[[], Loaded] | None,
) -> tuple[
    Loaded,
    dict[str, _RepoSide],
    dict[str, workers.Outcome | None],
    list[Live | ClusterAccessError | ConfigError],
]:
    """Each cluster read in a thread of its own while this one loads the repository, checks
    its objects' shapes and judges each cluster's RBAC powers as soon as its RBAC kinds are in
    (None: not all of them were read); returns once every reading thread has ended."""
    compiled: dict[t.Any, t.Any] = {}  # each kind's schema compiled once for every cluster
    loaded_box: Future[Loaded] = Future()
    rbac_boxes: list[Future[list[Json] | None]] = [Future() for _ in profiles]
    with _readers(max(1, len(profiles))) as pool:
        reading = [
            pool.submit(_read_cluster, connect, p, loaded_box, box)
            for p, box in zip(profiles, rbac_boxes, strict=True)
        ]
        try:
            loaded = load() if load else repo.load([p.name for p in profiles])
        except BaseException as exc:
            loaded_box.set_exception(exc)
            raise
        loaded_box.set_result(loaded)
        # The shape check needs no live object: it runs (compiling schemas) while LISTs wait.
        repo_side: dict[str, _RepoSide] = {}
        for p in profiles:
            found = catalog.find(schemas_root, p.name, p.kueue_version)
            desired, refused = _sound(p, found, loaded.for_cluster(p.name), compiled)
            repo_side[p.name] = _RepoSide(desired, refused, found)
        # The RBAC powers need only the RBAC kinds, read first: judged while the rest is read.
        rbac: dict[str, workers.Outcome | None] = {}
        for profile, box in zip(profiles, rbac_boxes, strict=True):
            rbac_live = box.result()
            args = (profile, repo_side[profile.name].desired, rbac_live, repo.tenants)
            rbac[profile.name] = (
                None
                if rbac_live is None
                else workers.here(workers.Comparison(profile.name, compare_rbac, args))
            )
        reads = [_read_outcome(job) for job in reading]
    return loaded, repo_side, rbac, reads


def _comparisons(
    repo: Repository, loaded: Loaded, profile: ClusterProfile, side: _RepoSide, live: Live
) -> list[workers.Comparison]:
    """One read cluster's comparison in parts: its objects in two halves (most of the work),
    then capacity and CRDs. Notes first in `live` which objects the repository failed to give."""
    live.unread = {
        **unread.refused(side.refused),
        **unread.unread(repo, loaded.findings, profile.name),
    }
    schemas = LiveSchemas(side.catalog, live.crds)
    halves = [(profile, side.desired, live, schemas, (i, 2)) for i in range(2)]
    return [
        *(workers.Comparison(profile.name, compare_objects, args) for args in halves),
        workers.Comparison(profile.name, compare_rest, (profile, side.desired, live, schemas)),
    ]


def _outcome(
    profile: ClusterProfile,
    side: _RepoSide,
    got: Live | ClusterAccessError | ConfigError,
    parts: list[workers.Outcome],
    rbac: workers.Outcome | None,
) -> Outcome:
    """What auditing one cluster came to, from what was read and its comparison's parts."""
    result = ClusterResult(profile.name)
    outcome = Outcome(result)
    if not isinstance(got, Live):
        result.status, result.errors = "incomplete", [str(got)]
        outcome.plugin_failed = isinstance(got, PluginFailed)
        return outcome
    outcome.objects, outcome.applications = got.objects, got.applications
    if got.cluster is not None:
        result.throttled = got.cluster.throttled
    if CRD[1] in got.read:
        outcome.versions = fleet.versions(got.crds)
    if got.errors:
        result.status, result.errors = "incomplete", got.errors
    if got.argocd is not None and got.argocd.version is None:
        result.notes.append(argocd.release_unread(profile, got.argocd))
    outcome.findings.extend(side.refused)
    parts.insert(2, rbac or [])  # objects, RBAC, the rest: compare_cluster's order
    failed = [p for p in parts if isinstance(p, str)]
    if failed:  # one cluster's bug must not hide the others' drift
        result.status = "incomplete"
        result.errors.append(failed[0])
        return outcome
    try:
        found = _not_unmanaged([f for p in parts for f in t.cast(list[Finding], p)], side.refused)
        accepted = suppressions.of_cluster(profile, side.desired)
        suppressions.apply(found, accepted, datetime.date.today())
        outcome.findings.extend(found)
    except Exception as exc:
        log.debug("comparing cluster %s failed", profile.name, exc_info=True)
        result.status = "incomplete"
        result.errors.append(internal_error(exc))
    return outcome


def _group_job(
    repo: Repository,
    connect: Connector,
    schemas_root: Path | None,
    caches: t.Mapping[str, FileCache],
    names: list[str],
) -> dict[str, Outcome]:
    """In a worker: audit `names`, and keep of each cluster's live objects those its
    findings name (all the Argo CD naming reads)."""
    profiles = [repo.cluster(name) for name in names]

    def load() -> Loaded:
        return cached.load(repo, names, caches)

    _, outcomes = _here(repo, profiles, connect, schemas_root, load, jobs=1)
    for outcome in outcomes.values():
        if outcome.objects is not None:
            keys = {argocd.key_of_finding(f) for f in outcome.findings}
            outcome.objects = {k: v for k, v in outcome.objects.items() if k in keys}
    return outcomes


def _fleet(
    repo: Repository, profiles: list[ClusterProfile], outcomes: dict[str, Outcome], report: Report
) -> fleet.Fleet:
    """The fleet summary (auditor/drift/fleet.py), and a finding per cluster too far behind."""
    top = fleet.newest(repo.clusters.values())
    found = fleet.Fleet(top)
    for profile in profiles:
        member = fleet.member(profile, top, outcomes[profile.name].versions)
        found.members.append(member)
        if top is not None and member.behind:
            docs, _ = manifests.load_bytes(repo.tree.read(profile.file), profile.file)
            late = fleet.behind(profile, member, top, docs[0]) if docs else None
            if late is not None:
                report.findings.append(late)
    return found


def _first(profile: ClusterProfile) -> list[tuple[str, str]]:
    return [*watched_kinds(profile), CRD, NODES]


def _read_cluster(
    connect: Connector,
    profile: ClusterProfile,
    loaded: Future[Loaded],
    rbac: Future[list[Json] | None] | None = None,
) -> Live:
    """Everything drift reads of one cluster: the watched kinds, then the repo's others; `rbac`
    gets its RBAC objects as soon as they are all read (None when one of them was not)."""
    rbac = rbac or Future()
    try:
        cluster = connect(profile)
        kinds = _first(profile)
        cut = max(i for i, (_, kind) in enumerate(kinds) if kind in RBAC_KINDS) + 1
        live = read(cluster, kinds[:cut])
        rbac.set_result(_rbac_of(live))
        read(cluster, kinds[cut:], live)
    finally:
        if not rbac.done():
            rbac.set_result(None)
    live.cluster = cluster
    first = set(kinds)
    desired = loaded.result().for_cluster(profile.name)
    read(cluster, [k for k in kinds_to_read(profile, desired) if k not in first], live)
    # A watched kind the profile's version does not serve is read in the version the repository
    # writes it in (v0.9.1's Cohort: v1alpha1), then compared; served in neither, it is reported.
    written = {(r.api_version, r.kind) for r in desired if r.kind in live.not_served}
    read_instead(cluster, live, sorted(written))
    if not live.stopped:
        live.applications = argocd.read_applications(cluster)
        live.argocd = live_argocd.running(cluster)
    return live


def _read_outcome(job: Future[Live]) -> Live | ClusterAccessError | ConfigError:
    """What was read of a cluster, or why it could not be reached at all."""
    try:
        return job.result()
    except (ClusterAccessError, ContextMissing, PluginFailed) as exc:
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
    profile: ClusterProfile,
    desired: list[Resource],
    live: Live,
    schemas: LiveSchemas,
    share: tuple[int, int] = (0, 1),
) -> list[Finding]:
    """Each repository object against its live twin, then the live objects the repo lacks;
    `share` (i, n): the i-th of n slices of that work, in order (the last has the live ones)."""
    found: list[Finding] = []
    by_key = {r.key: r for r in desired}
    readers = metadata.readers(profile, desired, live.objects.values())
    owned = findings.kueue_owned(profile, desired)
    pairs = list(by_key.items())
    index, count = share
    for key, resource in pairs[len(pairs) * index // count : len(pairs) * (index + 1) // count]:
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
    for key, obj in sorted(live.objects.items()) if index == count - 1 else ():
        if key in by_key or not findings.unmanaged_matters(profile, obj):
            continue
        file = unread.source(live.unread, key)
        if file is None:
            found.append(findings.unmanaged(profile, obj))
        elif file:  # a file that did not load may define it ("": its refused object's finding)
            found.append(unread.not_compared(profile, obj, file))
    return found


def compare_aggregates(
    profile: ClusterProfile,
    desired: list[Resource],
    live: Live,
    schemas: LiveSchemas,
    tenant_profiles: t.Mapping[str, TenantProfile] | None = None,
) -> list[Finding]:
    """What is judged over many objects: RBAC powers, the tenants' powers, capacity, CRDs."""
    rbac_live = _rbac_of(live)
    return [
        *(
            compare_rbac(profile, desired, rbac_live, tenant_profiles)
            if rbac_live is not None
            else []
        ),
        *compare_rest(profile, desired, live, schemas),
    ]


def _rbac_of(live: Live) -> list[Json] | None:
    """The cluster's RBAC objects, when every RBAC kind was read."""
    if not all(kind in live.read for kind in RBAC_KINDS):
        return None
    return [o for k, o in live.objects.items() if k.kind in RBAC_KINDS]


def compare_rbac(
    profile: ClusterProfile,
    desired: list[Resource],
    rbac_live: list[Json],
    tenant_profiles: t.Mapping[str, TenantProfile] | None = None,
) -> list[Finding]:
    """The RBAC powers held live that the repo does not give, and the tenants' beyond theirs."""
    return [
        *powers.unexplained_powers(profile, desired, rbac_live),
        *tenants.granted(profile, desired, rbac_live, tenant_profiles or {}, key_of),
        *powers.platform_granted(profile, desired, rbac_live, tenant_profiles or {}),
    ]


def compare_rest(
    profile: ClusterProfile, desired: list[Resource], live: Live, schemas: LiveSchemas
) -> list[Finding]:
    """The flavors' capacity against the nodes, the CRDs against the committed schemas, the
    Argo CD release the profile names against the one running."""
    found: list[Finding] = argocd.release_drift(profile, live.argocd)
    if NODES[1] in live.read:
        found.extend(capacity.drift(profile, desired, live.nodes))
    # Against committed schemas only: the package's set says what a release serves, not what
    # this repository recorded of the cluster (whose other CRDs, like Prometheus's, may differ).
    committed = schemas.catalog is not None and schemas.catalog.source.folder is not None
    if committed and schemas.catalog and schemas.catalog.index and CRD[1] in live.read:
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
