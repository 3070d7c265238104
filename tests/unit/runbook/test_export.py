"""The snapshot's records and preemption audit, from Workload objects as Kueue writes them.

(The states themselves: tests/unit/kueue/test_workloads.py.)"""

from __future__ import annotations

import typing as t

from auditor.runbook import export as runbook_export

Json = dict[str, t.Any]


def wl(name: str, uid: str, priority: int, *conds: tuple[str, str, str], msg: str = "") -> Json:
    return {
        "metadata": {"name": name, "namespace": "team-a", "uid": uid},
        "spec": {"queueName": "batch", "priority": priority},
        "status": {
            "conditions": [
                {"type": c, "status": s, "reason": r, "message": msg or r} for c, s, r in conds
            ]
        },
    }


def test_a_record_carries_the_state_queue_and_admitting_cluster_queue() -> None:
    admitted = wl(
        "w", "u", 5, ("QuotaReserved", "True", "QuotaReserved"), ("Admitted", "True", "Admitted")
    )
    admitted["status"]["admission"] = {"clusterQueue": "team-a-cq", "podSetAssignments": []}
    record = runbook_export.record(admitted)
    assert (record["state"], record["queue"], record["clusterQueue"], record["priority"]) == (
        "admitted",
        "batch",
        "team-a-cq",
        5,
    )
    assert record["preemption"] is None


def test_audit_names_the_preemptor_and_its_priority_from_the_uid_in_the_message() -> None:
    message = (
        "Preempted to accommodate a workload (UID: uid-high, JobUID: job-1) due to reclamation "
        "within the cohort; preemptor path: /ai-shared/team-b-cq; "
        "preemptee path: /ai-shared/team-a-cq"
    )
    victim = wl("low", "uid-low", 100, ("Preempted", "True", "InCohortReclamation"), msg=message)
    high = wl("high", "uid-high", 10000, ("Admitted", "True", "Admitted"))
    [entry] = runbook_export.preemption_audit([victim, high])
    assert (entry["victim"], entry["victimPriority"], entry["reason"]) == (
        "team-a/low",
        100,
        "InCohortReclamation",
    )
    assert (entry["preemptor"], entry["preemptorPriority"]) == ("team-a/high", 10000)


def test_a_message_without_a_uid_is_still_audited_with_the_preemptor_unknown() -> None:
    victim = wl("low", "uid-low", 100, ("Preempted", "True", "InClusterQueue"), msg="Preempted")
    [entry] = runbook_export.preemption_audit([victim])
    assert (entry["preemptorUid"], entry["preemptorFound"]) == (None, False)
