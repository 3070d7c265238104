"""The eviction ledger: Kueue's Events and conditions joined into one entry per eviction."""

from __future__ import annotations

import datetime as dt
import typing as t

from auditor.kueue import ledger

Json = dict[str, t.Any]
SINCE = dt.datetime(2026, 5, 1, 9, 0, tzinfo=dt.UTC)
UNTIL = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)
# As Kueue v0.17 writes it (pkg/scheduler/preemption): the preemptor's UID and the reason.
MESSAGE = (
    "Preempted to accommodate a workload (UID: uid-top, JobUID: job-top) due to reclamation "
    "within the cohort; preemptor path: /example-org/ai-shared/team-b-cq; preemptee path: "
    "/example-org/ai-shared/team-a-cq"
)


def workload(name: str, uid: str, priority: int, *conds: Json, job_uid: str = "") -> Json:
    return {
        "metadata": {
            "namespace": "team-a" if name.startswith("victim") else "team-b",
            "name": name,
            "uid": uid,
            "ownerReferences": [{"kind": "Job", "name": f"{name}-job", "uid": job_uid or uid}],
        },
        "spec": {"priority": priority, "queueName": "batch"},
        "status": {
            "conditions": list(conds),
            "admission": {
                "clusterQueue": "team-a-cq" if name.startswith("victim") else "team-b-cq"
            },
        },
    }


def cond(kind: str, status: str, reason: str, at: str, message: str = "") -> Json:
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": at}  # fmt: skip


def event(name: str, uid: str, reason: str, at: str, message: str) -> Json:
    return {
        "involvedObject": {"kind": "Workload", "namespace": "team-a", "name": name, "uid": uid},
        "reason": reason,
        "message": message,
        "lastTimestamp": at,
        "count": 1,
    }


TOP = workload(
    "top", "uid-top", 10000, cond("Finished", "True", "Succeeded", "2026-05-01T10:05:00Z")
)
JOB = {"metadata": {"uid": "uid-v1", "annotations": {ledger.CHECKPOINT: "s3://ckpt/v1/step-900"}}}


def test_a_preemption_event_names_victim_preemptor_reason_and_recovery() -> None:
    victim = workload(
        "victim-1", "uid-v1", 100,
        cond("Preempted", "False", "InCohortReclamation", "2026-05-01T10:00:00Z", MESSAGE),
        cond("QuotaReserved", "True", "QuotaReserved", "2026-05-01T10:05:01Z"),
        cond("Finished", "True", "Succeeded", "2026-05-01T10:06:00Z"),
    )  # fmt: skip
    events = [
        event("victim-1", "uid-v1", "Preempted", "2026-05-01T10:00:00Z", MESSAGE),
        event("victim-1", "uid-v1", "EvictedDueToPreempted", "2026-05-01T10:00:00Z", MESSAGE),
    ]
    found = ledger.build("gpu-staging", [victim, TOP], events, [JOB], since=SINCE, until=UNTIL)
    [entry] = found.entries  # the two Events of one preemption are one entry
    doc = entry.to_json()
    assert doc["victim"] == "team-a/victim-1" and doc["job"] == "victim-1-job"
    assert (doc["clusterQueue"], doc["priority"], doc["reason"]) == (
        "team-a-cq", 100, "InCohortReclamation",
    )  # fmt: skip
    assert (doc["preemptor"], doc["preemptorPriority"]) == ("team-b/top", 10000)
    assert doc["recovery"] == {
        "checkpoint": "s3://ckpt/v1/step-900", "readmitted": True, "completed": True,
        "state": "finished",
    }  # fmt: skip
    assert found.counts() == {("team-a-cq", "preemption", "InCohortReclamation"): 1}


def test_a_condition_without_its_event_still_makes_an_entry_and_events_outside_are_left() -> None:
    victim = workload(
        "victim-2", "uid-v2", 100,
        cond("Preempted", "True", "InClusterQueue", "2026-05-01T11:00:00Z", MESSAGE),
        cond("QuotaReserved", "False", "Pending", "2026-05-01T11:00:01Z"),
    )  # fmt: skip
    old = event("victim-2", "uid-v2", "Preempted", "2026-05-01T08:00:00Z", MESSAGE)
    found = ledger.build("c", [victim, TOP], [old], [], since=SINCE, until=UNTIL)
    [entry] = found.entries
    assert (entry.source, entry.reason, entry.at.hour) == ("condition", "InClusterQueue", 11)
    assert entry.recovery and not entry.recovery.readmitted and entry.recovery.checkpoint is None
    assert found.unrecovered() == [entry]


def test_other_evictions_are_listed_without_a_preemptor() -> None:
    victim = workload("victim-3", "uid-v3", 100)
    stopped = event("victim-3", "uid-v3", "EvictedDueToClusterQueueStopped",
                    "2026-05-01T10:30:00Z", "The ClusterQueue is stopped")  # fmt: skip
    [entry] = ledger.build("c", [victim], [stopped], [], since=SINCE, until=UNTIL).entries
    assert (entry.kind, entry.reason, entry.preemptor) == ("eviction", "ClusterQueueStopped", None)


def test_a_deleted_victim_keeps_what_its_event_says() -> None:
    message = (
        MESSAGE + "; preemptor effective priority: 10000 (base: 10000, boost: 0); "
        "preemptee effective priority: 100 (base: 100, boost: 0)"
    )
    gone = event("victim-4", "uid-v4", "Preempted", "2026-05-01T10:00:00Z", message)
    [entry] = ledger.build("c", [], [gone], [], since=SINCE, until=UNTIL).entries
    assert (entry.priority, entry.preemptor_uid, entry.reason) == (
        100, "uid-top", "InCohortReclamation",
    )  # fmt: skip
    assert entry.recovery is not None and entry.recovery.state == "deleted"


def test_kueue_0_9_words_are_read_too() -> None:
    old = "Preempted to accommodate a workload (UID: u) due to fair sharing within the cohort"
    assert ledger.reason_in(old) == "InCohortFairSharing"
    assert ledger.reason_in(MESSAGE) == "InCohortReclamation"
