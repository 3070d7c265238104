"""`upgrade-check`: may a cluster's Kueue be moved to a release, given that release's CRDs?

Three questions, each answered with findings (their rules: rules.yaml beside this module):
- now: the controller has reconciled every ClusterQueue (and its Deployment, where there is one,
  is available); each Kueue kind a webhook covers passes a dry-run create; every kind converted
  by webhook reads back in every served version;
- compatibility: every version in each Kueue CRD's status.storedVersions is served by the
  target (else the target cannot read what etcd holds: a rollback is refused); objects stored
  in a version the target does not store in are listed to migrate; every manifest of the
  cluster in the repository is served by the target and validates against its schemas;
- running work: the Workloads admitted now, and on a rollback those whose Job names no
  checkpoint (annotation kueue-gitops.io/checkpoint) and whose tenant records no checkpointing
  evidence.
"""

from __future__ import annotations

import tempfile
import typing as t
from dataclasses import dataclass, replace
from pathlib import Path

from auditor import kueue, rules
from auditor.errors import ClusterAccessError
from auditor.k8s import conditions
from auditor.k8s.objects import KUEUE_GROUP, Json, group_of
from auditor.kueue import workloads as kueue_workloads
from auditor.kueue.ledger import CHECKPOINT
from auditor.model import ClusterResult, Finding, Report, Resource
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.schemas import fetch, versions
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator
from auditor.upgrade import probes
from auditor.upgrade.bundle import Bundle, direction

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

_RULES = rules.of(__name__)
UPGRADE_CONTROLLER_NOT_READY = _RULES["upgrade-controller-not-ready"]
UPGRADE_WEBHOOK_DOWN = _RULES["upgrade-webhook-down"]
UPGRADE_CONVERSION_FAILING = _RULES["upgrade-conversion-failing"]
UPGRADE_STORED_VERSION_UNSERVED = _RULES["upgrade-stored-version-unserved"]
UPGRADE_STORED_OBJECTS_TO_MIGRATE = _RULES["upgrade-stored-objects-to-migrate"]
UPGRADE_RUNNING_WITHOUT_RECOVERY = _RULES["upgrade-running-without-recovery"]
UPGRADE_REPO_VERSION_DEPRECATED = _RULES["upgrade-repo-version-deprecated"]
UPGRADE_REPO_VERSION_UNSERVED = _RULES["upgrade-repo-version-unserved"]
UPGRADE_REPO_INVALID = _RULES["upgrade-repo-invalid"]


@dataclass
class Checked:
    report: Report
    summary: Json

    def __post_init__(self) -> None:
        self.report.section = self

    def to_json(self) -> Json:
        """upgrade-check's key of the JSON report."""
        return {"upgrade": self.summary}


def _at_cluster(profile: ClusterProfile, rule: rules.Rule, message: str, **kw: t.Any) -> Finding:
    return Finding(rule, message, cluster=profile.name, **kw)


def check(
    cluster: KubeCluster,
    profile: ClusterProfile,
    resources: list[Resource],
    tenants: t.Sequence[TenantProfile],
    target: Bundle,
) -> Checked:
    """Judge moving `cluster` (read live) and its manifests (`resources`) to `target`."""
    report = Report("upgrade-check", clusters=[ClusterResult(profile.name)])
    summary: Json = {
        "from": profile.kueue_version,
        "to": target.version or target.source,
        "direction": "same",
        "storedVersions": {},
        "targetServes": {},
        "admitted": [],
    }
    try:
        crds = probes.kueue_crds(cluster)
        live_storage = next(
            (probes.storage(c) for c in crds if probes.kind_of(c) == "ClusterQueue"), None
        )
        summary["direction"] = direction(live_storage, target, profile.kueue_version)
        summary["storedVersions"] = {c["metadata"]["name"]: _stored(c) for c in crds}
        summary["targetServes"] = {name: target.served(name) for name in sorted(target.crds)}
        report.findings += _now(cluster, profile, crds)
        report.findings += _stored_findings(cluster, profile, crds, target)
        admitted = _admitted(cluster, profile, tenants)
        summary["admitted"] = admitted
        if summary["direction"] == "rollback":
            report.findings += _unrecoverable(profile, admitted)
    except ClusterAccessError as exc:
        report.clusters[0].status = "incomplete"
        report.clusters[0].errors.append(str(exc))
    report.findings += _repo(profile, resources, target)
    return Checked(report, summary)


def _stored(crd: Json) -> list[str]:
    return list((crd.get("status") or {}).get("storedVersions") or [])


def _now(cluster: KubeCluster, profile: ClusterProfile, crds: list[Json]) -> list[Finding]:
    findings = []
    down = probes.deployment_unavailable(cluster, kueue.CONTROLLER, kueue.NAMESPACE)
    stale = probes.stale_queues(cluster, profile.kueue_api)
    if down or stale:
        why = down or f"ClusterQueue(s) {', '.join(stale)} not reconciled for their current spec"
        findings.append(
            _at_cluster(
                profile, UPGRADE_CONTROLLER_NOT_READY, f"Kueue's controller is not ready: {why}"
            )
        )
    by_kind = {probes.kind_of(c): c for c in crds}
    for kind in probes.webhook_kinds(cluster, crds):
        failed = probes.dry_run_create(cluster, by_kind[kind])
        if failed:
            findings.append(
                _at_cluster(
                    profile,
                    UPGRADE_WEBHOOK_DOWN,
                    f"a dry-run create of a {kind} did not get through Kueue's webhooks: {failed}",
                    kind=kind,
                    name=probes.PROBE,
                )
            )
    for crd in crds:
        for version, why in sorted(probes.unreadable_versions(cluster, crd).items()):
            findings.append(
                _at_cluster(
                    profile,
                    UPGRADE_CONVERSION_FAILING,
                    f"the {probes.kind_of(crd)} objects cannot be read as {version}: {why}",
                    api_version=f"{KUEUE_GROUP}/{version}",
                    kind=probes.kind_of(crd),
                    name=crd["metadata"]["name"],
                )
            )
    return findings


