"""upgrade-check on real sandboxes of the estate's three releases, each checked against the
others' CRDs as built from their pinned modules: gpu-prod v0.17.0 up to v0.19.2, gpu-staging
v0.19.2 back to v0.17.0 (and to v0.9.1, which cannot read what it stores), gpu-legacy v0.9.1
up to v0.17.0."""

from __future__ import annotations

import json
import os
import re
import signal
import typing as t
from pathlib import Path

import pytest

from auditor.sandbox import Sandbox, Toolchain, releases
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.integration.checkpointed_jobs import job
from tests.integration.conftest import synced_kueue_sandbox
from tests.integration.waiting import eventually

Json = dict[str, t.Any]


def upgrade_check(box: Sandbox, cluster: str, to: str, repo: Path = ESTATE) -> tuple[int, Json]:
    result = run_line(
        ["kueue-gitops", "--repo", str(repo), "upgrade-check", "--cluster", cluster, "--to", to,
         *own_context(box.kubeconfig), "-o", "json"]
    )  # fmt: skip
    return result.exit_code, json.loads(result.stdout)


def rules(doc: Json) -> dict[str, list[Json]]:
    out: dict[str, list[Json]] = {}
    for f in doc["findings"]:
        out.setdefault(f["rule"], []).append(f)
    return out


