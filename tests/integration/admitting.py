"""Submitting a Job to the real Kueue and waiting for what it admits."""

from __future__ import annotations

import time
import typing as t

from auditor.k8s import conditions
from auditor.kueue import workloads
from auditor.live.kube import KubeCluster
from auditor.replay import run
from auditor.replay.trace import TracedWorkload
from auditor.sandbox import Sandbox

API = "kueue.x-k8s.io/v1beta2"
WAIT = 180.0  # seconds: Kueue's cycles, kwok and the Job controller on a shared 2-core machine
LOW = TracedWorkload("team-b", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 0.0, 3600.0)


def _workloads(admin: KubeCluster) -> list[dict[str, t.Any]]:
    return admin.list(API, "Workload")


def _name(wl: dict[str, t.Any]) -> str:
    return f"{wl['metadata']['namespace']}/{wl['metadata']['name']}"


def _admitted(admin: KubeCluster, job: str) -> dict[str, t.Any] | None:
    for wl in _workloads(admin):
        if workloads.owner_job(wl) == job and conditions.is_true(wl, workloads.QUOTA_RESERVED):
            return wl
    return None


def _admit_alone(box: Sandbox, admin: KubeCluster, i: int) -> None:
    """team-b's Job i created and admitted, and the clock past its admission's second."""
    admin.create(run.job(LOW, i, 1.0))
    name = run.job_name(i)

    def admitted() -> bool:
        return _admitted(admin, name) is not None

    box.wait_until(f"team-b's Job {i} admitted", time.monotonic() + WAIT, admitted, ("kueue",))
    wl = _admitted(admin, name)
    assert wl is not None
    last = workloads.reserved_at(wl)

    def later() -> bool:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) > last

    box.wait_until("the next second", time.monotonic() + 5, later, ())
