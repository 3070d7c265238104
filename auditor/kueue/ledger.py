"""The ledger of evictions: every preemption (and other eviction) Kueue recorded, with the victim's
recovery point.

Kueue records a preemption twice on the victim's Workload: an Event (reason `Preempted`, and
`EvictedDueToPreempted`) and the `Preempted` condition, whose reason is why (InClusterQueue,
InCohortReclamation, InCohortReclaimWhileBorrowing, InCohortFairSharing). Its message names the
preemptor's Workload UID and, in words, the same reason. Events last an hour by default
(kube-apiserver --event-ttl) and a condition only until the next eviction, so the ledger joins
both: one entry per Event, plus the condition when no Event covers it. Other evictions
(a stopped queue, PodsReady timeout, ...) are `EvictedDueTo<Reason>` Events and the Evicted
condition.

The recovery point is what a person needs to trust the victim resumes: the checkpoint reference
its Job carries (annotation `kueue-gitops.io/checkpoint`), whether Kueue admitted it again after
the eviction, and whether it finished.
"""

from __future__ import annotations

import datetime as dt
import re
import typing as t
from dataclasses import dataclass, field

from auditor.k8s import conditions
from auditor.k8s.objects import Json
from auditor.kueue import workloads as kueue_workloads

CHECKPOINT = "kueue-gitops.io/checkpoint"  # on a Job: where its last checkpoint is
PREEMPTED_EVENT = "Preempted"
EVICTED_EVENT = "EvictedDueTo"
# The words Kueue's message uses for each reason (v0.9 writes "fair sharing" in lower case).
REASON_WORDS = {
    "prioritization in the clusterqueue": "InClusterQueue",
    "reclamation within the cohort while borrowing": "InCohortReclaimWhileBorrowing",
    "reclamation within the cohort": "InCohortReclamation",
    "fair sharing within the cohort": "InCohortFairSharing",
}
_DUE_TO = re.compile(r"due to ([^;]+)")
_PRIORITY = re.compile(r"preemptee effective priority: (-?[0-9]+)")


def reason_in(message: str) -> str | None:
    """The preemption reason a Kueue message gives in words."""
    found = _DUE_TO.search(message or "")
    return REASON_WORDS.get(found.group(1).strip().lower()) if found else None


def parse_time(raw: t.Any) -> dt.datetime | None:
    if not raw:
        return None
    try:
        return dt.datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        return None


def event_time(event: Json) -> dt.datetime | None:
    """When an Event last happened (events.k8s.io and core/v1 keep it in different fields)."""
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        found = parse_time(event.get(key))
        if found:
            return found
    return parse_time((event.get("series") or {}).get("lastObservedTime"))


@dataclass
class Recovery:
    checkpoint: str | None
    readmitted: bool
    completed: bool
    state: str  # the victim Workload's state now, or "deleted"


@dataclass
class Eviction:
    at: dt.datetime
    victim: str  # namespace/name of the Workload
    victim_uid: str | None
    job: str | None
    cluster_queue: str | None
    priority: int | None
    kind: str  # preemption | eviction
    reason: str  # InClusterQueue, ... for a preemption; Evicted's reason otherwise
    message: str
    source: str  # event | condition
    preemptor: str | None = None
    preemptor_uid: str | None = None
    preemptor_priority: int | None = None
    preemptor_cluster_queue: str | None = None
    count: int = 1
    recovery: Recovery | None = None

    def to_json(self) -> Json:
        return {
            "at": self.at.isoformat().replace("+00:00", "Z"),
            "kind": self.kind,
            "victim": self.victim,
            "victimUid": self.victim_uid,
            "job": self.job,
            "clusterQueue": self.cluster_queue,
            "priority": self.priority,
            "reason": self.reason,
            "preemptor": self.preemptor,
            "preemptorUid": self.preemptor_uid,
            "preemptorPriority": self.preemptor_priority,
            "preemptorClusterQueue": self.preemptor_cluster_queue,
            "count": self.count,
            "source": self.source,
            "message": self.message,
            "recovery": None
            if self.recovery is None
            else {
                "checkpoint": self.recovery.checkpoint,
                "readmitted": self.recovery.readmitted,
                "completed": self.recovery.completed,
                "state": self.recovery.state,
            },
        }


@dataclass
class Ledger:
    cluster: str
    since: dt.datetime
    until: dt.datetime
    entries: list[Eviction] = field(default_factory=list)

    def counts(self) -> dict[tuple[str, str, str], int]:
        """(ClusterQueue, kind, reason) -> evictions, for the eviction-rate SLO."""
        out: dict[tuple[str, str, str], int] = {}
        for e in self.entries:
            key = (e.cluster_queue or "", e.kind, e.reason)
            out[key] = out.get(key, 0) + e.count
        return out

    def unrecovered(self) -> list[Eviction]:
        """Victims not admitted again since (a victim that finished counts as recovered)."""
        return [e for e in self.entries if e.recovery and not e.recovery.readmitted]

    def to_json(self) -> Json:
        """The ledger's keys of the `preemptions` JSON report."""
        return {
            "since": stamp(self.since),
            "until": stamp(self.until),
            "preemptions": [e.to_json() for e in self.entries],
            "counts": [
                {"clusterQueue": cq or None, "kind": kind, "reason": reason, "count": n}
                for (cq, kind, reason), n in sorted(self.counts().items())
            ],
        }


def stamp(when: dt.datetime) -> str:
    """A time as the ledger writes it: ISO 8601, UTC as Z."""
    return when.isoformat().replace("+00:00", "Z")


