"""When Kueue can never admit a Job asking for cpu and memory to a ClusterQueue."""

from __future__ import annotations

import typing as t

from auditor.kueue.admissible import blocked
from auditor.kueue.cohorts import Lending

Json = dict[str, t.Any]


def cq(name: str, cells: dict[str, str], cohort: str | None = None, **limits: str) -> Json:
    """A ClusterQueue with one group of flavor `f`: resource -> nominalQuota; `limits`:
    resource -> borrowingLimit."""
    resources = [
        {"name": r, "nominalQuota": q} | ({"borrowingLimit": limits[r]} if r in limits else {})
        for r, q in cells.items()
    ]
    spec: Json = {
        "resourceGroups": [
            {"coveredResources": list(cells), "flavors": [{"name": "f", "resources": resources}]}
        ]
    }
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


def names(queue: Json, *others: Json, **kw: t.Any) -> list[tuple[str, bool]]:
    return [(b.resource, b.covered) for b in blocked(queue, Lending.of([queue, *others]), **kw)]


GPU_ONLY = cq("team", {"nvidia.com/gpu": "8"})


def test_a_queue_covering_only_gpus_admits_no_job_asking_cpu_and_memory() -> None:
    assert names(GPU_ONLY) == [("cpu", False), ("memory", False)]


def test_ignore_undeclared_skips_uncovered_resources_only_with_its_gate_on() -> None:
    config = {"resources": {"quotaCheckStrategy": "IgnoreUndeclared"}}
    assert names(GPU_ONLY, config=config, strategy_gate=True) == []
    assert names(GPU_ONLY, config=config, strategy_gate=False) == [
        ("cpu", False),
        ("memory", False),
    ]
    assert names(GPU_ONLY, config=config, strategy_gate=None) == [("cpu", False), ("memory", False)]


def test_excluded_resource_prefixes_are_never_requested() -> None:
    config = {"resources": {"excludeResourcePrefixes": ["mem"]}}
    assert names(GPU_ONLY, config=config) == [("cpu", False)]


def test_covered_with_zero_quota_and_no_cohort_is_blocked() -> None:
    alone = cq("team", {"cpu": "0", "memory": "0", "nvidia.com/gpu": "8"})
    assert names(alone) == [("cpu", True), ("memory", True)]


def test_zero_quota_borrows_what_the_cohort_lends() -> None:
    borrower = cq("team", {"cpu": "0", "memory": "0", "nvidia.com/gpu": "8"}, cohort="shared")
    lender = cq("pool", {"cpu": "64", "memory": "512Gi"}, cohort="shared")
    assert names(borrower, lender) == []
    assert names(borrower) == [("cpu", True), ("memory", True)]  # a cohort with nothing in it
    capped = cq("team", {"cpu": "0", "memory": "0"}, cohort="shared", cpu="0")
    assert names(capped, lender) == [("cpu", True)]  # borrowingLimit 0: nothing to borrow


def test_a_cohorts_own_quota_is_lent_and_a_lending_limit_of_zero_lends_nothing() -> None:
    borrower = cq("team", {"cpu": "0", "memory": "0"}, cohort="shared")
    pool: Json = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Cohort",
        "metadata": {"name": "shared"},
        "spec": {"resourceGroups": GPU_ONLY["spec"]["resourceGroups"][:0]
                 + cq("x", {"cpu": "8", "memory": "8Gi"})["spec"]["resourceGroups"]},
    }  # fmt: skip
    assert names(borrower, pool) == []
    miser = cq("pool", {"cpu": "64", "memory": "64Gi"}, cohort="shared")
    for cell in miser["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
        cell["lendingLimit"] = "0"
    assert names(borrower, miser) == [("cpu", True), ("memory", True)]
