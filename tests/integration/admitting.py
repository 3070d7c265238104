"""Submitting a Job to the real Kueue and waiting for what it admits."""

from __future__ import annotations

import time
import typing as t
from dataclasses import dataclass
from pathlib import Path

from auditor.k8s import conditions
from auditor.kueue import workloads
from auditor.live.kube import KubeCluster
from auditor.model import Resource
from auditor.replay import run
from auditor.replay.trace import TracedWorkload
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, nodes

API = "kueue.x-k8s.io/v1beta2"
WAIT = 180.0  # seconds: Kueue's cycles, kwok and the Job controller on a shared 2-core machine
LOW = TracedWorkload("team-b", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 0.0, 3600.0)


def all_workloads(admin: KubeCluster) -> list[dict[str, t.Any]]:
    return admin.list(API, "Workload")


def workload_name(wl: dict[str, t.Any]) -> str:
    return f"{wl['metadata']['namespace']}/{wl['metadata']['name']}"


def admitted_workload(admin: KubeCluster, job: str) -> dict[str, t.Any] | None:
    for wl in all_workloads(admin):
        if workloads.owner_job(wl) == job and conditions.is_true(wl, workloads.QUOTA_RESERVED):
            return wl
    return None


def admit_alone(box: Sandbox, admin: KubeCluster, i: int) -> None:
    """team-b's Job i created and admitted, and the clock past its admission's second."""
    admin.create(run.job(LOW, i, 1.0))
    name = run.job_name(i)

    def admitted() -> bool:
        return admitted_workload(admin, name) is not None

    box.wait_until(f"team-b's Job {i} admitted", time.monotonic() + WAIT, admitted, ("kueue",))
    wl = admitted_workload(admin, name)
    assert wl is not None
    last = workloads.reserved_at(wl)

    def later() -> bool:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) > last

    box.wait_until("the next second", time.monotonic() + 5, later, ())


@dataclass(frozen=True)
class BusyLab:
    """What a module's `busy` sandbox (tests/integration/conftest.py) runs: the lab estate at
    `root`, the revision of it the cluster is given, and the wide Job it leaves pending."""

    name: str  # of the sandbox
    root: Path
    kueue_config: dict[str, t.Any] | None
    node_pools: list[dict[str, t.Any]]
    objects: list[Resource]
    wide: TracedWorkload
    waiting: str  # what the wait for the wide Job says when it times out

    @classmethod
    def of(
        cls, name: str, root: Path, repo: Repository, wide: TracedWorkload, waiting: str
    ) -> BusyLab:
        """The lab with the cluster running `repo` (the estate at `root`, or a revision of it)."""
        config = boundaries.kueue_configuration(repo, "lab")
        objects = list(repo.load(["lab"]).for_cluster("lab"))
        return cls(name, root, config, nodes.pools_for(repo, "lab"), objects, wide, waiting)
