"""The preemption ledger from a real preemption on the Kueue sandbox: team-b reclaims what team-a
borrowed, the victim is stopped on its simulated node, comes back, finishes; the ledger says so."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest

from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.integration.checkpointed_jobs import job
from tests.integration.waiting import eventually


def succeeded(cluster: KubeCluster, namespace: str, name: str) -> bool:
    found = cluster.get("batch/v1", "Job", name, namespace)
    return bool((found.get("status") or {}).get("succeeded"))


@pytest.fixture(scope="module")
def preempted(kueue_sandbox: Sandbox) -> t.Iterator[KubeCluster]:
    """team-a fills its quota and borrows 2 GPUs at batch-low; team-b then claims its own 3
    at batch-standard: Kueue reclaims, evicting borrowing team-a work. Everything finishes."""
    cluster = kueue_sandbox.connect()
    made = [("team-a", f"train-{i}") for i in range(6)] + [("team-b", "urgent")]
    try:
        for namespace, name in made[:-1]:
            cluster.create(job(namespace, name, "batch-low", 1, 15))

        def running() -> int:
            pods = cluster.list_in("v1", "Pod", "team-a")
            return sum(p["status"].get("phase") == "Running" for p in pods)

        eventually(lambda: running() == 6, what="team-a's 6 Pods Running", seen=running)
        cluster.create(job("team-b", "urgent", "batch-standard", 3, 4))

        def unfinished() -> list[str]:
            return [f"{ns}/{name}" for ns, name in made if not succeeded(cluster, ns, name)]

        eventually(
            lambda: not unfinished(), what="every Job succeeded", seconds=120, seen=unfinished
        )
        yield cluster
    finally:
        for namespace, name in made:
            cluster.delete("batch/v1", "Job", name, namespace, propagation="Background")

        # later tests (verify) size their probes from the queues' usage: wait until it is free
        def left() -> list[str]:
            return [
                f"{ns}/{w['metadata']['name']}"
                for ns in ("team-a", "team-b")
                for w in cluster.list_in("kueue.x-k8s.io/v1beta2", "Workload", ns)
            ]

        eventually(lambda: not left(), what="team-a's and team-b's Workloads gone", seen=left)


def ledger(box: Sandbox, *extra: str) -> t.Any:
    return run_line(
        ["kueue-gitops", "--repo", str(ESTATE), "preemptions", "--cluster", "gpu-staging",
         *own_context(box.kubeconfig), "--since", "1h", *extra]
    )  # fmt: skip


def test_the_ledger_names_each_victim_its_preemptor_reason_and_recovery(
    preempted: KubeCluster, kueue_sandbox: Sandbox
) -> None:
    result = ledger(kueue_sandbox, "-o", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    mine = [p for p in doc["preemptions"] if p["victim"].startswith("team-a/")]
    assert mine, doc["preemptions"]
    for entry in mine:
        assert entry["kind"] == "preemption"
        assert (entry["clusterQueue"], entry["priority"]) == ("team-a-cq", 100)
        assert entry["reason"] == "InCohortReclamation"
        assert entry["preemptor"].startswith("team-b/") and entry["preemptorPriority"] == 1000
        assert entry["job"].startswith("train-")
        assert entry["recovery"] == {
            "checkpoint": f"s3://checkpoints/team-a/{entry['job']}/latest",
            "readmitted": True,
            "completed": True,
            "state": "finished",
        }
    assert {"clusterQueue": "team-a-cq", "kind": "preemption",
            "reason": "InCohortReclamation", "count": len(mine)} in doc["counts"]  # fmt: skip


def test_markdown_and_metrics_say_the_same(
    preempted: KubeCluster, kueue_sandbox: Sandbox, tmp_path: Path
) -> None:
    metrics = tmp_path / "ledger.prom"
    result = ledger(kueue_sandbox, "-o", "markdown", "--metrics-file", str(metrics))
    assert result.exit_code == 0, result.output
    assert "| Time | Victim | ClusterQueue | Priority | Reason | Preemptor | Recovery |" in (
        result.stdout
    )
    assert "| team-a-cq | 100 | InCohortReclamation | team-b/" in result.stdout
    assert "completed; checkpoint s3://checkpoints/team-a/train-" in result.stdout
    text = metrics.read_text()
    assert (
        'kueue_gitops_ledger_evictions{cluster="gpu-staging",cluster_queue="team-a-cq",'
        'kind="preemption",reason="InCohortReclamation"}' in text
    )
    assert (
        'kueue_gitops_ledger_unrecovered_victims{cluster="gpu-staging",cluster_queue="team-a-cq",'
        'kind="preemption",reason="InCohortReclamation"} 0.0' in text
    )


def test_an_unreachable_cluster_is_incomplete(tmp_path: Path) -> None:
    down = tmp_path / "down.kubeconfig"
    down.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: gpu-staging\n"
        "clusters: [{name: d, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: x}}]\n"
        "contexts: [{name: gpu-staging, context: {cluster: d, user: u}}]\n"
    )
    result = run_line(
        ["kueue-gitops", "--repo", str(ESTATE), "preemptions", "--cluster", "gpu-staging",
         "--kubeconfig", str(down), "--timeout", "5", "-o", "json"]
    )  # fmt: skip
    assert result.exit_code == 3
    assert json.loads(result.stdout)["status"] == "incomplete"