@pytest.fixture(scope="module")
def prod_sandbox(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    """gpu-prod with Kueue v0.17.0, synced."""
    box = synced_kueue_sandbox(toolchain, sandboxes_dir / "prod", "gpu-prod")
    yield box
    box.down()


def test_a_healthy_cluster_is_ready_for_its_own_release(kueue_sandbox: Sandbox) -> None:
    code, doc = upgrade_check(kueue_sandbox, "gpu-staging", "v0.19.2")
    assert (code, doc["findings"]) == (0, [])
    assert doc["upgrade"]["direction"] == "same"
    assert doc["upgrade"]["storedVersions"]["clusterqueues.kueue.x-k8s.io"] == ["v1beta2"]


def test_prod_may_move_up_to_0_19_2(prod_sandbox: Sandbox) -> None:
    code, doc = upgrade_check(prod_sandbox, "gpu-prod", "v0.19.2")
    assert doc["upgrade"]["direction"] == "upgrade"
    assert (doc["upgrade"]["from"], doc["upgrade"]["to"]) == ("v0.17.0", "v0.19.2")
    # Both store v1beta2 and serve v1beta1 beside it: nothing to migrate, nothing unserved.
    assert doc["upgrade"]["storedVersions"]["clusterqueues.kueue.x-k8s.io"] == ["v1beta2"]
    assert doc["upgrade"]["targetServes"]["clusterqueues.kueue.x-k8s.io"] == ["v1beta1", "v1beta2"]
    assert (code, doc["findings"]) == (0, [])


def test_staging_may_roll_back_to_0_17_0(kueue_sandbox: Sandbox) -> None:
    code, doc = upgrade_check(kueue_sandbox, "gpu-staging", "v0.17.0")
    assert doc["upgrade"]["direction"] == "rollback"
    assert (doc["upgrade"]["from"], doc["upgrade"]["to"]) == ("v0.19.2", "v0.17.0")
    assert (code, doc["findings"]) == (0, [])


def test_a_rollback_to_a_release_that_cannot_read_what_etcd_stores_is_refused(
    kueue_sandbox: Sandbox,
) -> None:
    code, doc = upgrade_check(kueue_sandbox, "gpu-staging", "v0.9.1")
    assert code == 1
    assert doc["upgrade"]["direction"] == "rollback"
    found = rules(doc)
    unserved = {f["kind"] for f in found["upgrade-stored-version-unserved"]}
    assert {"ClusterQueue", "LocalQueue", "Workload", "ResourceFlavor"} <= unserved
    [cq] = [f for f in found["upgrade-stored-version-unserved"] if f["kind"] == "ClusterQueue"]
    assert (
        "clusterqueues.kueue.x-k8s.io stores v1beta2, which Kueue v0.9.1 does not serve"
        in (cq["message"])
    )
    assert (cq["desired"], cq["live"]) == (["v1beta1"], ["v1beta2"])
    # and the repository's v1beta2 manifests could not be synced after it
    files = {f["file"] for f in found["upgrade-repo-version-unserved"]}
    assert "clusters/gpu-staging/clusterqueues.yaml" in files


def test_the_legacy_cluster_lists_what_the_upgrade_to_0_17_changes(legacy_sandbox: Sandbox) -> None:
    code, doc = upgrade_check(legacy_sandbox, "gpu-legacy", "v0.17.0")
    assert doc["upgrade"]["direction"] == "upgrade"
    assert doc["upgrade"]["from"] == "v0.9.1"
    found = rules(doc)
    # Cohort (and Topology) are v1alpha1 in v0.9.1; v0.17.0 serves v1beta1 and v1beta2 only.
    # No Cohort is stored, so dropping v1alpha1 from storedVersions is all it takes.
    [cohorts] = [f for f in found["upgrade-stored-version-unserved"] if f["kind"] == "Cohort"]
    assert "cohorts.kueue.x-k8s.io stores v1alpha1" in cohorts["message"]
    assert "0 Cohort object(s) exist: none to migrate" in cohorts["message"]
    assert code == 1
    # The stored v1beta1 objects stay readable, and are to be migrated to v1beta2.
    migrate = {f["kind"]: f["message"] for f in found["upgrade-stored-objects-to-migrate"]}
    assert "2 ClusterQueue object(s) exist and may be stored as v1beta1" in migrate["ClusterQueue"]
    assert "Kueue v0.17.0 stores v1beta2" in migrate["ClusterQueue"]
    # Every v1beta1 manifest of the repository is to be rewritten for v1beta2.
    deprecated = {(f["file"], f["kind"]) for f in found["upgrade-repo-version-deprecated"]}
    assert ("clusters/gpu-legacy/clusterqueues.yaml", "ClusterQueue") in deprecated
    assert ("tenants/team-a/gpu-legacy/localqueues.yaml", "LocalQueue") in deprecated
    assert all(f["severity"] == "warning" for f in found["upgrade-repo-version-deprecated"])
    assert "upgrade-webhook-down" not in found and "upgrade-controller-not-ready" not in found


def test_a_rollback_names_admitted_work_without_recovery_evidence(
    kueue_sandbox: Sandbox, repo_copy: Path, toolchain: Toolchain
) -> None:
    # TARGET as a folder of CRDs this time: the v0.9.1 bundle `sandbox build` keeps.
    bundle = str(releases.release(toolchain, "v0.9.1").root / "crds")
    profile = repo_copy / "tenants" / "team-b" / "profile.yaml"
    text = profile.read_text()
    profile.write_text(re.sub(r"\n    checkpointing:\n(      .*\n)+", "\n", text))
    cluster = kueue_sandbox.connect()
    bare = job("team-b", "no-checkpoint", "batch-standard", 1, 600)
    del bare["metadata"]["annotations"]
    saved = job("team-a", "checkpointed", "batch-standard", 1, 600)
    for body in (bare, saved):
        cluster.create(body)
    try:

        def both_admitted() -> tuple[int, Json] | None:
            code, doc = upgrade_check(kueue_sandbox, "gpu-staging", bundle, repo_copy)
            return (code, doc) if len(doc["upgrade"]["admitted"]) == 2 else None

        code, doc = eventually(both_admitted, what="upgrade-check seeing both Jobs admitted")
        admitted = {a["job"]: a for a in doc["upgrade"]["admitted"]}
        assert admitted["checkpointed"]["checkpoint"].startswith("s3://checkpoints/team-a/")
        assert admitted["no-checkpoint"]["checkpoint"] is None
        assert not admitted["no-checkpoint"]["evidence"]
        [finding] = rules(doc)["upgrade-running-without-recovery"]
        assert (finding["namespace"], code) == ("team-b", 1)
        assert "tenant team-b records no checkpointing evidence" in finding["message"]
    finally:
        for body in (bare, saved):
            meta = body["metadata"]
            cluster.delete(
                "batch/v1", "Job", meta["name"], meta["namespace"], propagation="Background"
            )


def test_kueue_stopped_is_a_webhook_finding(toolchain: Toolchain, sandboxes_dir: Path) -> None:
    box = synced_kueue_sandbox(toolchain, sandboxes_dir / "stopped", "gpu-staging")
    try:
        state = box.state()
        assert state is not None
        os.killpg(state.pids["kueue"], signal.SIGTERM)
        eventually(lambda: not box.process_alive("kueue"), what="Kueue stopped", seconds=30)
        code, doc = upgrade_check(box, "gpu-staging", "v0.19.2")
    finally:
        box.down()
    assert code == 1
    found = rules(doc)
    down = {f["kind"] for f in found["upgrade-webhook-down"]}
    assert {"ClusterQueue", "ResourceFlavor", "Workload"} <= down
    assert "failed calling webhook" in found["upgrade-webhook-down"][0]["message"]
    # the stored ClusterQueues cannot be read in v1beta1 either: conversion is Kueue's too
    assert any(
        f["kind"] == "ClusterQueue" and f["apiVersion"] == "kueue.x-k8s.io/v1beta1"
        for f in found["upgrade-conversion-failing"]
    )


@pytest.fixture(autouse=True)
def _no_leftover_jobs(kueue_sandbox: Sandbox) -> t.Iterator[None]:
    yield
    cluster = kueue_sandbox.connect()
    eventually(
        lambda: (
            not any(
                cluster.list_in(api, kind, ns)
                for api, kind in (("batch/v1", "Job"), ("kueue.x-k8s.io/v1beta2", "Workload"))
                for ns in ("team-a", "team-b")
            )
        ),
        what="the test's Jobs and Workloads gone",
    )
