"""A snapshot of every Workload on a cluster before a rollback, and who preempted whom.

One paginated LIST of Workloads. Each Workload keeps what a person needs afterwards: its queue,
priority, conditions, admission, evictions and preemption. The preemption audit joins each
victim's `Preempted` condition (Kueue writes the preemptor's UID into its message) to the
preemptor's Workload, for the preemptor's priority.
"""

from __future__ import annotations

import datetime as dt
import json
import typing as t
from pathlib import Path

from auditor.errors import ConfigError
from auditor.k8s import conditions
from auditor.k8s.objects import Json
from auditor.kueue import workloads as kueue_workloads
from auditor.repo.outfile import write_whole

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster


def _ref(wl: Json) -> str:
    meta = wl["metadata"]
    return f"{meta.get('namespace')}/{meta['name']}"


def record(wl: Json) -> Json:
    """One Workload's state, as written to the snapshot."""
    spec, status, meta = wl.get("spec") or {}, wl.get("status") or {}, wl["metadata"]
    preempted = conditions.condition(wl, kueue_workloads.PREEMPTED)
    return {
        "namespace": meta.get("namespace"),
        "name": meta["name"],
        "uid": meta.get("uid"),
        "state": kueue_workloads.state(wl),
        "queue": spec.get("queueName"),
        "clusterQueue": kueue_workloads.cluster_queue(wl),
        "priority": spec.get("priority"),
        "priorityClass": (spec.get("priorityClassRef") or {}).get("name"),
        "active": spec.get("active", True),
        "conditions": [
            {k: c.get(k) for k in ("type", "status", "reason", "message", "lastTransitionTime")}
            for c in status.get("conditions") or []
        ],
        "admission": status.get("admission"),
        "admissionChecks": status.get("admissionChecks") or [],
        "evictions": (status.get("schedulingStats") or {}).get("evictions") or [],
        "requeueState": status.get("requeueState"),
        "preemption": (
            {
                "status": preempted.get("status"),
                "reason": preempted.get("reason"),
                "message": preempted.get("message"),
                "at": preempted.get("lastTransitionTime"),
            }
            if preempted
            else None
        ),
    }


def preemption_audit(workloads: list[Json]) -> list[Json]:
    """Each preempted Workload, the Workload that preempted it, both priorities, and why."""
    by_uid = {w["metadata"].get("uid"): w for w in workloads}
    out = []
    for wl in workloads:
        cond = conditions.condition(wl, kueue_workloads.PREEMPTED)
        if not cond:
            continue
        uid = kueue_workloads.preemptor_uid(wl)
        preemptor = by_uid.get(uid) if uid else None
        out.append(
            {
                "victim": _ref(wl),
                "victimPriority": (wl.get("spec") or {}).get("priority"),
                "clusterQueue": kueue_workloads.cluster_queue(wl)
                or (wl.get("spec") or {}).get("queueName"),
                "reason": cond.get("reason"),
                "message": cond.get("message"),
                "at": cond.get("lastTransitionTime"),
                "preemptorUid": uid,
                "preemptor": _ref(preemptor) if preemptor else None,
                "preemptorPriority": (preemptor.get("spec") or {}).get("priority")
                if preemptor
                else None,
                "preemptorFound": preemptor is not None,
            }
        )
    return sorted(out, key=lambda p: (p["at"] or "", p["victim"]))


def snapshot(cluster: KubeCluster, kueue: str, now: dt.datetime | None = None) -> Json:
    """Every Workload on the cluster (read in apiVersion `kueue`), and the preemption audit."""
    workloads = sorted(cluster.list(kueue, "Workload"), key=_ref)
    taken = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    return {
        "schemaVersion": 1,
        "cluster": cluster.name,
        "server": cluster.server,
        "exportedAt": taken.isoformat().replace("+00:00", "Z"),
        "workloads": [record(w) for w in workloads],
        "preemptions": preemption_audit(workloads),
    }


def write(snap: Json, folder: Path) -> Path:
    """Write the snapshot to `folder` as workloads-<cluster>-<UTC time>.json; never overwrite."""
    stamp = snap["exportedAt"].replace("-", "").replace(":", "")
    path = folder / f"workloads-{snap['cluster']}-{stamp}.json"
    try:
        write_whole(path, json.dumps(snap, indent=2) + "\n", what="the snapshot", exclusive=True)
    except FileExistsError:
        raise ConfigError(f"{path} already exists; a snapshot is never overwritten") from None
    return path


def summary(snap: Json) -> str:
    counts: dict[str, int] = {}
    for w in snap["workloads"]:
        counts[w["state"]] = counts.get(w["state"], 0) + 1
    states = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none"
    return (
        f"{len(snap['workloads'])} Workloads on {snap['cluster']} ({states}); "
        f"{len(snap['preemptions'])} preemptions"
    )
