from __future__ import annotations

import os
import time
import typing as t
from pathlib import Path

import pytest

from auditor.errors import ClusterAccessError
from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import ROOT


def repo_kueue_config(cluster: str) -> dict[str, t.Any] | None:
    """The Kueue Configuration clusters/<cluster>/kueue/ holds: what a sandbox's Kueue runs."""
    return boundaries.kueue_configuration(Repository.open(ROOT), cluster)


PAUSE = {"name": "c", "image": "registry.k8s.io/pause:3.10"}


def wait_until_policies_hold(cluster: KubeCluster, timeout: float = 30.0) -> None:
    """A synced ValidatingAdmissionPolicy holds once the API server has compiled it and its
    binding (a second or so): until then a tenant's Job without a queue name gets through."""
    tenant = cluster.impersonating("kueue-gitops-sync-check", ["example-org:team-a"])
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "sync-check", "namespace": "team-a"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [PAUSE]}}},
    }
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            tenant.request(
                "POST",
                tenant.path("batch/v1", "Job", "team-a"),
                query=[("dryRun", "All")],
                body=job,
            )
        except ClusterAccessError as exc:
            if "ValidatingAdmissionPolicy" in str(exc):
                return
        time.sleep(0.25)
    pytest.fail(f"the admission policies did not hold within {timeout:.0f}s of the sync")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def kueue_sandbox(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    """A sandbox running Kueue (from the repo's Configuration) and kube-controller-manager,
    synced from clusters/gpu-staging: its admission policies hold there."""
    box = Sandbox(f"gpu-staging-{os.getpid()}", root=sandboxes_dir)
    try:
        box.up(toolchain, with_kueue=True, kueue_config=repo_kueue_config("gpu-staging"))
    except Exception as exc:
        pytest.fail(f"the Kueue sandbox could not start: {exc}", pytrace=False)
    try:
        loaded = Repository.open(ROOT).load(["gpu-staging"])
        results = apply_all(box.connect(), loaded.for_cluster("gpu-staging"))
        assert [(str(r.resource.key), r.error) for r in results if r.error] == []
        wait_until_policies_hold(box.connect())
        yield box
    finally:
        box.down()
