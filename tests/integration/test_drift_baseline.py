"""`drift --baseline` against a real kube-apiserver: a running estate's differences (a quota
changed by hand, a LocalQueue made with kubectl) recorded once; from then on only new drift
fails, and what was put right leaves the file when it is written again."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import run_line, start_sandbox
from tests.integration.drift_live import (
    CLUSTER,
    KUEUE,
    drift_json,
    gpu,
    repo_body,
    servable_repo,
    sync,
)

Json = dict[str, t.Any]
GPU_QUOTA = "spec.resourceGroups[0].flavors[a100].resources[nvidia.com/gpu].nominalQuota"


@pytest.fixture
def estate(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path: Path
) -> t.Iterator[tuple[Sandbox, Path]]:
    """A cluster synced from the repository, then changed by hand as a running estate is."""
    box = start_sandbox(toolchain, sandboxes_dir, "drift-baseline")
    try:
        repo = servable_repo(tmp_path / "repo", box.connect())
        sync(box, repo)
        cluster = box.connect()
        spec = repo_body(repo, "ClusterQueue", "team-a-cq")["spec"]
        gpu(spec, "a100")["nominalQuota"] = "20"
        cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": spec}, manager="kubectl-edit")
        cluster.create(local_queue("side-door"))
        yield box, repo
    finally:
        box.down()


def local_queue(name: str) -> Json:
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": {"clusterQueue": "team-b-cq"},
    }


def counted(report: Json) -> list[tuple[str, str, str | None]]:
    return [
        (f["change"], f["name"], f["path"])
        for f in report["findings"]
        if f["severity"] == "error" and "suppressed" not in f
    ]


def test_drift_recorded_in_a_baseline_fails_nothing_and_new_drift_does(
    estate: tuple[Sandbox, Path],
) -> None:
    box, repo = estate
    cluster: KubeCluster = box.connect()
    file = repo / "drift-baseline.yaml"
    code, report = drift_json(repo, box.kubeconfig)
    assert code == 1
    assert sorted(counted(report)) == [
        ("modified", "team-a-cq", GPU_QUOTA),
        ("unmanaged", "side-door", None),
    ]

    code, report = drift_json(repo, box.kubeconfig, "--baseline", str(file), "--write-baseline")
    assert (code, report["baseline"]["baselined"], report["baseline"]["written"]) == (0, 2, True)
    entries = yaml.safe_load(file.read_text())
    assert entries["command"] == "drift"
    assert {(e["rule"], e["name"]) for e in entries["findings"]} == {
        ("drift-quota", "team-a-cq"),
        ("drift-quota", "side-door"),
    }

    # The quota drifts further (still the same field): still baselined. A new LocalQueue fails.
    spec = repo_body(repo, "ClusterQueue", "team-a-cq")["spec"]
    gpu(spec, "a100")["nominalQuota"] = "24"
    cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": spec}, manager="kubectl-edit")
    cluster.create(local_queue("back-door"))
    code, report = drift_json(repo, box.kubeconfig, "--baseline", str(file))
    assert code == 1
    assert counted(report) == [("unmanaged", "back-door", None)]
    assert sorted((f["name"], f["baselineState"]) for f in report["findings"]) == [
        ("back-door", "new"),
        ("side-door", "unchanged"),
        ("team-a-cq", "unchanged"),
    ]

    # Both LocalQueues deleted: one entry matches nothing now; written again, it is dropped.
    cluster.delete(KUEUE, "LocalQueue", "back-door", "team-a")
    cluster.delete(KUEUE, "LocalQueue", "side-door", "team-a")
    code, report = drift_json(repo, box.kubeconfig, "--baseline", str(file))
    assert (code, report["baseline"]["baselined"], report["baseline"]["absent"]) == (0, 1, 1)
    code, report = drift_json(repo, box.kubeconfig, "--baseline", str(file), "--write-baseline")
    assert (code, report["baseline"]["absent"]) == (0, 1)
    assert [e["name"] for e in yaml.safe_load(file.read_text())["findings"]] == ["team-a-cq"]

    # validate's findings are not drift's: it refuses drift's file rather than misread it.
    refused = run_line(["kueue-gitops", "--repo", str(repo), "validate", "--baseline", str(file)])
    assert refused.exit_code == 2
    assert f"{file}:" in refused.stderr and "a baseline of `drift`" in refused.stderr
    assert CLUSTER in {e["cluster"] for e in yaml.safe_load(file.read_text())["findings"]}
