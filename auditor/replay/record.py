"""A trace recorded from a live cluster: the Workloads created over a window, read from Kueue.

One paginated LIST of Workloads. Each one created within the window becomes a traced Workload:
its LocalQueue, priority class, one pod's cpu/memory/GPU requests and its pod count, its
creation time, and how long it ran once admitted (Admitted → Finished, from the conditions, so
to the second). One still running is recorded with its run time so far, flagged `stillRunning`;
one never admitted has no run time and is left out (counted in `recorded.leftOut`).
"""

from __future__ import annotations

import datetime as dt
import typing as t

from auditor.k8s.quantity import shown
from auditor.kueue import workloads as kueue_workloads
from auditor.replay.trace import RESOURCES, Trace, TracedWorkload

if t.TYPE_CHECKING:
    from auditor.k8s.objects import Json
    from auditor.live.kube import KubeCluster


def _time(raw: str) -> dt.datetime | None:
    if not raw:
        return None
    return dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))


def _iso(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def traced(wl: Json, start: dt.datetime, now: dt.datetime) -> TracedWorkload | None:
    """One Workload as the trace keeps it; None when it never ran (no run time to replay)."""
    meta = wl.get("metadata") or {}
    created = _time(str(meta.get("creationTimestamp") or ""))
    admitted = _time(kueue_workloads.transitioned_at(wl, kueue_workloads.ADMITTED)) or _time(
        kueue_workloads.reserved_at(wl)
    )
    finished = _time(kueue_workloads.transitioned_at(wl, kueue_workloads.FINISHED))
    if created is None or (admitted is None and finished is None):
        return None
    began = admitted or created
    ended = finished or now
    count, per_pod, _ = kueue_workloads.pod_requests(wl)
    requests = {r: shown(v, binary=r == "memory") for r, v in per_pod.items() if r in RESOURCES}
    return TracedWorkload(
        namespace=str(meta.get("namespace")),
        local_queue=str(kueue_workloads.local_queue(wl) or ""),
        priority_class=kueue_workloads.workload_priority_class(wl),
        requests=requests,
        pod_count=max(count, 1),
        submitted_at=max(0.0, (created - start).total_seconds()),
        run_seconds=max(1.0, (ended - began).total_seconds()),
        still_running=finished is None,
    )


def from_workloads(
    cluster: str, items: t.Iterable[Json], *, since: float, now: dt.datetime
) -> Trace:
    """The trace of the Workloads created in the `since` seconds before `now`."""
    start = now - dt.timedelta(seconds=since)
    kept, left_out = [], 0
    for wl in items:
        created = _time(str((wl.get("metadata") or {}).get("creationTimestamp") or ""))
        if created is None or created < start or not kueue_workloads.local_queue(wl):
            continue
        one = traced(wl, start, now)
        if one is None:
            left_out += 1
        else:
            kept.append(one)
    recorded = {
        "source": "live",
        "seconds": since,
        "from": _iso(start),
        "to": _iso(now),
        "leftOut": left_out,
    }
    return Trace(cluster, recorded, sorted(kept, key=lambda w: w.submitted_at))


def record(cluster: str, client: KubeCluster, api: str, *, since: float) -> Trace:
    return from_workloads(
        cluster, client.list(api, "Workload"), since=since, now=dt.datetime.now(dt.UTC)
    )
