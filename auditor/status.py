"""What a cluster holds right now: queues and their quotas, the Workloads in them, the recent
events that mention Kueue, and which namespaces may submit.

A Workload's state is the one a person is shown (auditor.kueue.workloads.state); it counts in the
ClusterQueue that reserved quota for it, else in the one its LocalQueue points at.
"""

from __future__ import annotations

import itertools
import typing as t
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from auditor.k8s import conditions
from auditor.k8s.objects import KUEUE_GROUP, Json
from auditor.kueue import capacity, quota, stop_policy
from auditor.kueue import workloads as kueue_workloads
from auditor.repo.profiles import ClusterProfile

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

EVENTS = 5  # the last events shown per namespace, by default
# Counted in the order a Workload goes through them; the text always shows the first three.
ORDER: tuple[kueue_workloads.State, ...] = (
    "pending",
    "admitted",
    "evicted",
    "reserved",
    "inactive",
    "finished",
)
SHOWN = ORDER[:3]


@dataclass
class LiveStatus:
    cluster_queues: list[Json]
    local_queues: list[Json]
    namespaces: list[Json]
    workloads: list[Json] = field(default_factory=list)
    events: list[Json] = field(default_factory=list)
    flavors: list[Json] = field(default_factory=list)
    nodes: list[Json] = field(default_factory=list)


@dataclass
class Snapshot:
    """What `status` reports: the section of its report (no findings)."""

    live: LiveStatus
    profile: ClusterProfile
    events: int = EVENTS

    def to_json(self) -> Json:
        return to_json(self.live, self.profile, self.events)

    def text(self) -> str:
        return render_text(self.live, self.profile, self.events)


def read(cluster: KubeCluster, profile: ClusterProfile) -> LiveStatus:
    """One LIST of each kind; of the events, those that mention Kueue."""
    return LiveStatus(
        cluster.list(profile.kueue_api, "ClusterQueue"),
        cluster.list(profile.kueue_api, "LocalQueue"),
        cluster.list("v1", "Namespace"),
        cluster.list(profile.kueue_api, "Workload"),
        [e for e in cluster.list("v1", "Event") if mentions_kueue(e)],
        cluster.list(profile.kueue_api, "ResourceFlavor"),
        cluster.list("v1", "Node"),
    )


def pools(status: LiveStatus) -> list[Json]:
    """Per flavor: its Ready nodes, what they hold, and what the queues promise on it."""
    out = []
    for flavor in status.flavors:
        name = _name(flavor)
        found = capacity.pool(flavor, status.nodes)
        promised = capacity.promised(name, status.cluster_queues)
        out.append(
            {
                "flavor": name,
                "readyNodes": sorted(_name(n) for n in found),
                "resources": {
                    r: {"allocatable": str(capacity.allocatable(found, r)), "promised": str(q)}
                    for r, q in sorted(promised.items())
                },
            }
        )
    return out


def mentions_kueue(event: Json) -> bool:
    """About a Kueue object, or reported by one of Kueue's controllers (kueue-admission, and
    e.g. batch/job-kueue-controller on the Jobs it suspends and starts)."""
    about = str((event.get("involvedObject") or {}).get("apiVersion", ""))
    reporters = (event.get("reportingComponent"), (event.get("source") or {}).get("component"))
    return about.startswith(f"{KUEUE_GROUP}/") or any("kueue" in str(r or "") for r in reporters)


# -- what the Workloads add up to -----------------------------------------------------------


def _name(obj: Json) -> str:
    return str(obj["metadata"]["name"])


def _targets(status: LiveStatus) -> dict[tuple[str, str], str]:
    return {
        (lq["metadata"].get("namespace", ""), _name(lq)): str(
            (lq.get("spec") or {}).get("clusterQueue", "")
        )
        for lq in status.local_queues
    }


