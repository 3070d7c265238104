"""A Workload's state, usage and eviction order, from conditions as Kueue writes them."""

from __future__ import annotations

import typing as t
from decimal import Decimal

import pytest

from auditor.kueue import workloads

Json = dict[str, t.Any]

PENDING = {
    "type": "QuotaReserved",
    "status": "False",
    "reason": "Pending",
    "message": "couldn't assign flavors to pod set main: insufficient unused quota for "
    "nvidia.com/gpu in flavor a100, 4 more needed",
    "lastTransitionTime": "2025-05-01T10:00:00Z",
}
RESERVED = {
    "type": "QuotaReserved",
    "status": "True",
    "reason": "QuotaReserved",
    "message": "Quota reserved in ClusterQueue team-a-cq",
    "lastTransitionTime": "2025-05-01T10:01:00Z",
}
WAITING_FOR_CHECKS = {
    "type": "Admitted",
    "status": "False",
    "reason": "UnsatisfiedChecks",
    "message": "The workload has not all admission checks",
    "lastTransitionTime": "2025-05-01T10:01:00Z",
}
ADMITTED = {
    "type": "Admitted",
    "status": "True",
    "reason": "Admitted",
    "message": "The workload is admitted",
    "lastTransitionTime": "2025-05-01T10:01:00Z",
}
PREEMPTION_MESSAGE = (
    "Preempted to accommodate a workload (UID: 5c1c5b6e-7a5e-4c53-9a5f-0d9a1c2b3e4f, "
    "JobUID: 0a9b8c7d-...) due to reclamation within the cohort"
)
EVICTED = {
    "type": "Evicted",
    "status": "True",
    "reason": "Preempted",
    "message": PREEMPTION_MESSAGE,
    "lastTransitionTime": "2025-05-01T11:00:00Z",
}
PREEMPTED = {
    "type": "Preempted",
    "status": "True",
    "reason": "InCohortReclamation",
    "message": PREEMPTION_MESSAGE,
    "lastTransitionTime": "2025-05-01T11:00:00Z",
}
FINISHED = {
    "type": "Finished",
    "status": "True",
    "reason": "Succeeded",
    "message": "Job finished successfully",
    "lastTransitionTime": "2025-05-01T12:00:00Z",
}
RELEASED = {**RESERVED, "status": "False", "reason": "NoReservation", "message": "released"}


def workload(*conditions: Json, active: bool = True, priority: int | None = 100) -> Json:
    spec: Json = {"queueName": "batch", "active": active}
    if priority is not None:
        spec["priority"] = priority
    return {
        "metadata": {"name": "job-train-1a2b3", "namespace": "team-a"},
        "spec": spec,
        "status": {"conditions": list(conditions)},
    }


@pytest.mark.parametrize(
    ("conditions", "active", "state", "quota_state"),
    [
        ((), True, "pending", "pending"),
        ((PENDING,), True, "pending", "pending"),
        ((PENDING,), False, "inactive", "pending"),
        ((RESERVED, WAITING_FOR_CHECKS), True, "reserved", "reserved"),
        ((RESERVED, ADMITTED), True, "admitted", "admitted"),
        # Evicted while the reservation is not yet released: still holds quota.
        ((RESERVED, ADMITTED, EVICTED, PREEMPTED), True, "evicted", "admitted"),
        ((RELEASED, EVICTED, PREEMPTED), True, "evicted", "pending"),
        ((RESERVED, ADMITTED, FINISHED), True, "finished", "admitted"),
    ],
    ids=[
        "new",
        "no-quota",
        "deactivated",
        "checks-pending",
        "admitted",
        "being-evicted",
        "evicted",
        "finished",
    ],
)
def test_state_and_what_the_quota_sees_follow_the_conditions(
    conditions: tuple[Json, ...], active: bool, state: str, quota_state: str
) -> None:
    wl = workload(*conditions, active=active)
    assert workloads.state(wl) == state
    assert workloads.quota_state(wl) == quota_state
    assert workloads.finished(wl) is (state == "finished")


def test_every_state_is_listed_once() -> None:
    assert sorted(workloads.STATES) == sorted(set(workloads.STATES))
    assert set(workloads.QUOTA_STATES) <= set(workloads.STATES)


def test_reserved_at_is_when_quota_was_reserved_and_empty_without_a_reservation() -> None:
    assert workloads.reserved_at(workload(RESERVED, ADMITTED)) == "2025-05-01T10:01:00Z"
    assert workloads.reserved_at(workload(PENDING)) == ""
    assert workloads.reserved_at(workload(RELEASED)) == ""


def test_priority_defaults_to_zero() -> None:
    assert workloads.priority(workload(priority=1000)) == 1000
    assert workloads.priority(workload(priority=None)) == 0


