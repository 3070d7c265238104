"""MultiKueue as the repository declares it, and the manager quota Kueue writes itself.

A manager ClusterQueue is one whose `admissionChecksStrategy` names an AdmissionCheck of the
MultiKueue controller; that check's parameters name a MultiKueueConfig, whose `clusters` are the
MultiKueueClusters it dispatches to. This repository reads a MultiKueueCluster's name as the
folder of the worker cluster it stands for (clusters/<name>/): that is how its consistency is
checked (auditor/validate/checks/multikueue.py).

Manager quota automation (KEP-9988, alpha from v0.18 behind the MultiKueueManagerQuotaAutomation
gate, off by default): with `quotaManagement: Automated` on the MultiKueueConfig, Kueue's
MultiKueue ClusterQueue reconciler rewrites the manager ClusterQueue's single flavor's
`resources` as the sum of its related worker ClusterQueues' nominal quota (those that the
workers' LocalQueues of the same namespace and name point at), one entry per covered resource
with a nominalQuota and nothing else; it requires exactly one resource group with one flavor,
and leaves the quota alone otherwise (condition MultiKueueManagerQuotaAutomation, reason
UnsupportedConfiguration). It writes with an Update under its user agent's product name, so
managedFields name the manager `kueue`.

Plain functions over object bodies: no I/O.
"""

from __future__ import annotations

import enum
import typing as t
from dataclasses import dataclass

from auditor.k8s.objects import Json
from auditor.k8s.quantity import ZERO, Quantity, QuantityError, parse
from auditor.kueue import KUEUE_GROUP, quota, release
from auditor.kueue import config as kueue_config

CONTROLLER = "kueue.x-k8s.io/multikueue"  # an AdmissionCheck's controllerName
GATE = "MultiKueueManagerQuotaAutomation"
AUTOMATED = "Automated"
# The field manager of Kueue's own writes: its client's user agent is kueue/<version>.
FIELD_MANAGER = "kueue"
# What the reconciler writes on an automated manager ClusterQueue (its one group, one flavor).
OWNED: tuple[str | int, ...] = ("spec", "resourceGroups", 0, "flavors", 0, "resources")
# The same field as Argo CD's ignoreDifferences names it (a jq path).
OWNED_JQ = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in OWNED)
DROPPED = quota.LIMITS  # not in what it writes: gone at every sum


class Quota(enum.StrEnum):
    """Who writes a manager ClusterQueue's quota."""

    MANUAL = "manual"  # the repository (quotaManagement Manual or left out)
    GATE_OFF = "gate-off"  # Automated asked for, the release's gate off: still the repository
    AUTOMATED = "automated"  # Kueue: the workers' sum


@dataclass(frozen=True)
class Manager:
    """A ClusterQueue that dispatches through MultiKueue, and how."""

    queue: str
    check: str  # its MultiKueue AdmissionCheck
    config: str  # the MultiKueueConfig that check's parameters name
    workers: tuple[str, ...]  # the config's MultiKueueClusters
    quota_management: str  # as the config writes it ("Manual" when left out)


def _dict(value: t.Any) -> Json:
    return value if isinstance(value, dict) else {}


def _list(value: t.Any) -> list[t.Any]:
    return value if isinstance(value, list) else []


def _of(objects: t.Iterable[Json], kind: str) -> dict[str, Json]:
    return {
        str(_dict(o.get("metadata")).get("name")): o
        for o in objects
        if o.get("kind") == kind and str(o.get("apiVersion", "")).startswith(f"{KUEUE_GROUP}/")
    }


def checks_of(queue: Json) -> list[str]:
    """The AdmissionChecks a ClusterQueue names (its strategy's, or v1beta1's plain list)."""
    spec = _dict(queue.get("spec"))
    strategy = _list(_dict(spec.get("admissionChecksStrategy")).get("admissionChecks"))
    names = [str(_dict(r).get("name")) for r in strategy if _dict(r).get("name")]
    return names + [str(n) for n in _list(spec.get("admissionChecks")) if isinstance(n, str)]