def workload_rows(status: LiveStatus) -> list[Json]:
    """Each Workload as the JSON lists it: where it is queued, its state and why."""
    targets = _targets(status)
    return [
        {
            "namespace": w["metadata"].get("namespace"),
            "name": _name(w),
            "localQueue": kueue_workloads.local_queue(w),
            "clusterQueue": kueue_workloads.cluster_queue_of(w, targets),
            "state": kueue_workloads.state(w),
            "priority": kueue_workloads.priority(w),
            "reason": _why(w),
        }
        for w in status.workloads
    ]


def _why(w: Json) -> str | None:
    """What Kueue last said about a Workload that is not running: eviction or the wait."""
    state = kueue_workloads.state(w)
    if state == "evicted":
        said = conditions.condition(w, kueue_workloads.EVICTED)
    elif state in ("pending", "reserved"):
        said = conditions.condition(
            w, kueue_workloads.QUOTA_RESERVED if state == "pending" else kueue_workloads.ADMITTED
        )
    else:
        return None
    text = ": ".join(str(p) for p in (said.get("reason"), said.get("message")) if p)
    return text or None


def _counts(rows: t.Iterable[Json]) -> dict[str, int]:
    found = Counter(str(r["state"]) for r in rows)
    return {state: found[state] for state in ORDER}


def _by(rows: list[Json], *keys: str) -> dict[tuple[t.Any, ...], list[Json]]:
    grouped: dict[tuple[t.Any, ...], list[Json]] = defaultdict(list)
    for row in rows:
        grouped[tuple(row[k] for k in keys)].append(row)
    return grouped


def recent_events(status: LiveStatus, limit: int = EVENTS) -> dict[str, list[Json]]:
    """The last `limit` Kueue events of each namespace, oldest first."""
    out: dict[str, list[Json]] = defaultdict(list)
    for event in sorted(status.events, key=_when):
        about = event.get("involvedObject") or {}
        out[str(event["metadata"].get("namespace") or "")].append(
            {
                "time": _when(event),
                "type": event.get("type"),
                "reason": event.get("reason"),
                "object": f"{about.get('kind')}/{about.get('name')}",
                "message": event.get("message"),
                "count": event.get("count") or 1,
            }
        )
    return {ns: found[max(0, len(found) - limit) :] for ns, found in sorted(out.items()) if limit}


def _when(event: Json) -> str:
    """When it last happened, to the second (the two event APIs write it differently)."""
    series = (event.get("series") or {}).get("lastObservedTime")
    found = (
        event.get("lastTimestamp")
        or series
        or event.get("eventTime")
        or event["metadata"].get("creationTimestamp")
    )
    return str(found or "")[:19] + "Z" if found else ""


# -- JSON and text --------------------------------------------------------------------------


def to_json(status: LiveStatus, profile: ClusterProfile, events: int = EVENTS) -> Json:
    """The snapshot's keys of `status -o json` (its shape is in the command's help)."""
    rows = workload_rows(status)
    by_cq, by_lq = _by(rows, "clusterQueue"), _by(rows, "namespace", "localQueue")
    key = profile.admission_label[0]
    return {
        "cluster": profile.name,
        "clusterQueues": [
            {
                "name": _name(cq),
                "cohort": (cq.get("spec") or {}).get("cohortName"),
                "stopPolicy": stop_policy.policy_of(cq) or stop_policy.NONE,
                "quota": [
                    {"flavor": c.flavor, "resource": c.resource, **c.fields}
                    # what Kueue reserves in the cell now, and how much of it is borrowed
                    | {
                        "used": str(quota.used(cq, c.cell)),
                        "borrowed": str(quota.used(cq, c.cell, key="borrowed")),
                    }
                    for c in quota.cells(cq)
                ],
                "workloads": _counts(by_cq.get((_name(cq),), [])),
            }
            for cq in status.cluster_queues
        ],
        "localQueues": [
            {
                "namespace": lq["metadata"].get("namespace"),
                "name": _name(lq),
                "clusterQueue": (lq.get("spec") or {}).get("clusterQueue"),
                "workloads": _counts(by_lq.get((lq["metadata"].get("namespace"), _name(lq)), [])),
            }
            for lq in status.local_queues
        ],
        "workloads": rows,
        "pools": pools(status),
        "events": recent_events(status, events),
        "namespaces": [
            {
                "name": _name(ns),
                "admissionLabel": (ns["metadata"].get("labels") or {}).get(key),
                "admits": profile.admits(ns["metadata"].get("labels")),
            }
            for ns in status.namespaces
        ],
    }