def _admitted(assignments: list[Json]) -> Json:
    wl = workload(RESERVED, ADMITTED)
    wl["status"]["admission"] = {"clusterQueue": "team-a-cq", "podSetAssignments": assignments}
    return wl


def test_usage_sums_each_flavor_and_resource_over_the_pod_sets() -> None:
    wl = _admitted(
        [
            {
                "name": "launcher",
                "flavors": {"cpu": "cpu-only", "memory": "cpu-only"},
                "resourceUsage": {"cpu": "500m", "memory": "1Gi"},
                "count": 1,
            },
            {
                "name": "worker",
                "flavors": {"cpu": "a100", "memory": "a100", "nvidia.com/gpu": "a100"},
                "resourceUsage": {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "4"},
                "count": 4,
            },
            {
                "name": "sidecar",
                "flavors": {"cpu": "cpu-only"},
                "resourceUsage": {"cpu": "1500m", "ephemeral-storage": "1Gi"},  # no flavor: none
                "count": 1,
            },
        ]
    )
    assert workloads.cluster_queue(wl) == "team-a-cq"
    assert workloads.usage(wl) == {
        ("cpu-only", "cpu"): Decimal(2),
        ("cpu-only", "memory"): Decimal(2**30),
        ("a100", "cpu"): Decimal(16),
        ("a100", "memory"): Decimal(64 * 2**30),
        ("a100", "nvidia.com/gpu"): Decimal(4),
    }


def test_a_workload_without_a_reservation_uses_nothing_even_with_a_stale_admission() -> None:
    wl = _admitted([{"flavors": {"cpu": "a100"}, "resourceUsage": {"cpu": "8"}}])
    wl["status"]["conditions"] = [RELEASED, EVICTED]
    assert workloads.usage(wl) == {}


def test_a_victim_is_recognised_by_either_preemption_condition() -> None:
    evicted_only = workload(RESERVED, EVICTED)
    preempted_only = workload(RESERVED, PREEMPTED)
    timed_out = workload(RESERVED, {**EVICTED, "reason": "PodsReadyTimeout", "message": "x"})
    assert workloads.evicted_by_preemption(evicted_only)
    assert workloads.evicted_by_preemption(preempted_only)
    assert not workloads.evicted_by_preemption(timed_out)
    assert not workloads.evicted_by_preemption(workload(PENDING))


def test_the_preemptors_uid_comes_from_the_preempted_condition() -> None:
    victim = workload(RELEASED, EVICTED, PREEMPTED)
    assert workloads.preemptor_uid(victim) == "5c1c5b6e-7a5e-4c53-9a5f-0d9a1c2b3e4f"
    vague = workload(RELEASED, {**PREEMPTED, "message": "Preempted"})
    assert workloads.preemptor_uid(vague) is None
    assert workloads.preemptor_uid(workload(RESERVED, ADMITTED)) is None


def test_victims_go_lowest_priority_first_then_most_recently_reserved() -> None:
    held = [
        ("old-low", 100, "2025-05-01T08:00:00Z"),
        ("new-high", 1000, "2025-05-01T11:00:00Z"),
        ("new-low", 100, "2025-05-01T10:00:00Z"),
        ("mid", 500, "2025-05-01T09:00:00Z"),
    ]
    ordered = workloads.victim_order(held, priority=lambda w: w[1], since=lambda w: w[2])
    assert [name for name, _, _ in ordered] == ["new-low", "old-low", "mid", "new-high"]


# -- the priority class a Workload or a Job names, in every served shape --


@pytest.mark.parametrize(
    ("obj", "found"),
    [
        # v1beta2 (served and stored since Kueue v0.16)
        (
            {"spec": {"priorityClassRef": {"group": "kueue.x-k8s.io",
                                           "kind": "WorkloadPriorityClass", "name": "high"}}},
            ("workload", "high"),
        ),
        (
            {"spec": {"priorityClassRef": {"group": "scheduling.k8s.io",
                                           "kind": "PriorityClass", "name": "batch"}}},
            ("pod", "batch"),
        ),
        # v1beta1
        (
            {"spec": {"priorityClassName": "low",
                      "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass"}},
            ("workload", "low"),
        ),
        (
            {"spec": {"priorityClassName": "batch",
                      "priorityClassSource": "scheduling.k8s.io/priorityclass"}},
            ("pod", "batch"),
        ),
        # a Job (any integrated kind) by its label
        (
            {"kind": "Job", "metadata": {"labels": {"kueue.x-k8s.io/priority-class": "mid"}}},
            ("workload", "mid"),
        ),
        ({"spec": {}}, None),
    ],
)  # fmt: skip
def test_priority_class_in_either_shape(obj: dict[str, t.Any], found: t.Any) -> None:
    assert workloads.priority_class(obj) == found
    workload_class = found[1] if found and found[0] == "workload" else None
    assert workloads.workload_priority_class(obj) == workload_class
