"""Read what the preemption ledger is built from: Workloads, their Events and their Jobs.

Three paginated LISTs (Events filtered to Workloads by the server); auditor.kueue.ledger joins
them. Events outlive nothing: the API server keeps them an hour by default (--event-ttl), so a
ledger over a longer window holds what the Workloads' conditions still say beyond that.
"""

from __future__ import annotations

import datetime as dt
import typing as t

from auditor.k8s.objects import Json
from auditor.kueue import ledger

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

PAGE = 500


def events_about_workloads(cluster: KubeCluster) -> list[Json]:
    path = cluster.path("v1", "Event")
    out: list[Json] = []
    token: str | None = None
    while True:
        query: list[tuple[str, t.Any]] = [
            ("fieldSelector", "involvedObject.kind=Workload"),
            ("limit", PAGE),
        ]
        if token:
            query.append(("continue", token))
        page = cluster.request("GET", path, query=query, what="LIST Event")
        out.extend(page.get("items", []))
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return out


def read(
    cluster: KubeCluster, kueue_api: str, since: dt.timedelta, now: dt.datetime | None = None
) -> ledger.Ledger:
    """The ledger of the last `since` on `cluster` (Kueue objects read in `kueue_api`)."""
    until = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    workloads = cluster.list(kueue_api, "Workload")
    events = events_about_workloads(cluster)
    jobs = cluster.list("batch/v1", "Job")
    return ledger.build(cluster.name, workloads, events, jobs, since=until - since, until=until)