def _cell_text(cell: quota.QuotaCell) -> str:
    fields = cell.fields
    text = f"{cell.resource}={fields.get(quota.NOMINAL)}"
    if quota.BORROWING in fields:
        text += f"(+{fields[quota.BORROWING]})"
    if quota.LENDING in fields:
        text += f"(lend {fields[quota.LENDING]})"
    return text


def _quota_summary(cq: Json) -> str:
    by_flavor = itertools.groupby(quota.cells(cq), key=lambda c: (c.path[:5], c.flavor))
    return "; ".join(
        f"{flavor}: {' '.join(_cell_text(c) for c in found)}" for (_, flavor), found in by_flavor
    )


def _counts_text(counts: dict[str, int]) -> str:
    return " ".join(f"{s}={n}" for s, n in counts.items() if s in SHOWN or n)


def render_text(status: LiveStatus, profile: ClusterProfile, events: int = EVENTS) -> str:
    doc = to_json(status, profile, events)
    key = profile.admission_label[0]
    lines = [f"cluster {profile.name}", "", "ClusterQueues:"]
    for cq, shown in zip(status.cluster_queues, doc["clusterQueues"], strict=True):
        lines.append(
            f"  {shown['name']:<16} cohort={shown['cohort'] or '-':<10} "
            f"stopPolicy={shown['stopPolicy']:<5} {_counts_text(shown['workloads'])}"
        )
        lines.append(f"    {_quota_summary(cq)}")
    lines += ["", "LocalQueues:"]
    for lq in doc["localQueues"]:
        where = f"{lq['namespace']}/{lq['name']}"
        target = lq["clusterQueue"] or "-"
        lines.append(f"  {where:<24} -> {target:<16} {_counts_text(lq['workloads'])}")
    running = [w for w in doc["workloads"] if w["state"] != "finished"]
    lines += ["", f"Workloads ({len(running)} not finished):"]
    for w in running:
        lines.append(
            f"  {w['namespace']}/{w['name']:<28} {w['state']:<8} priority={w['priority']:<6} "
            f"{w['localQueue']} -> {w['clusterQueue'] or '(no ClusterQueue)'}"
            + (f"  {w['reason']}" if w["reason"] else "")
        )
    lines += ["", "Node pools (Ready nodes each flavor selects; allocatable / queues' nominal):"]
    for pool in doc["pools"]:
        held = " ".join(
            f"{r}={v['allocatable']}/{v['promised']}" for r, v in pool["resources"].items()
        )
        nodes = ", ".join(pool["readyNodes"]) or "NO READY NODE"
        lines.append(f"  {pool['flavor']:<16} {nodes}  {held}")
    lines += ["", f"Recent Kueue events (last {events} per namespace):"]
    if not doc["events"]:
        lines.append("  (none)")
    for namespace, found in doc["events"].items():
        lines.append(f"  {namespace or '(cluster)'}:")
        for e in found:
            times = f" (x{e['count']})" if e["count"] > 1 else ""
            lines.append(
                f"    {e['time']} {e['type'] or '-':<7} {e['reason'] or '-':<16} {e['object']}: "
                f"{e['message']}{times}"
            )
    lines += ["", f"Namespaces ({key}):"]
    for ns in doc["namespaces"]:
        state = "ADMITS WORK" if ns["admits"] else "no admission"
        lines.append(f"  {ns['name']:<16} {key}={ns['admissionLabel'] or '(absent)':<10} {state}")
    return "\n".join(lines)
