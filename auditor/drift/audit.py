"""The drift audit: read each cluster once, compare it with the repository, report what differs.

Each cluster is read in a thread of its own (auditor/speed/threads.py), kind by kind in the
order its comparison's plan says (auditor/drift/reading.py), and each kind is put, as its LIST
ends, to the repository side (auditor/drift/comparer.py), which compares it there
(auditor/drift/engine.py) in a child process while this one goes on reading. What the
comparison is, is the engine's alone: the child, this process, and `engine.compare_cluster`
over a whole read run the same fold (tests/unit/drift/test_equivalence.py). A finding on an
object Argo CD tracks names its Application and whether Argo CD will heal it
(auditor/drift/argocd.py).

A kind that could not be read makes the cluster `incomplete` and nothing of it is compared:
never reported as clean when not read. One cluster that cannot be reached, has no kubeconfig
context, whose credential plugin fails or hangs, or that trips a bug in the comparison leaves
the others reported (a failed plugin is exit 2 only when its cluster is the run's one).
"""

from __future__ import annotations

import functools
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from auditor.drift import argocd, comparer, fleet
from auditor.drift.reading import CRD, Live, read_cluster
from auditor.errors import ClusterAccessError
from auditor.k8s.objects import Json, ResourceKey
from auditor.live import argocd as live_argocd
from auditor.live.credentials import ContextMissing, PluginFailed
from auditor.live.kube import KubeCluster
from auditor.model import ClusterResult, Finding, Report
from auditor.repo import manifests
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from auditor.speed import collector, threads

UNREACHED = (ClusterAccessError, ContextMissing, PluginFailed)


class Connector(t.Protocol):
    def __call__(self, profile: ClusterProfile) -> KubeCluster: ...


def audit(
    repo: Repository,
    clusters: list[str],
    connect: Connector,
    *,
    schemas_root: Path | None = None,
    comparing: comparer.Comparer | None = None,
    with_fleet: bool = False,
) -> Report:
    """The drift report over `clusters` (each audited even when another fails).

    `comparing`: their repository side already under way (comparer.start; else prepared here,
    in this process). `with_fleet`: add the fleet summary as the report's section
    (auditor/drift/fleet.py) and judge version skew."""
    collector.spare_at_exit()  # what was read stays alive to the end: no last collection
    profiles = [repo.cluster(name) for name in clusters]
    comparing = comparing or comparer.start(repo, clusters, schemas_root, fork=False)
    try:
        read = functools.partial(_read, connect, comparing)
        reads = threads.each(read, profiles, UNREACHED)
        loaded, compared = comparing.result()
    finally:
        comparing.close()
    outcomes = {
        p.name: _outcome(p, got, compared[p.name]) for p, got in zip(profiles, reads, strict=True)
    }
    if len(profiles) == 1 and outcomes[profiles[0].name].plugin_failed:
        # the run's one cluster: its kubeconfig cannot be used at all (docs/usage.md)
        raise PluginFailed(outcomes[profiles[0].name].result.errors[0])
    return _report(repo, profiles, loaded, outcomes, with_fleet)


def _read(connect: Connector, comparing: comparer.Comparer, profile: ClusterProfile) -> Live:
    """Everything drift reads of one cluster, each kind put to the comparison as it ends."""
    name = profile.name
    plan, send = lambda: comparing.early()[name], lambda k: comparing.put((name, k))
    live = read_cluster(connect(profile), profile, plan, send)
    if not live.stopped and live.cluster is not None:
        live.applications = argocd.read_applications(live.cluster)
        live.argocd = live_argocd.running(live.cluster)
        comparing.put((name, live.argocd))
    return live


@dataclass
class Outcome:
    """What auditing one cluster came to, all the report needs of it."""

    result: ClusterResult
    findings: list[Finding] = field(default_factory=list)
    objects: dict[ResourceKey, Json] | None = None  # None: not reached
    applications: list[Json] = field(default_factory=list)  # Argo CD's, when it runs there
    versions: fleet.Versions | None = None  # what its Kueue CRDs serve and store, when read
    plugin_failed: bool = False  # not reached: its exec credential plugin failed


def _outcome(
    profile: ClusterProfile, got: Live | BaseException, compared: comparer.Compared
) -> Outcome:
    """What auditing one cluster came to, from what was read and what the comparison found."""
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
    outcome.findings, error = compared
    if error is not None:  # one cluster's bug must not hide the others' drift
        result.status = "incomplete"
        result.errors.append(error)
    return outcome


def _report(
    repo: Repository,
    profiles: list[ClusterProfile],
    loaded: list[Finding],
    outcomes: dict[str, Outcome],
    with_fleet: bool,
) -> Report:
    report = Report("drift")
    report.findings.extend(loaded)  # a broken manifest: its objects are unknown
    for profile in profiles:
        report.clusters.append(outcomes[profile.name].result)
        report.findings.extend(outcomes[profile.name].findings)
    reached = [o for o in outcomes.values() if o.objects is not None]
    apps = argocd.Applications(a for o in reached for a in o.applications)
    objects = {o.result.name: o.objects or {} for o in reached}
    argocd.name_applications(report.findings, objects, apps)
    if with_fleet:
        report.section = _fleet(repo, profiles, outcomes, report)
    return report


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
