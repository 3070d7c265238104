"""The runbook's repo under git, applied to a sandbox, and a ClusterQueue's live stopPolicy."""

from __future__ import annotations

import subprocess
from pathlib import Path

from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox

KUEUE = "kueue.x-k8s.io/v1beta2"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def synced(box: Sandbox, repo: Path) -> KubeCluster:
    """The sandbox with the repo's gpu-prod manifests applied, as Argo CD would."""
    cluster = box.connect()
    resources = Repository.open(repo).load(["gpu-prod"]).for_cluster("gpu-prod")
    assert [a.error for a in apply_all(cluster, resources) if a.error] == []
    return cluster


def stop_policy(cluster: KubeCluster, name: str) -> str:
    """The live value; the CRD defaults an absent stopPolicy to None."""
    return str(cluster.get(KUEUE, "ClusterQueue", name)["spec"].get("stopPolicy", "None"))
