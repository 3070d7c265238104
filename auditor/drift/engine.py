"""The drift audit: read each cluster once, compare it with the repository, report what differs.

Per cluster: one paginated LIST per kind (the kinds in the repo plus the ones whose unmanaged
objects matter), never a GET per object. Desired and live objects are normalized the same way
(auditor.drift.normalize), compared (auditor.drift.compare), classified (auditor.drift.classify),
and each modified field names who changed it (auditor.drift.managed). RBAC is also judged by
the powers it gives (auditor.k8s.rbac). Labels and annotations only the live object carries are
drift only when the repo sets that key elsewhere or something reads it (auditor.drift.metadata).
A finding on an object Argo CD tracks names its Application and whether Argo CD will heal it
(auditor.drift.argocd).

What counts as unmanaged (live, not in the repo), so a real cluster's own objects do not flood
the report:
- ClusterQueues, ResourceFlavors, Cohorts, LocalQueues, WorkloadPriorityClasses: all of them.
- PriorityClasses: all but the API server's reserved `system-*` ones.
- Namespaces: only those carrying the admission label (they can admit work nobody approved).
- RBAC objects: through the powers they give. A subject holding a watched power that neither
  the repo nor the API server's bootstrap policy (objects labelled
  kubernetes.io/bootstrapping=rbac-defaults, and RBAC in kube-* namespaces) gives it, unless
  the cluster profile trusts it (`drift.trustedSubjects`: Kueue's own controller, say).

A LIST that fails (forbidden, unreachable, timeout) makes the cluster `incomplete` with the
kind named, and nothing of that kind is compared: never reported as clean when not read. Once a
cluster stops answering or its deadline passes, its remaining kinds are named, not attempted.
Clusters are read in parallel, each against its own deadline, and one cluster that cannot be
reached, has no kubeconfig context, or trips a bug in the comparison leaves the others reported.
"""

from __future__ import annotations

import datetime
import logging
import typing as t
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from auditor import rules
from auditor.drift import argocd, capacity, classify, crds, managed, metadata, tenants
from auditor.drift.compare import DriftItem, Op, diff, reordered
from auditor.drift.normalize import Normalized, Schema, normalize
from auditor.errors import ClusterAccessError, internal_error, processing
from auditor.k8s import baseline
from auditor.k8s import rbac as powers
from auditor.k8s.objects import CRD_API, RBAC_KINDS, Json, ResourceKey, group_of
from auditor.live.kube import (
    ContextMissing,
    DeadlineExceeded,
    KindNotServed,
    KubeCluster,
    status_of,
)
from auditor.model import ClusterResult, Finding, Report, Resource, format_path
from auditor.repo import suppressions
from auditor.repo.layout import Loaded, Repository
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.schemas.catalog import SchemaCatalog

_RULES = rules.of(__name__)
DRIFT_ADMISSION_LABEL = _RULES["drift-admission-label"]
RBAC_POWER = _RULES["rbac-power"]

RBAC = "rbac.authorization.k8s.io/v1"
CRD = (CRD_API, "CustomResourceDefinition")
NODES = ("v1", "Node")  # compared with the flavors' quota (drift/capacity.py), never listed
KUEUE_KINDS = ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass")
log = logging.getLogger(__name__)


def watched_kinds(profile: ClusterProfile) -> list[tuple[str, str]]:
    """The kinds whose unmanaged objects matter, in the cluster's preferred Kueue version."""
    kueue = profile.kueue_api
    return [
        ("v1", "Namespace"),
        ("scheduling.k8s.io/v1", "PriorityClass"),
        *((RBAC, kind) for kind in RBAC_KINDS),
        *((kueue, kind) for kind in KUEUE_KINDS),
    ]


class Connector(t.Protocol):
    def __call__(self, profile: ClusterProfile) -> KubeCluster: ...


@dataclass
class Live:
    """What one cluster holds: objects by key, and the kinds that could not be read."""

    objects: dict[ResourceKey, Json] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)  # kinds read completely
    crds: list[Json] = field(default_factory=list)
    nodes: list[Json] = field(default_factory=list)
    not_served: dict[str, str] = field(default_factory=dict)  # kind -> why
    stopped: str | None = None  # why no further LIST is attempted (unreachable, deadline)
    cluster: KubeCluster | None = None
    errors: list[str] = field(default_factory=list)
    applications: list[Json] = field(default_factory=list)  # Argo CD's, when it runs here


