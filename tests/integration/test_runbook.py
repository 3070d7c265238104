"""The runbook against a real API server: hold --apply stops admission live, export-workloads
snapshots Workloads that carry the status a real Kueue writes (through the status subresource)."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox
from tests.conftest import own_context, run_line
from tests.integration.runbook_repo import KUEUE, git, stop_policy, synced

Json = dict[str, t.Any]
NOW = "2026-11-29T18:00:00Z"


def test_hold_apply_stops_admission_live_and_an_argo_cd_sync_of_main_keeps_it_held(
    fresh_sandbox: Sandbox, repo_copy: Path
) -> None:
    git(repo_copy, "init", "-q", "-b", "main")
    git(repo_copy, "-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    git(repo_copy, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "base")
    git(repo_copy, "config", "user.email", "oncall@example.org")
    git(repo_copy, "config", "user.name", "On Call")
    cluster = synced(fresh_sandbox, repo_copy)
    base = Repository.open(repo_copy).load(["gpu-prod"]).for_cluster("gpu-prod")
    kubeconfig = str(fresh_sandbox.kubeconfig)

    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo_copy),
            "hold",
            "team-a-cq",
            "--cluster",
            "gpu-prod",
            "--apply",
            *own_context(kubeconfig),
        ]
    )
    assert result.exit_code == 0, result.output + result.stderr
    assert stop_policy(cluster, "team-a-cq") == "Hold"
    assert stop_policy(cluster, "team-b-cq") == "None"
    message = git(repo_copy, "log", "-1", "--format=%B")
    assert "Already applied to the live ClusterQueue on gpu-prod" in message
    assert git(repo_copy, "diff", "--name-only", "main", "HEAD") == (
        "clusters/gpu-prod/clusterqueues.yaml"
    )

    # Argo CD syncs main, which does not hold yet: its apply does not own stopPolicy, so the
    # hold stays until the pull request lands.
    assert [a.error for a in apply_all(cluster, base) if a.error] == []
    assert stop_policy(cluster, "team-a-cq") == "Hold"

    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo_copy),
            "resume",
            "team-a-cq",
            "--cluster",
            "gpu-prod",
            "--apply",
            *own_context(kubeconfig),
        ]
    )
    assert result.exit_code == 0, result.output + result.stderr
    assert stop_policy(cluster, "team-a-cq") == "None"
    assert git(repo_copy, "diff", "main", "HEAD") == ""


def unreachable(tmp_path: Path) -> Path:
    """A kubeconfig for a server nothing listens on."""
    path = tmp_path / "down.kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "down", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "x"}}],
                "contexts": [{"name": "down", "context": {"cluster": "down", "user": "u"}}],
                "current-context": "down",
            }
        )
    )
    return path


def test_hold_apply_on_an_unreachable_cluster_commits_nothing(
    repo_copy: Path, tmp_path: Path
) -> None:
    git(repo_copy, "init", "-q", "-b", "main")
    git(repo_copy, "-c", "user.email=a@b", "-c", "user.name=a", "add", ".")
    git(repo_copy, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "base")
    kubeconfig = unreachable(tmp_path)
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo_copy),
            "hold",
            "team-a-cq",
            "--cluster",
            "gpu-prod",
            "--apply",
            *own_context(kubeconfig),
        ]
    )
    assert result.exit_code == 3
    assert "unreachable" in result.stderr and "nothing committed" in result.stderr
    assert git(repo_copy, "branch", "--show-current") == "main"
    assert git(repo_copy, "status", "--porcelain", "--untracked-files=no") == ""


# -- export-workloads ---------------------------------------------------------------------------


def condition(kind: str, status: str, reason: str, message: str = "") -> Json:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message or reason,
        "lastTransitionTime": NOW,
    }


def admission(cq: str) -> Json:
    return {
        "clusterQueue": cq,
        "podSetAssignments": [
            {
                "name": "main",
                "flavors": {"cpu": "cpu-only"},
                "resourceUsage": {"cpu": "2"},
                "count": 1,
            }
        ],
    }


def create_workload(
    cluster: KubeCluster, name: str, priority: int, priority_class: str, status: Json | None
) -> Json:
    body = {
        "apiVersion": KUEUE,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {
            "queueName": "batch",
            "priority": priority,
            "priorityClassRef": {
                "group": "kueue.x-k8s.io",
                "kind": "WorkloadPriorityClass",
                "name": priority_class,
            },
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "busybox",
                                    "resources": {"requests": {"cpu": "2"}},
                                }
                            ],
                        }
                    },
                }
            ],
        },
    }
    created = cluster.create(body)
    if status is not None:  # as Kueue's controller writes it: through the status subresource
        path = cluster.path(KUEUE, "Workload", "team-a", name) + "/status"
        created = cluster.request(
            "PATCH", path, body={"status": status}, content_type="application/merge-patch+json"
        )
    return created


def preempted_by(preemptor: Json) -> str:
    # Kueue's wording, pkg/scheduler/preemption/preemption.go (v0.17)
    return (
        f"Preempted to accommodate a workload (UID: {preemptor['metadata']['uid']}, "
        "JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: "
        "/team-a-cq; preemptee path: /team-a-cq"
    )


@pytest.fixture
def workloads(fresh_sandbox: Sandbox, repo_copy: Path) -> KubeCluster:
    cluster = synced(fresh_sandbox, repo_copy)
    urgent = create_workload(
        cluster,
        "train-urgent",
        10000,
        "batch-critical",
        {
            "conditions": [
                condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved in team-a-cq"),
                condition("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
            "admission": admission("team-a-cq"),
        },
    )
    create_workload(
        cluster,
        "sweep-low",
        100,
        "batch-low",
        {
            "conditions": [
                condition("QuotaReserved", "False", "Pending", "Preempted"),
                condition("Evicted", "True", "Preempted", preempted_by(urgent)),
                condition("Preempted", "True", "InClusterQueue", preempted_by(urgent)),
            ],
            "schedulingStats": {
                "evictions": [{"reason": "Preempted", "underlyingCause": "", "count": 1}]
            },
            "requeueState": {"count": 1},
        },
    )
    gone = {"metadata": {"uid": "4b0c3a52-0000-4000-8000-000000000000"}}
    create_workload(
        cluster,
        "eval-old",
        1000,
        "batch-standard",
        {"conditions": [condition("Preempted", "True", "InClusterQueue", preempted_by(gone))]},
    )
    create_workload(cluster, "queued", 1000, "batch-standard", None)
    return cluster


def test_export_writes_every_workloads_state_and_who_preempted_whom(
    workloads: KubeCluster, fresh_sandbox: Sandbox, repo_copy: Path, tmp_path: Path
) -> None:
    out = tmp_path / "records"
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo_copy),
            "export-workloads",
            "--cluster",
            "gpu-prod",
            *own_context(fresh_sandbox.kubeconfig),
            "--out-dir",
            str(out),
        ]
    )
    assert result.exit_code == 0, result.output + result.stderr
    [written] = list(out.iterdir())
    assert written.name.startswith("workloads-gpu-prod-") and written.name.endswith("Z.json")
    assert "4 Workloads on gpu-prod" in result.output and "2 preemptions" in result.output
    snap = json.loads(written.read_text())
    assert snap["cluster"] == "gpu-prod"
    by_name = {w["name"]: w for w in snap["workloads"]}
    assert {n: w["state"] for n, w in by_name.items()} == {
        "train-urgent": "admitted",
        "sweep-low": "evicted",
        "eval-old": "pending",
        "queued": "pending",
    }
    urgent = by_name["train-urgent"]
    assert (urgent["queue"], urgent["clusterQueue"], urgent["priority"]) == (
        "batch",
        "team-a-cq",
        10000,
    )
    assert urgent["admission"]["podSetAssignments"][0]["flavors"] == {"cpu": "cpu-only"}
    low = by_name["sweep-low"]
    assert low["priorityClass"] == "batch-low"
    assert low["evictions"] == [{"reason": "Preempted", "underlyingCause": "", "count": 1}]
    assert {c["type"]: c["reason"] for c in low["conditions"]}["Evicted"] == "Preempted"
    assert low["preemption"]["reason"] == "InClusterQueue"

    audit = {p["victim"]: p for p in snap["preemptions"]}
    assert set(audit) == {"team-a/sweep-low", "team-a/eval-old"}
    assert audit["team-a/sweep-low"] | {"message": None, "at": None} == {
        "victim": "team-a/sweep-low",
        "victimPriority": 100,
        "clusterQueue": "batch",
        "reason": "InClusterQueue",
        "message": None,
        "at": None,
        "preemptorUid": urgent["uid"],
        "preemptor": "team-a/train-urgent",
        "preemptorPriority": 10000,
        "preemptorFound": True,
    }
    orphan = audit["team-a/eval-old"]
    assert (orphan["preemptorFound"], orphan["preemptorPriority"]) == (False, None)
    assert orphan["preemptorUid"] == "4b0c3a52-0000-4000-8000-000000000000"


def test_export_from_an_unreachable_cluster_fails_and_writes_nothing(
    repo_copy: Path, tmp_path: Path
) -> None:
    kubeconfig = unreachable(tmp_path)
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo_copy),
            "export-workloads",
            "--cluster",
            "gpu-prod",
            *own_context(kubeconfig),
            "--out-dir",
            str(tmp_path / "out"),
        ]
    )
    assert result.exit_code == 3
    assert "gpu-prod" in result.stderr
    assert not (tmp_path / "out").exists()
