"""The live start's pure parts: a Job file read as Kueue's Job integration reads it, a cluster's
Workloads ordered as Kueue holds them, and the simulator's output read for the Job."""

from __future__ import annotations

import datetime as dt
import typing as t
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.replay import livestart

NOW = dt.datetime(2026, 12, 3, 12, 0, 0, tzinfo=dt.UTC)
JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: batch
    kueue.x-k8s.io/priority-class: high
spec:
  parallelism: 2
  template:
    spec:
      containers:
        - name: main
          resources:
            requests: {cpu: "2", memory: 4Gi}
            limits: {nvidia.com/gpu: "1"}
        - name: side
          resources:
            requests: {cpu: 500m}
"""


def test_a_job_file_is_its_pods_requests_its_queue_and_priority(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    w = livestart.job_workload(tmp_path / "job.yaml", 600.0)
    assert (w.namespace, w.local_queue, w.priority_class, w.pod_count) == (
        "team-a",
        "batch",
        "high",
        2,
    )
    assert w.requests == {"cpu": "2500m", "memory": "4Gi", "nvidia.com/gpu": "1"}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("kind: Deployment\n", "takes one batch/v1 Job"),
        (JOB.replace("    kueue.x-k8s.io/queue-name: batch\n", ""), "kueue.x-k8s.io/queue-name"),
        (JOB.replace("cpu: 500m", "cpu: lots"), "cpu"),
    ],
)
def test_a_file_that_is_no_queued_job_is_refused_naming_it(
    tmp_path: Path, text: str, said: str
) -> None:
    (tmp_path / "job.yaml").write_text(text)
    with pytest.raises(ConfigError, match=said) as caught:
        livestart.job_workload(tmp_path / "job.yaml", 600.0)
    assert "job.yaml" in str(caught.value)


def _wl(name: str, created: str, reserved: str | None, finished: bool = False) -> dict[str, t.Any]:
    conds: list[dict[str, t.Any]] = []
    if reserved:
        conds.append({"type": "QuotaReserved", "status": "True", "lastTransitionTime": reserved})
    if finished:
        conds.append({"type": "Finished", "status": "True", "lastTransitionTime": reserved})
    return {
        "metadata": {"name": name, "namespace": "team-b", "creationTimestamp": created},
        "spec": {
            "queueName": "batch",
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "containers": [{"resources": {"requests": {"nvidia.com/gpu": "1"}}}]
                        }
                    },
                }
            ],
        },
        "status": {"conditions": conds}
        | ({"admission": {"clusterQueue": "team-b-cq"}} if reserved else {}),
    }


def test_admitted_come_first_by_admission_then_pending_by_creation_then_the_job(
    tmp_path: Path,
) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    job = livestart.job_workload(tmp_path / "job.yaml", 600.0)
    items = [
        _wl("late-admit", "2026-12-03T11:00:00Z", "2026-12-03T11:50:00Z"),
        _wl("waiting", "2026-12-03T11:30:00Z", None),
        _wl("early-admit", "2026-12-03T11:10:00Z", "2026-12-03T11:20:00Z"),
        _wl("older-wait", "2026-12-03T11:05:00Z", None),
        _wl("done", "2026-12-03T10:00:00Z", "2026-12-03T10:01:00Z", finished=True),
    ]
    start = livestart.from_live(items, now=NOW, run_for=3600.0).then([job], [livestart.JOB_NAME])
    assert start.names == [
        "team-b/early-admit",
        "team-b/late-admit",
        "team-b/older-wait",
        "team-b/waiting",
        livestart.JOB_NAME,
    ]
    early, late = start.workloads[0], start.workloads[1]
    assert early["admittedAt"] == -2400.0 and early["runSeconds"] == 1200.0  # 40 min run of 60
    assert late["runSeconds"] == 3000.0
    assert "admission" not in start.workloads[2] and start.workloads[2]["runSeconds"] == 3600.0


def test_the_forecast_names_the_jobs_victims_and_what_changed_until_it_was_admitted() -> None:
    start = livestart.LiveStart(["team-b/a", "team-b/b", livestart.JOB_NAME], [{}, {}, {}])
    out = {
        "workloads": [
            {"index": 0, "events": [{"at": 0.0, "kind": "admitted"}]},
            {
                "index": 1,
                "events": [
                    {"at": 0.0, "kind": "admitted"},
                    {"at": 5.0, "kind": "preempted", "by": 2},
                    {"at": 99.0, "kind": "admitted"},
                ],
            },
            {
                "index": 2,
                "events": [
                    {"at": 5.0, "kind": "admitted", "clusterQueue": "q", "flavors": "gpu=a"}
                ],
            },
        ]
    }
    f = livestart.forecast(out, start, t.cast(t.Any, None), cluster="c", release="v")
    assert (f.admitted_at, f.cluster_queue, f.flavors, f.victims) == (
        5.0,
        "q",
        "gpu=a",
        ["team-b/b"],
    )
    assert [(c["workload"], c["kind"]) for c in f.changes] == [
        ("team-b/b", "preempted"),
        (livestart.JOB_NAME, "admitted"),
    ]
    assert f.findings() == []