def build(
    cluster: str,
    workloads: list[Json],
    events: list[Json],
    jobs: list[Json],
    *,
    since: dt.datetime,
    until: dt.datetime,
) -> Ledger:
    """Every eviction between `since` and `until`, from the Workloads, their Events and Jobs."""
    by_uid = {w["metadata"].get("uid"): w for w in workloads}
    by_ref = {_ref(w): w for w in workloads}
    job_by_uid = {j["metadata"].get("uid"): j for j in jobs}
    entries: list[Eviction] = []
    for event in events:
        involved = event.get("involvedObject") or event.get("regarding") or {}
        why = str(event.get("reason") or "")
        if involved.get("kind") != "Workload" or not _is_eviction(why):
            continue
        at = event_time(event)
        if at is None or not since <= at <= until:
            continue
        ref = f"{involved.get('namespace')}/{involved.get('name')}"
        victim = by_ref.get(ref)
        if victim and involved.get("uid") and victim["metadata"].get("uid") != involved["uid"]:
            victim = None  # a Workload of the same name made since: not this victim
        message = str(event.get("message") or event.get("note") or "")
        found = _entry(at, ref, involved.get("uid"), victim, why, message, "event", by_uid)
        found.count = int(event.get("count") or 1)
        entries.append(found)
    for w in workloads:
        held = _from_condition(w, by_uid, since, until)
        if held and not any(_same(held, e) for e in entries):
            entries.append(held)
    for e in entries:
        now = by_ref.get(e.victim)
        if now is not None and now["metadata"].get("uid") == e.victim_uid:
            e.recovery = _recovery(now, e.at, job_by_uid)
        else:
            e.recovery = Recovery(None, False, False, "deleted")
    return Ledger(cluster, since, until, sorted(entries, key=lambda e: (e.at, e.victim)))


def _is_eviction(reason: str) -> bool:
    # A preemption's Preempted and EvictedDueToPreempted Events are one eviction: keep the first.
    if reason == PREEMPTED_EVENT:
        return True
    return reason.startswith(EVICTED_EVENT) and reason != f"{EVICTED_EVENT}{PREEMPTED_EVENT}"


def _entry(
    at: dt.datetime,
    ref: str,
    uid: str | None,
    victim: Json | None,
    why: str,
    message: str,
    source: str,
    by_uid: dict[t.Any, Json],
) -> Eviction:
    preempted = why in (PREEMPTED_EVENT, "condition:Preempted")
    preemptor_uid = kueue_workloads.preemptor_uid_in(message) if preempted else None
    preemptor = by_uid.get(preemptor_uid) if preemptor_uid else None
    priority = kueue_workloads.priority(victim) if victim else _priority_in(message)
    reason = (
        (reason_in(message) or "Unknown")
        if preempted
        else why.removeprefix(EVICTED_EVENT).removeprefix("condition:")
    )
    return Eviction(
        at=at,
        victim=ref,
        victim_uid=uid or (victim["metadata"].get("uid") if victim else None),
        job=kueue_workloads.owner_job(victim) if victim else None,
        cluster_queue=(kueue_workloads.cluster_queue(victim) or kueue_workloads.local_queue(victim))
        if victim
        else None,
        priority=priority,
        kind="preemption" if preempted else "eviction",
        reason=reason,
        message=message,
        source=source,
        preemptor=_ref(preemptor) if preemptor else None,
        preemptor_uid=preemptor_uid,
        preemptor_priority=kueue_workloads.priority(preemptor) if preemptor else None,
        preemptor_cluster_queue=kueue_workloads.cluster_queue(preemptor) if preemptor else None,
    )


def _from_condition(
    victim: Json, by_uid: dict[t.Any, Json], since: dt.datetime, until: dt.datetime
) -> Eviction | None:
    cond = conditions.condition(victim, kueue_workloads.PREEMPTED)
    why = "condition:Preempted"
    if cond.get("status") != "True":
        cond = conditions.condition(victim, kueue_workloads.EVICTED)
        if cond.get("status") != "True" or cond.get("reason") == "Preempted":
            return None
        why = f"condition:{cond.get('reason')}"
    at = parse_time(cond.get("lastTransitionTime"))
    if at is None or not since <= at <= until:
        return None
    meta = victim["metadata"]
    found = _entry(
        at,
        _ref(victim),
        meta.get("uid"),
        victim,
        why,
        cond.get("message") or "",
        "condition",
        by_uid,
    )
    if found.kind == "preemption" and cond.get("reason"):
        found.reason = str(cond["reason"])  # the condition says it by name
    return found


def _same(a: Eviction, b: Eviction) -> bool:
    """The condition and an Event of one eviction (their times differ by a moment)."""
    return (
        a.victim_uid == b.victim_uid
        and a.kind == b.kind
        and a.preemptor_uid == b.preemptor_uid
        and abs((a.at - b.at).total_seconds()) <= 5
    )


def _recovery(victim: Json, evicted: dt.datetime, jobs: dict[t.Any, Json]) -> Recovery:
    reserved = conditions.condition(victim, kueue_workloads.QUOTA_RESERVED)
    again = reserved.get("status") == "True" and (
        (parse_time(reserved.get("lastTransitionTime")) or evicted) > evicted
    )
    finished = conditions.condition(victim, kueue_workloads.FINISHED)
    completed = finished.get("status") == "True" and finished.get("reason") != "Failed"
    job = jobs.get(kueue_workloads.owner_uid(victim))
    annotations = ((job or {}).get("metadata") or {}).get("annotations") or {}
    return Recovery(
        annotations.get(CHECKPOINT), again or completed, completed, kueue_workloads.state(victim)
    )


def _priority_in(message: str) -> int | None:
    found = _PRIORITY.search(message)
    return int(found.group(1)) if found else None


def _ref(w: Json) -> str:
    meta = w["metadata"]
    return f"{meta.get('namespace')}/{meta['name']}"