def _stored_findings(
    cluster: KubeCluster, profile: ClusterProfile, crds: list[Json], target: Bundle
) -> list[Finding]:
    findings = []
    for crd in crds:
        name, kind = crd["metadata"]["name"], probes.kind_of(crd)
        serves, stores = target.served(name), target.storage(name)
        objects = probes.count(cluster, crd)
        held = f"{objects} {kind} object(s) exist"
        for version in _stored(crd):
            if version not in serves:
                fix = (
                    f"none to migrate: remove {version} from the CRD's status.storedVersions"
                    if objects == 0
                    else f"migrate them to {' or '.join(serves) or 'a served version'} and "
                    f"remove {version} from status.storedVersions"
                )
                findings.append(
                    _at_cluster(
                        profile,
                        UPGRADE_STORED_VERSION_UNSERVED,
                        f"{name} stores {version}, which Kueue {target.version or target.source} "
                        f"does not serve (it serves {', '.join(serves) or 'no such CRD'}); {held}: "
                        f"{fix} before the change",
                        api_version=f"{KUEUE_GROUP}/{version}",
                        kind=kind,
                        name=name,
                        desired=serves,
                        live=_stored(crd),
                        change="modified",
                    )
                )
            elif objects and stores and version != stores:
                findings.append(
                    _at_cluster(
                        profile,
                        UPGRADE_STORED_OBJECTS_TO_MIGRATE,
                        f"{held} and may be stored as {version}; Kueue "
                        f"{target.version or target.source} stores {stores}: rewrite them "
                        f"(a storage migration) before {version} can be dropped",
                        api_version=f"{KUEUE_GROUP}/{version}",
                        kind=kind,
                        name=name,
                    )
                )
    return findings


def _repo(profile: ClusterProfile, resources: list[Resource], target: Bundle) -> list[Finding]:
    """The cluster's Kueue manifests against the target's CRDs (served versions, schemas)."""
    mine = [r for r in resources if group_of(r.api_version) == KUEUE_GROUP]
    if not mine:
        return []
    fetched = fetch.Fetched("target")
    for crd in target.crds.values():
        fetch._add_crd(fetched, crd, None)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fetch.write(fetched, root)
        validator = ClusterValidator(SchemaCatalog(root, "target"))
        found = [f for r in mine for f in validator.check(r)[0]]
    release = target.version or target.source
    out = []
    for f in found:
        rule = (
            UPGRADE_REPO_VERSION_DEPRECATED
            if f.rule is versions.VERSION_DEPRECATED
            else UPGRADE_REPO_VERSION_UNSERVED
            if f.rule in (versions.UNKNOWN_KIND, versions.VERSION_NOT_SERVED)
            else UPGRADE_REPO_INVALID
        )
        message = f.message.replace("cluster target", f"Kueue {release}").replace(
            "is deprecated on", "is deprecated by"
        )
        out.append(replace(f, rule=rule, message=message, cluster=profile.name))
    return out


def _admitted(
    cluster: KubeCluster, profile: ClusterProfile, tenants: t.Sequence[TenantProfile]
) -> list[Json]:
    jobs = {j["metadata"].get("uid"): j for j in cluster.list("batch/v1", "Job")}
    out = []
    for w in cluster.list(profile.kueue_api, "Workload"):
        if not conditions.is_true(w, kueue_workloads.ADMITTED) or kueue_workloads.finished(w):
            continue
        meta = w["metadata"]
        job = jobs.get(kueue_workloads.owner_uid(w)) or {}
        tenant = _tenant_of(str(meta.get("namespace")), tenants, profile.name)
        out.append(
            {
                "workload": f"{meta.get('namespace')}/{meta['name']}",
                "clusterQueue": kueue_workloads.cluster_queue(w),
                "job": kueue_workloads.owner_job(w),
                "checkpoint": ((job.get("metadata") or {}).get("annotations") or {}).get(
                    CHECKPOINT
                ),
                "tenant": tenant.name if tenant else None,
                "evidence": bool(tenant and "checkpointing" in tenant.evidence),
            }
        )
    return sorted(out, key=lambda a: str(a["workload"]))


def _tenant_of(
    namespace: str, tenants: t.Sequence[TenantProfile], cluster: str
) -> TenantProfile | None:
    for tp in tenants:
        placement = tp.clusters.get(cluster)
        if placement and namespace in placement.namespaces:
            return tp
    return None


def _unrecoverable(profile: ClusterProfile, admitted: list[Json]) -> list[Finding]:
    return [
        _at_cluster(
            profile,
            UPGRADE_RUNNING_WITHOUT_RECOVERY,
            f"Workload {a['workload']} (Job {a['job']}) is admitted in {a['clusterQueue']} and "
            "has no recovery evidence: its Job names no checkpoint "
            f"(annotation {CHECKPOINT}) and "
            + (f"tenant {a['tenant']}" if a["tenant"] else "no tenant")
            + " records no checkpointing evidence; let it finish or hold its queue first",
            kind="Workload",
            namespace=a["workload"].split("/")[0],
            name=a["workload"].split("/")[1],
        )
        for a in admitted
        if not a["checkpoint"] and not a["evidence"]
    ]