def key_of(obj: Json) -> ResourceKey:
    meta = obj.get("metadata") or {}
    return ResourceKey(
        group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", "")),
        meta.get("namespace"), str(meta.get("name", "")),
    )  # fmt: skip


def read(cluster: KubeCluster, kinds: list[tuple[str, str]], into: Live | None = None) -> Live:
    """One paginated LIST per kind; a failed LIST is recorded and the kind left unread."""
    live = into or Live()
    for api_version, kind in kinds:
        if live.stopped:
            live.errors.append(f"LIST {kind} ({api_version}) not attempted: {live.stopped}")
            continue
        try:
            items = cluster.list(api_version, kind)
        except KindNotServed as exc:
            live.read.add(kind)  # known to hold none: the API is not there
            live.not_served[kind] = str(exc)
            continue
        except DeadlineExceeded as exc:
            live.errors.append(f"LIST {kind} ({api_version}) failed: {exc}")
            live.stopped = "the cluster's deadline passed"
            continue
        except ClusterAccessError as exc:
            live.errors.append(f"LIST {kind} ({api_version}) failed: {exc}")
            if status_of(exc) is None:  # no HTTP answer at all
                live.stopped = "cluster unreachable"
            continue
        live.read.add(kind)
        if (api_version, kind) == CRD:
            live.crds = items
            continue
        if (api_version, kind) == NODES:
            live.nodes = items
            continue
        for item in items:
            live.objects[key_of(item)] = item
    return live


class LiveSchemas:
    """Schemas from the committed catalog first, the live CRDs second (both hold `default:`)."""

    def __init__(self, catalog: SchemaCatalog | None, crds: list[Json]) -> None:
        self.catalog = catalog
        self.crds: dict[tuple[str, str, str], Schema] = {}
        for crd in crds:
            spec = crd.get("spec") or {}
            for version in spec.get("versions") or []:
                schema = (version.get("schema") or {}).get("openAPIV3Schema")
                if schema:
                    ident = (spec.get("group", ""), spec["names"]["kind"], version["name"])
                    self.crds[ident] = schema

    def schema(self, api_version: str, kind: str) -> Schema | None:
        """A CRD's schema; None for built-in kinds, whose OpenAPI `default: {}` marks Go zero
        values the server does not store (their real defaults are in normalize.CORE_DEFAULTS)."""
        group, _, version = api_version.rpartition("/")
        entry = self.catalog.kind(group, kind) if self.catalog else None
        if entry and entry.get("crd"):
            found = self.catalog.schema(api_version, kind) if self.catalog else None
            if found:
                return found
        return self.crds.get((group, kind, version))


def audit(
    repo: Repository,
    clusters: list[str],
    connect: Connector,
    *,
    schemas_root: Path | None = None,
    load: t.Callable[[], Loaded] | None = None,
) -> Report:
    """The drift report over `clusters` (each audited even when another fails).

    Each cluster is read in a thread of its own, the kinds it watches while the repository
    loads (they do not depend on it), then the repo's other kinds. `load`: the manifests of
    `clusters` from elsewhere (drift/preload.py) instead of `repo.load`.
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
        for profile, job in zip(profiles, jobs, strict=True):
            result = ClusterResult(profile.name)
            report.clusters.append(result)
            try:
                live = job.result()
            except (ClusterAccessError, ContextMissing) as exc:
                result.status, result.errors = "incomplete", [str(exc)]
                continue
            lives[profile.name] = live
            if live.errors:
                result.status, result.errors = "incomplete", live.errors
            schemas = LiveSchemas(catalogs[profile.name], live.crds)
            desired, refused = checked[profile.name]
            report.findings.extend(refused)
            try:
                with processing(f"comparing cluster {profile.name}"):
                    found = _not_unmanaged(
                        compare(profile, desired, live, schemas, repo.tenants), refused
                    )
                accepted = suppressions.of_cluster(profile, desired)
                suppressions.apply(found, accepted, datetime.date.today())
                report.findings.extend(found)
            except Exception as exc:  # one cluster's bug must not hide the others' drift
                log.debug("comparing cluster %s failed", profile.name, exc_info=True)
                result.status = "incomplete"
                result.errors.append(internal_error(exc))
    apps = argocd.Applications(a for live in lives.values() for a in live.applications)
    argocd.name_applications(report.findings, {n: v.objects for n, v in lives.items()}, apps)
    return report


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


def kinds_to_read(profile: ClusterProfile, desired: list[Resource]) -> list[tuple[str, str]]:
    """The watched kinds, the repo's other kinds, and CRDs (for defaults and schema drift)."""
    kinds = watched_kinds(profile)
    seen = {k for _, k in kinds}
    for resource in desired:
        if resource.kind not in seen:
            seen.add(resource.kind)
            kinds.append((resource.api_version, resource.kind))
    return [*kinds, CRD]


