"""`plan diff --live` against a real kube-apiserver holding Workloads whose status this test writes.

No Kueue runs here: the test writes each Workload's admission and conditions itself, in the
shape Kueue's scheduler writes them, so that admission times are fixed to the second and the
order in which a cut exposes Workloads is known. test_plan_live_cohort.py runs the same judgement
on Workloads a real Kueue admitted.
"""

from __future__ import annotations

import json
import os
import typing as t
from pathlib import Path

import pytest

from auditor.errors import ClusterAccessError
from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import own_context, run_line, start_sandbox
from tests.estate import ESTATE
from tests.unit.conftest import Revisions

KUEUE = "kueue.x-k8s.io/v1beta2"
CQS = "clusters/gpu-prod/clusterqueues.yaml"
A100_GPU = 'nominalQuota: "16"\n              borrowingLimit: "8"\n              lendingLimit: "8"'


def _condition(kind: str, reason: str, at: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": "",
        "lastTransitionTime": at,
    }


def _workload(
    cluster: KubeCluster, ns: str, name: str, priority: int, gpus: int, admitted_at: str | None
) -> None:
    """A Workload as a Job's controller creates it, then (written here, at `admitted_at`) the
    admission and conditions Kueue's scheduler would write."""
    cluster.create(
        {
            "apiVersion": KUEUE,
            "kind": "Workload",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "queueName": "batch",
                "priority": priority,
                "priorityClassRef": {
                    "group": "kueue.x-k8s.io",
                    "kind": "WorkloadPriorityClass",
                    "name": "batch-low" if priority < 1000 else "batch-standard",
                },
                "podSets": [
                    {
                        "name": "main",
                        "count": 1,
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "train",
                                        "image": "trainer:1",
                                        "resources": {"requests": {"nvidia.com/gpu": str(gpus)}},
                                    }
                                ]
                            }
                        },
                    }
                ],
            },
        }
    )
    if admitted_at is None:
        return
    status = {
        "status": {
            "admission": {
                "clusterQueue": f"{ns}-cq",
                "podSetAssignments": [
                    {
                        "name": "main",
                        "count": 1,
                        "flavors": {"nvidia.com/gpu": "a100"},
                        "resourceUsage": {"nvidia.com/gpu": str(gpus)},
                    }
                ],
            },
            "conditions": [
                _condition("QuotaReserved", "QuotaReserved", admitted_at),
                _condition("Admitted", "Admitted", admitted_at),
            ],
        }
    }
    path = cluster.path(KUEUE, "Workload", ns, name) + "/status"
    cluster.request("PATCH", path, body=status, content_type="application/merge-patch+json")


@pytest.fixture(scope="module")
def busy_cluster(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    """gpu-prod synced from the repo; team-a runs 14 a100 GPUs in three Workloads, one pending."""
    box = start_sandbox(toolchain, sandboxes_dir, f"plan-{os.getpid()}")
    try:
        _fill(box.connect())
        yield box
    finally:
        box.down()


def _fill(cluster: KubeCluster) -> None:
    resources = [
        r
        for r in Repository.open(ESTATE).load(["gpu-prod"]).for_cluster("gpu-prod")
        if r.key.group in ("", "kueue.x-k8s.io", "rbac.authorization.k8s.io", "scheduling.k8s.io")
    ]
    assert [r.error for r in apply_all(cluster, resources) if r.error] == []
    _workload(cluster, "team-a", "steady", 1000, 4, "2026-11-29T09:00:00Z")
    _workload(cluster, "team-a", "sweep", 100, 8, "2026-11-29T10:00:00Z")
    _workload(cluster, "team-a", "late-sweep", 100, 2, "2026-11-29T11:00:00Z")
    _workload(cluster, "team-a", "queued", 100, 4, None)
    usage = [
        {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "total": "14", "borrowed": "0"}]}
    ]
    cluster.request(
        "PATCH",
        cluster.path(KUEUE, "ClusterQueue", None, "team-a-cq") + "/status",
        body={
            "status": {
                "flavorsReservation": usage,
                "flavorsUsage": usage,
                "admittedWorkloads": 3,
                "reservingWorkloads": 3,
                "pendingWorkloads": 1,
            }
        },
        content_type="application/merge-patch+json",
    )


@pytest.fixture
def revs(repo_copy: Path) -> t.Iterator[Revisions]:
    revisions = Revisions(repo_copy)
    revisions.commit("base")
    revisions.repo.create_tag("base")
    yield revisions
    revisions.repo.close()


def live_plan(revs: Revisions, box: Sandbox, *extra: str) -> tuple[int, dict[str, t.Any]]:
    head = revs.commit("change")
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(revs.root),
            "plan",
            "diff",
            "--base",
            "base",
            "--head",
            head,
            "--live",
            *own_context(box.kubeconfig),
            "--cluster",
            "gpu-prod",
            *extra,
            "-o",
            "json",
        ]
    )
    return result.exit_code, json.loads(result.output)


