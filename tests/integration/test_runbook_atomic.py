"""`hold --apply` over two real clusters patches both or neither, and commits only then.

gpu-prod and gpu-staging are two sandboxes reached through one kubeconfig (KUBECONFIG), each by
its profile's context. gpu-staging fails in two ways: it is down before the run (the check
before patching catches it), or its admission refuses the patch once gpu-prod already took it
(a ValidatingAdmissionPolicy, as a policy engine would), so gpu-prod is put back.
"""

from __future__ import annotations

import shutil
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.errors import ClusterAccessError
from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import run_line, start_sandbox
from tests.integration.runbook_repo import KUEUE, git, stop_policy
from tests.integration.waiting import eventually

ADMISSION = "admissionregistration.k8s.io/v1"


@pytest.fixture
def clusters(
    toolchain: Toolchain, sandboxes_dir: Path, repo_copy: Path, tmp_path: Path
) -> t.Iterator[tuple[Path, dict[str, Sandbox], Path]]:
    """A repo of two clusters, their sandboxes synced from it, a kubeconfig with both contexts."""
    only_clusters(repo_copy, ("gpu-prod", "gpu-staging"))
    git(repo_copy, "init", "-q", "-b", "main")
    git(repo_copy, "config", "user.email", "oncall@example.org")
    git(repo_copy, "config", "user.name", "On Call")
    git(repo_copy, "add", ".")
    git(repo_copy, "commit", "-qm", "base")
    boxes: dict[str, Sandbox] = {}
    try:
        for name in ("gpu-prod", "gpu-staging"):
            boxes[name] = box = start_sandbox(toolchain, sandboxes_dir, f"atomic-{name}")
            resources = Repository.open(repo_copy).load([name]).for_cluster(name)
            assert [a.error for a in apply_all(box.connect(), resources) if a.error] == []
        yield repo_copy, boxes, merged(boxes, tmp_path / "kubeconfig")
    finally:
        for box in boxes.values():
            box.down()


def only_clusters(repo: Path, keep: tuple[str, ...]) -> None:
    """Drop every other cluster from a repo copy: its folder, tenant folders and profile entries."""
    for folder in (repo / "clusters").iterdir():
        if folder.is_dir() and folder.name not in keep:
            shutil.rmtree(folder)
    for tenant in (repo / "tenants").iterdir():
        for folder in tenant.iterdir():
            if folder.is_dir() and folder.name not in keep:
                shutil.rmtree(folder)
        profile = tenant / "profile.yaml"
        doc = yaml.safe_load(profile.read_text())
        doc["spec"]["clusters"] = {k: v for k, v in doc["spec"]["clusters"].items() if k in keep}
        profile.write_text(yaml.safe_dump(doc, sort_keys=False))


def merged(boxes: dict[str, Sandbox], path: Path) -> Path:
    doc: dict[str, t.Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "users": []}
    doc["contexts"] = []
    for name, box in boxes.items():
        one = yaml.safe_load(box.kubeconfig.read_text())
        doc["clusters"] += [{**one["clusters"][0], "name": name}]
        doc["users"] += [{**one["users"][0], "name": name}]
        doc["contexts"] += [{"name": name, "context": {"cluster": name, "user": name}}]
    doc["current-context"] = "gpu-prod"
    path.write_text(yaml.safe_dump(doc))
    return path


def hold(repo: Path, kubeconfig: Path) -> t.Any:
    return run_line(
        ["kueue-gitops", "--repo", str(repo), "hold", "team-a-cq", "--apply", "--timeout", "20"],
        env={"KUBECONFIG": str(kubeconfig)},
    )


def nothing_committed(repo: Path) -> None:
    assert git(repo, "branch", "--show-current") == "main"
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_cluster_down_before_the_run_means_nothing_is_patched(
    clusters: tuple[Path, dict[str, Sandbox], Path],
) -> None:
    repo, boxes, kubeconfig = clusters
    prod = boxes["gpu-prod"].connect()
    boxes["gpu-staging"].down()
    result = hold(repo, kubeconfig)
    assert result.exit_code == 3
    assert "gpu-staging" in result.stderr and "unreachable" in result.stderr
    assert "nothing patched, nothing committed" in result.stderr
    assert stop_policy(prod, "team-a-cq") == "None"
    nothing_committed(repo)


def refuse_holds(cluster: KubeCluster) -> None:
    """A ValidatingAdmissionPolicy that refuses stopPolicy Hold on ClusterQueues; returns once
    the API server enforces it (policies take a moment to load)."""
    rule = {
        "apiGroups": ["kueue.x-k8s.io"],
        "apiVersions": ["*"],
        "operations": ["UPDATE"],
        "resources": ["clusterqueues"],
    }
    cluster.create(
        {
            "apiVersion": ADMISSION,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "change-freeze"},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [rule]},
                "validations": [
                    {
                        "expression": "object.spec.?stopPolicy.orValue('None') != 'Hold'",
                        "message": "change freeze: no holds",
                    }
                ],
            },
        }
    )
    cluster.create(
        {
            "apiVersion": ADMISSION,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": "change-freeze"},
            "spec": {"policyName": "change-freeze", "validationActions": ["Deny"]},
        }
    )
    path = cluster.path(KUEUE, "ClusterQueue", name="team-a-cq")

    def refused() -> bool:
        try:
            cluster.request(
                "PATCH",
                path,
                query=[("dryRun", "All")],
                body={"spec": {"stopPolicy": "Hold"}},
                content_type="application/merge-patch+json",
            )
        except ClusterAccessError as exc:
            if "change freeze" in str(exc):
                return True
            raise
        return False

    eventually(refused, what="the change-freeze admission policy refusing a patch", seconds=30)


def test_a_patch_refused_on_the_second_cluster_is_undone_on_the_first(
    clusters: tuple[Path, dict[str, Sandbox], Path],
) -> None:
    repo, boxes, kubeconfig = clusters
    prod, staging = boxes["gpu-prod"].connect(), boxes["gpu-staging"].connect()
    refuse_holds(staging)
    result = hold(repo, kubeconfig)
    assert result.exit_code == 3
    assert "change freeze: no holds" in result.stderr
    assert "undone on gpu-prod; nothing is changed live and nothing committed" in result.stderr
    assert stop_policy(prod, "team-a-cq") == "None"
    assert stop_policy(staging, "team-a-cq") == "None"
    nothing_committed(repo)


def test_both_clusters_answering_are_both_held_and_committed(
    clusters: tuple[Path, dict[str, Sandbox], Path],
) -> None:
    repo, boxes, kubeconfig = clusters
    result = hold(repo, kubeconfig)
    assert result.exit_code == 0, result.stderr
    for box in boxes.values():
        assert stop_policy(box.connect(), "team-a-cq") == "Hold"
    assert git(repo, "branch", "--show-current").startswith("hold/team-a-cq-")