def compare(
    profile: ClusterProfile,
    desired: list[Resource],
    live: Live,
    schemas: LiveSchemas,
    tenant_profiles: t.Mapping[str, TenantProfile] | None = None,
) -> list[Finding]:
    """Every drift finding for one cluster, given what was read of it (and, with the tenants'
    profiles, the powers the repository grants them)."""
    findings: list[Finding] = []
    by_key = {r.key: r for r in desired}
    readers = metadata.readers(profile, desired, live.objects.values())
    for key, resource in by_key.items():
        if key.kind not in live.read:
            continue  # not read: say nothing rather than something false
        live_obj = live.objects.get(key)
        if resource.kind in live.not_served:
            findings.append(_not_served(profile, resource, live.not_served[resource.kind]))
        elif live_obj is None:
            findings.append(_missing(profile, resource))
        elif live_obj.get("apiVersion") != resource.api_version:
            findings.append(_version(profile, resource, str(live_obj.get("apiVersion"))))
        else:
            findings.extend(_modified(profile, resource, live_obj, schemas, readers))
    for key, obj in sorted(live.objects.items()):
        if key not in by_key and _unmanaged_matters(profile, obj):
            findings.append(_unmanaged(profile, obj))
    if all(kind in live.read for kind in RBAC_KINDS):
        findings.extend(_powers(profile, desired, live))
        live_rbac = [o for k, o in live.objects.items() if k.kind in RBAC_KINDS]
        findings.extend(tenants.granted(profile, desired, live_rbac, tenant_profiles or {}, key_of))
    if NODES[1] in live.read:
        findings.extend(capacity.drift(profile, desired, live.nodes))
    if schemas.catalog and schemas.catalog.index and CRD[1] in live.read:
        findings.extend(crds.drift(profile.name, schemas.catalog, live.crds))
    return findings


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


def _modified(
    profile: ClusterProfile,
    resource: Resource,
    live_obj: Json,
    schemas: LiveSchemas,
    readers: metadata.Readers,
) -> list[Finding]:
    schema = schemas.schema(resource.api_version, resource.kind)
    want, have = normalize(resource.body, schema), normalize(live_obj, schema)
    dropped = metadata.drop_unread(resource.kind, want.body, have.body, readers)
    if dropped:
        log.debug("%s: %s set live only, read by nothing: not drift", resource.key, dropped)
    # Equal as dicts may still differ in the order of a flavor list.
    items = reordered(want, have) if want.body == have.body else diff(want, have)
    return [_field(profile, resource, live_obj, item, want) for item in items]


def _field(
    profile: ClusterProfile, resource: Resource, live_obj: Json, item: DriftItem, want: Normalized
) -> Finding:
    who = managed.changed_by(live_obj, item.path)
    repo = f"{item.desired!r}" + ("" if _written(want, item.path) else " (the default)")
    what = {
        Op.CHANGE: f"is {item.live!r} live but {repo} in the repo"
        + ("; Kueue tries them in this order" if item.order else ""),
        Op.ADD: f"is set live ({item.live!r}) but not in the repo",
        Op.REMOVE: f"is {item.desired!r} in the repo but absent live",
    }[item.op]
    by = f"; changed by {who['manager']} at {who['time']}" if who else ""
    finding = Finding.about(
        resource,
        classify.rule(resource.kind, item.path),
        f"{format_path(item.path)} {what}{by}",
        path=item.path,
        cluster=profile.name,
        change="modified",
        desired=item.desired,
        live=item.live,
        extra={"changedBy": who} if who else {},
    )
    finding.line = resource.line_of(_file_path(resource.body, item.path))
    return finding


def _written(side: Normalized, path: t.Sequence[str | int]) -> bool:
    try:
        side.original(tuple(path))
    except KeyError:
        return False
    return True


def _file_path(body: t.Any, path: t.Sequence[str | int]) -> list[str | int]:
    """`path` with list-map keys (`[a100]`) turned back into the indexes the file has."""
    out: list[str | int] = []
    node = body
    for part in path:
        if isinstance(part, str) and part.startswith("[") and isinstance(node, list):
            wanted = part[1:-1]
            index = next(
                (i for i, v in enumerate(node) if isinstance(v, dict) and _entry(v) == wanted),
                None,
            )
            if index is None:
                break
            out.append(index)
            node = node[index]
            continue
        out.append(part)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return out