def test_quota_cut_below_use_warns_how_much_and_who_is_exposed_first(
    revs: Revisions, busy_cluster: Sandbox
) -> None:
    revs.edit(CQS, A100_GPU, A100_GPU.replace('"16"', '"8"'))
    code, doc = live_plan(revs, busy_cluster)
    assert (code, doc["status"]) == (0, "clean")  # a warning: the reviewer decides
    [warning] = doc["findings"]
    assert warning["rule"] == "plan-quota-below-usage" and warning["severity"] == "warning"
    assert (warning["inUse"], warning["over"]) == ("14", "6")
    # Kueue's victim order: lowest priority first, most recently admitted first among equals.
    assert [w["name"] for w in warning["exposedWorkloads"]] == ["late-sweep", "sweep"]
    assert "16 → 8 is below the 14 in use (6 over)" in warning["message"]
    assert "reclaimed by team-b-cq (reclaimWithinCohort: LowerPriority)" in warning["message"]
    assert "withinClusterQueue: LowerPriority" in warning["message"]
    assert warning["file"] == CQS and warning["line"] == revs.line_of(
        CQS, 'nominalQuota: "8"', "a100"
    )


def test_quota_cut_that_still_covers_use_is_quiet(revs: Revisions, busy_cluster: Sandbox) -> None:
    revs.edit(CQS, A100_GPU, A100_GPU.replace('"16"', '"14"'))
    code, doc = live_plan(revs, busy_cluster)
    assert (code, doc["findings"], len(doc["changes"])) == (0, [], 1)


def test_removing_a_local_queue_with_workloads_says_hold_first(
    revs: Revisions, busy_cluster: Sandbox
) -> None:
    (revs.root / "tenants/team-a/gpu-prod/localqueues.yaml").unlink()
    (revs.root / "tenants/team-b/gpu-prod/localqueues.yaml").unlink()  # idle: still an error
    code, doc = live_plan(revs, busy_cluster)
    assert (code, doc["status"]) == (1, "findings")
    error, idle = sorted(doc["findings"], key=lambda f: f["namespace"])
    assert (idle["rule"], idle["namespace"], idle["name"]) == (
        "plan-removes-queue",
        "team-b",
        "batch",
    )
    assert idle["message"].endswith("(live: it holds no Workloads now)")
    assert (error["rule"], error["namespace"], error["name"]) == (
        "plan-removes-queue-in-use",
        "team-a",
        "batch",
    )
    assert "3 admitted and 1 pending Workloads" in error["message"]
    assert (
        "hold admission first (`kueue-gitops hold team-a-cq --cluster gpu-prod`)"
        in error["message"]
    )
    assert {w["name"] for w in error["workloads"]} == {"steady", "sweep", "late-sweep", "queued"}


def test_removing_admission_or_the_cluster_queue_in_use_is_an_error(
    revs: Revisions, busy_cluster: Sandbox
) -> None:
    for team in ("team-a", "team-b"):
        revs.edit(
            f"tenants/{team}/gpu-prod/namespace.yaml",
            "platform.example.com/kueue: enabled",
            "platform.example.com/kueue: disabled",
        )
    revs.edit(CQS, "name: team-a-cq", "name: team-a-cq-v2")
    code, doc = live_plan(revs, busy_cluster)
    assert code == 1
    got = {(f["rule"], f["kind"], f["name"]) for f in doc["findings"]}
    assert got == {
        ("plan-admission-in-use", "Namespace", "team-a"),
        ("plan-removes-queue-in-use", "ClusterQueue", "team-a-cq"),
    }


def test_markdown_comment_shows_the_live_findings(revs: Revisions, busy_cluster: Sandbox) -> None:
    (revs.root / "tenants/team-a/gpu-prod/localqueues.yaml").unlink()
    head = revs.commit("drop team-a queue")
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(revs.root),
            "plan",
            "diff",
            "--base",
            "base",
            "--head",
            head,
            "--live",
            *own_context(busy_cluster.kubeconfig),
            "--cluster",
            "gpu-prod",
            "-o",
            "markdown",
        ]
    )
    assert result.exit_code == 1
    assert result.output.startswith("<!-- kueue-gitops-plan -->\n### ❌ kueue-gitops plan:")
    assert "- ❌ **error** (`tenants/team-a/gpu-prod/localqueues.yaml:2`)" in result.output
    assert "_Checked against live usage._" in result.output


def test_unreachable_cluster_is_incomplete_never_clean(
    revs: Revisions, busy_cluster: Sandbox, tmp_path: Path
) -> None:
    dead = tmp_path / "dead.kubeconfig"
    dead.write_text(
        busy_cluster.kubeconfig.read_text().replace(busy_cluster.server, "https://127.0.0.1:9")
    )
    revs.edit(CQS, A100_GPU, A100_GPU.replace('"16"', '"8"'))
    head = revs.commit("cut")
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(revs.root),
            "plan",
            "diff",
            "--base",
            "base",
            "--head",
            head,
            "--live",
            *own_context(dead),
            "--cluster",
            "gpu-prod",
            "-o",
            "json",
        ]
    )
    doc = json.loads(result.output)
    assert (result.exit_code, doc["status"]) == (3, "incomplete")
    [prod] = [c for c in doc["clusters"] if c["name"] == "gpu-prod"]
    assert prod["status"] == "incomplete" and "unreachable" in prod["errors"][0]


def test_the_field_plan_calls_immutable_is_refused_by_the_real_api_server(
    busy_cluster: Sandbox,
) -> None:
    moved = {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": "batch", "namespace": "team-a"},
        "spec": {"clusterQueue": "team-b-cq"},
    }
    with pytest.raises(ClusterAccessError, match="immutable"):
        busy_cluster.connect().apply(moved, manager="argocd-controller")
