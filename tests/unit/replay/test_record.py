"""A trace recorded from Workloads as a live cluster holds them (no cluster needed to read them)."""

from __future__ import annotations

import datetime as dt
import typing as t

from auditor.replay import record

NOW = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)


def workload(created: str, *conds: tuple[str, str], gpus: str = "2", count: int = 1) -> t.Any:
    return {
        "metadata": {"namespace": "team-a", "name": "w", "creationTimestamp": created},
        "spec": {
            "queueName": "batch",
            "priorityClassRef": {"kind": "WorkloadPriorityClass", "name": "batch-low"},
            "podSets": [
                {
                    "name": "main",
                    "count": count,
                    "template": {
                        "spec": {
                            "containers": [
                                {"resources": {"requests": {"nvidia.com/gpu": gpus, "cpu": "8",
                                                            "ephemeral-storage": "1Gi"}}}
                            ]
                        }
                    },
                }
            ],
        },
        "status": {
            "conditions": [
                {"type": kind, "status": "True", "lastTransitionTime": at} for kind, at in conds
            ]
        },
    }  # fmt: skip


def test_finished_running_and_never_admitted_workloads() -> None:
    done = workload(
        "2026-05-01T11:00:00Z",
        ("QuotaReserved", "2026-05-01T11:05:00Z"),
        ("Admitted", "2026-05-01T11:05:00Z"),
        ("Finished", "2026-05-01T11:25:30Z"),
    )
    running = workload(
        "2026-05-01T11:30:00Z",
        ("QuotaReserved", "2026-05-01T11:40:00Z"),
        ("Admitted", "2026-05-01T11:40:00Z"),
        count=3,
    )
    waiting = workload("2026-05-01T11:50:00Z")
    old = workload("2026-04-01T11:00:00Z", ("Admitted", "2026-04-01T11:05:00Z"))  # fmt: skip
    got = record.from_workloads("gpu-staging", [running, done, waiting, old], since=7200, now=NOW)
    assert got.recorded == {
        "source": "live", "seconds": 7200, "from": "2026-05-01T10:00:00Z",
        "to": "2026-05-01T12:00:00Z", "leftOut": 1,
    }  # fmt: skip
    first, second = got.workloads
    assert first.to_json() == {
        "namespace": "team-a", "localQueue": "batch", "priorityClass": "batch-low",
        "requests": {"nvidia.com/gpu": "2", "cpu": "8"}, "podCount": 1,
        "submittedAt": 3600.0, "runSeconds": 1230.0,
    }  # fmt: skip
    assert (second.submitted_at, second.run_seconds, second.pod_count) == (5400.0, 1200.0, 3)
    assert second.still_running and second.to_json()["stillRunning"] is True
