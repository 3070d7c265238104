"""`status` text: each ClusterQueue's quota cells, its queues, and which namespaces admit."""

from __future__ import annotations

import typing as t

from auditor.kueue.workloads import ADMITTED, EVICTED, QUOTA_RESERVED, STATES
from auditor.status import LiveStatus, mentions_kueue, render_text, to_json
from tests.unit.conftest import cluster_profile

PROFILE = cluster_profile()
Json = dict[str, t.Any]


def workload(name: str, *true: str, admitted_by: str | None = None, **false: str) -> Json:
    """A Workload of LocalQueue team-a/batch with the conditions Kueue wrote: `true` types,
    and `false` types with their reason."""
    found = [{"type": c, "status": "True", "reason": c} for c in true]
    found += [{"type": c, "status": "False", "reason": r, "message": "m"} for c, r in false.items()]
    status: Json = {"conditions": found}
    if admitted_by:
        status["admission"] = {"clusterQueue": admitted_by}
    return {
        "metadata": {"namespace": "team-a", "name": name},
        "spec": {"queueName": "batch", "priority": 100},
        "status": status,
    }


def test_the_quota_of_each_flavor_shows_nominal_borrowing_and_lending() -> None:
    cq = {
        "metadata": {"name": "team-a-cq"},
        "spec": {
            "cohortName": "ai-shared",
            "stopPolicy": "Hold",
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "cpu-only",
                            "resources": [
                                {"name": "cpu", "nominalQuota": "64"},
                                {"name": "memory", "nominalQuota": "256Gi"},
                            ],
                        }
                    ],
                },
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {
                                    "name": "nvidia.com/gpu",
                                    "nominalQuota": "8",
                                    "borrowingLimit": "4",
                                    "lendingLimit": "2",
                                }
                            ],
                        },
                        {
                            "name": "h100",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "2"}],
                        },
                    ],
                },
            ],
        },
        "status": {"pendingWorkloads": 3, "admittedWorkloads": 1},
    }
    admitted = workload("train", QUOTA_RESERVED, ADMITTED, admitted_by="team-a-cq")
    live = LiveStatus(
        [cq],
        [
            {
                "metadata": {"namespace": "team-a", "name": "batch"},
                "spec": {"clusterQueue": "team-a-cq"},
            }
        ],
        [
            {"metadata": {"name": "team-a", "labels": {"platform.example.com/kueue": "enabled"}}},
            {"metadata": {"name": "sandbox"}},
        ],
        [admitted, *(workload(f"sweep-{i}") for i in range(3))],
    )
    lines = render_text(live, PROFILE).splitlines()
    assert "stopPolicy=Hold" in lines[3] and "pending=3 admitted=1" in lines[3]
    assert lines[4].strip() == (
        "cpu-only: cpu=64 memory=256Gi; a100: nvidia.com/gpu=8(+4)(lend 2); h100: nvidia.com/gpu=2"
    )
    assert any("team-a" in line and "ADMITS WORK" in line for line in lines)
    assert any("sandbox" in line and "no admission" in line for line in lines)


def test_workloads_count_per_queue_by_the_state_kueue_gave_them() -> None:
    queues = [
        {"metadata": {"namespace": "team-a", "name": "batch"}, "spec": {"clusterQueue": "a-cq"}},
        {"metadata": {"namespace": "team-a", "name": "idle"}, "spec": {"clusterQueue": "a-cq"}},
    ]
    live = LiveStatus(
        [{"metadata": {"name": "a-cq"}, "spec": {}}],
        queues,
        [],
        [
            # reserved by the queue that admitted it, even if its LocalQueue pointed elsewhere
            workload("running", QUOTA_RESERVED, ADMITTED, admitted_by="a-cq"),
            # preempted and requeued: evicted until Kueue reserves quota again
            workload("victim", EVICTED, QuotaReserved="Pending"),
            workload("waiting", QuotaReserved="Pending"),
            workload("done", QUOTA_RESERVED, ADMITTED, "Finished", admitted_by="a-cq"),
        ],
    )
    doc = to_json(live, PROFILE)
    counts = {"pending": 1, "admitted": 1, "evicted": 1, "finished": 1}
    expected = {s: counts.get(s, 0) for s in STATES}  # every state, zero or not
    assert doc["clusterQueues"][0]["workloads"] == expected
    assert doc["localQueues"][0]["workloads"] == expected
    assert set(doc["localQueues"][1]["workloads"].values()) == {0}
    states = {w["name"]: (w["state"], w["clusterQueue"]) for w in doc["workloads"]}
    assert states["waiting"] == ("pending", "a-cq")  # through its LocalQueue
    text = render_text(live, PROFILE)
    assert "pending=1 admitted=1 evicted=1 finished=1" in text
    assert "team-a/idle" in text and "pending=0 admitted=0 evicted=0" in text
    assert "Workloads (3 not finished):" in text and "done" not in text


def test_events_that_mention_kueue_are_kept_the_last_few_per_namespace() -> None:
    def event(ns: str, at: str, reason: str, **more: t.Any) -> Json:
        return {
            "metadata": {"namespace": ns, "name": f"{ns}.{at}"},
            "involvedObject": {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload"},
            "lastTimestamp": f"2026-12-01T10:00:0{at}Z",
            "reason": reason,
            "type": "Normal",
            **more,
        }

    on_a_job = {"involvedObject": {"apiVersion": "batch/v1", "kind": "Job"}}
    assert mentions_kueue(event("a", "1", "QuotaReserved"))
    by_kueue = {"reportingComponent": "batch/job-kueue-controller"}
    assert mentions_kueue(event("a", "1", "Started", **on_a_job, **by_kueue))
    assert mentions_kueue(event("a", "1", "Started", **on_a_job, source={"component": "kueue"}))
    by_kube = {"reportingComponent": "job-controller", "source": {"component": "job-controller"}}
    assert not mentions_kueue(event("a", "1", "Suspended", **on_a_job, **by_kube))
    live = LiveStatus([], [], [], [], [event("a", str(i), f"R{i}") for i in (3, 1, 2)])
    doc = to_json(live, PROFILE, events=2)
    assert [e["reason"] for e in doc["events"]["a"]] == ["R2", "R3"]  # the last two, in order
    assert doc["events"]["a"][0]["time"] == "2026-12-01T10:00:02Z"
    assert len(to_json(live, PROFILE, events=9)["events"]["a"]) == 3
    assert to_json(live, PROFILE, events=0)["events"] == {}