def _entry(item: Json) -> str:
    return str(item.get("name", item.get("type", "")))


def _missing(profile: ClusterProfile, resource: Resource) -> Finding:
    return Finding.about(
        resource,
        classify.of_object(resource.api_version, resource.kind, resource.namespace, resource.name),
        f"{resource.key} is in the repo but not on the cluster; Argo CD has not synced it, "
        "or someone deleted it",
        cluster=profile.name,
        change="missing",
    )


def _not_served(profile: ClusterProfile, resource: Resource, why: str) -> Finding:
    return Finding.about(
        resource,
        classify.VERSION,
        f"{why}, so {resource.key} cannot exist there: the CRD or API version is missing",
        cluster=profile.name,
        change="missing",
    )


def _version(profile: ClusterProfile, resource: Resource, live_version: str) -> Finding:
    return Finding.about(
        resource,
        classify.VERSION,
        f"written as {resource.api_version} but the cluster is read as {live_version}; "
        "fields were not compared",
        cluster=profile.name,
        change="modified",
        desired=resource.api_version,
        live=live_version,
    )


def _unmanaged_matters(profile: ClusterProfile, obj: Json) -> bool:
    kind, meta = obj.get("kind"), obj.get("metadata") or {}
    if kind in KUEUE_KINDS:
        return True
    if kind == "PriorityClass":
        return not str(meta.get("name", "")).startswith("system-")
    if kind == "Namespace":
        return profile.admits(meta.get("labels"))
    return False  # RBAC: judged by the powers it gives, below


def _unmanaged(profile: ClusterProfile, obj: Json) -> Finding:
    meta, kind = obj.get("metadata") or {}, str(obj.get("kind"))
    key = key_of(obj)
    if kind == "Namespace":
        label = "=".join(profile.admission_label)
        message = (
            f"namespace {key.name} carries the admission label {label} but is not in the repo: "
            "it can admit work nobody approved"
        )
        rule = DRIFT_ADMISSION_LABEL
    else:
        message = f"{key} exists on the cluster but not in the repo; nobody reviewed it"
        rule = classify.rule(kind)
    return Finding(
        rule,
        message,
        cluster=profile.name,
        api_version=obj.get("apiVersion"),
        kind=kind,
        namespace=meta.get("namespace"),
        name=meta.get("name"),
        change="unmanaged",
    )


def _powers(profile: ClusterProfile, desired: list[Resource], live: Live) -> list[Finding]:
    """Subjects holding a watched power live that the repo (and bootstrap policy) does not give."""
    rbac_live = [o for k, o in live.objects.items() if k.kind in RBAC_KINDS]
    repo_rbac = {r.key: r.body for r in desired if r.kind in RBAC_KINDS}
    # Roles the repo's bindings use but the repo does not define are taken as they are live.
    wanted = [*repo_rbac.values()]
    wanted += [o for o in rbac_live if key_of(o) not in repo_rbac and _role_or_baseline(o)]
    allowed = {(g.subject, g.power) for g in powers.grants(wanted)}
    extra: dict[tuple[ResourceKey, powers.Subject], list[powers.Grant]] = {}
    trusted = set(profile.trusted_subjects)
    for grant in powers.grants(rbac_live):
        if (
            not powers.within(allowed, grant.subject, grant.power)
            and str(grant.subject) not in trusted
        ):
            extra.setdefault((key_of(grant.binding.body), grant.subject), []).append(grant)
    findings = []
    for (key, subject), found in sorted(extra.items()):
        held = sorted({str(g.power) for g in found})
        listed = ", ".join(held)
        binding = found[0].binding.body
        written = ", ".join(dict.fromkeys(g.written for g in found))
        findings.append(
            Finding(
                RBAC_POWER,
                f"{subject} can {listed} through {key} -> {found[0].role} -> {written}; "
                "the repo grants it no such power",
                cluster=profile.name,
                api_version=binding.get("apiVersion"),
                kind=key.kind,
                namespace=key.namespace,
                name=key.name,
                change="unmanaged" if key not in repo_rbac else "modified",
                desired=None,
                live=listed,
                extra={"subject": str(subject), "powers": held},
            )
        )
    return findings


def _role_or_baseline(obj: Json) -> bool:
    return obj.get("kind") in ("Role", "ClusterRole") or baseline.bootstrap(obj)