# The kinds `managers` reads of a cluster's objects (the others it passes over).
KINDS = ("MultiKueueConfig", "AdmissionCheck", "ClusterQueue")


def managers(objects: t.Iterable[Json]) -> dict[str, Manager]:
    """The manager ClusterQueues among one cluster's objects (of `KINDS`; others are passed
    over), by name."""
    objects = list(objects)
    configs = _of(objects, "MultiKueueConfig")
    checks: dict[str, str] = {}
    for name, admission_check in _of(objects, "AdmissionCheck").items():
        spec = _dict(admission_check.get("spec"))
        params = _dict(spec.get("parameters"))
        if spec.get("controllerName") == CONTROLLER and params.get("kind") == "MultiKueueConfig":
            checks[name] = str(params.get("name"))
    found: dict[str, Manager] = {}
    for name, queue in _of(objects, "ClusterQueue").items():
        check = next((c for c in checks_of(queue) if c in checks), None)
        if check is None:
            continue
        config = _dict(configs.get(checks[check], {}).get("spec"))
        workers = tuple(str(w) for w in _list(config.get("clusters")))
        mode = str(config.get("quotaManagement") or "Manual")
        found[name] = Manager(name, check, checks[check], workers, mode)
    return found


def quota_writer(manager: Manager, config: Json | None, known: release.Release) -> Quota:
    """Who writes `manager`'s quota on Kueue `known` started from `config`."""
    if manager.quota_management != AUTOMATED:
        return Quota.MANUAL
    if not kueue_config.gate(config, known, GATE):  # off, or a release without it
        return Quota.GATE_OFF
    return Quota.AUTOMATED


def automated(objects: t.Iterable[Json], config: Json | None, known: release.Release) -> set[str]:
    """The ClusterQueues whose quota Kueue writes on this cluster."""
    return {
        name
        for name, manager in managers(objects).items()
        if quota_writer(manager, config, known) is Quota.AUTOMATED
    }


def owns(path: t.Sequence[str | int]) -> bool:
    """Whether Kueue's automation writes the field at `path` of an automated manager
    ClusterQueue (as written or normalized: its flavor by index or by `[name]`)."""
    return (
        len(path) >= 6
        and tuple(path[:2]) == OWNED[:2]
        and path[3] == OWNED[3]
        and path[5] == OWNED[5]
    )


def supported(queue: Json) -> bool:
    """Whether Kueue automates this ClusterQueue's quota: one resource group with one flavor."""
    groups = list(quota.resource_groups(queue))
    return len(groups) == 1 and len(groups[0].flavors) == 1


def nominal_by_resource(queue: Json) -> dict[str, Quantity]:
    """A ClusterQueue's nominal quota per resource, summed over its flavors (how automation
    sums a worker's queue: flavors do not matter across clusters)."""
    total: dict[str, Quantity] = {}
    for cell in quota.cells(queue):
        try:
            value = parse(cell.fields.get(quota.NOMINAL))
        except QuantityError:
            continue
        total[cell.resource] = total.get(cell.resource, ZERO) + value
    return total


def local_queues(objects: t.Iterable[Json]) -> dict[tuple[str, str], str]:
    """(namespace, name) -> the ClusterQueue it points at, of one cluster's LocalQueues."""
    out: dict[tuple[str, str], str] = {}
    for o in objects:
        if o.get("kind") != "LocalQueue":
            continue
        meta = _dict(o.get("metadata"))
        out[(str(meta.get("namespace")), str(meta.get("name")))] = str(
            _dict(o.get("spec")).get("clusterQueue")
        )
    return out


def related(
    manager_queue: str,
    manager_locals: t.Mapping[tuple[str, str], str],
    worker_locals: t.Mapping[tuple[str, str], str],
) -> set[str]:
    """The worker's ClusterQueues a manager ClusterQueue's work lands in: those the worker's
    LocalQueues of the same namespace and name as the manager's point at (KEP-9988)."""
    mine = {key for key, cq in manager_locals.items() if cq == manager_queue}
    return {cq for key, cq in worker_locals.items() if key in mine}
