"""The legacy cluster: Kueue v0.9.1 (v1beta1 only) built from its own pinned module, synced from
clusters/gpu-legacy, and every command working on it as on the current release."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

from auditor.k8s import conditions
from auditor.k8s.objects import CRD_API
from auditor.sandbox import Sandbox
from auditor.schemas import fetch
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.integration.waiting import eventually

Json = dict[str, t.Any]


def command(box: Sandbox, *argv: str, repo: Path = ESTATE) -> tuple[int, Json]:
    result = run_line(
        ["kueue-gitops", "--repo", str(repo), *argv, "--cluster", "gpu-legacy",
         *own_context(box.kubeconfig), "-o", "json"]
    )  # fmt: skip
    return result.exit_code, json.loads(result.stdout)


def test_the_sandbox_runs_kueue_0_9_1_serving_v1beta1_only(legacy_sandbox: Sandbox) -> None:
    cluster = legacy_sandbox.connect()
    assert cluster.served_versions("kueue.x-k8s.io") == ["v1beta1", "v1alpha1"]
    crd = cluster.get(CRD_API, "CustomResourceDefinition", "clusterqueues.kueue.x-k8s.io")
    assert crd["status"]["storedVersions"] == ["v1beta1"]
    cq = cluster.get("kueue.x-k8s.io/v1beta1", "ClusterQueue", "team-a-cq")
    assert cq["spec"]["cohort"] == "legacy-shared"

    def active() -> Json:
        found = cluster.get("kueue.x-k8s.io/v1beta1", "ClusterQueue", "team-a-cq")
        return conditions.condition(found, "Active")

    # v0.9.1 writes no observedGeneration: an Active=False written before its ResourceFlavor
    # arrived can still stand when the sync is done, until Kueue judges the queue again
    eventually(lambda: active().get("status") == "True", what="team-a-cq Active", seen=active)


def test_the_committed_schemas_are_what_the_legacy_sandbox_serves(legacy_sandbox: Sandbox) -> None:
    fetched = fetch.fetch(legacy_sandbox.connect())
    index = json.loads((ESTATE / "schemas" / "gpu-legacy" / "index.json").read_text())
    kueue = {k: v for k, v in fetched.kinds.items() if k.startswith("kueue.x-k8s.io/")}
    assert kueue == {k: v for k, v in index["kinds"].items() if k.startswith("kueue.x-k8s.io/")}


def test_drift_is_clean_right_after_the_sync(legacy_sandbox: Sandbox, repo_copy: Path) -> None:
    # The profile as committed: the sandbox's Kueue is upstream's ServiceAccount, trusted there.
    (repo_copy / "schemas").symlink_to(ESTATE / "schemas")
    code, report = command(legacy_sandbox, "drift", repo=repo_copy)
    assert (code, report["findings"]) == (0, [])


def test_verify_passes_on_the_legacy_kueue(legacy_sandbox: Sandbox) -> None:
    code, report = command(legacy_sandbox, "verify")
    statuses = {c["check"]: c["status"] for c in report["checks"]}
    assert code == 0, [c for c in report["checks"] if c["status"] == "failed"]
    for check in (
        "nominal-quota",
        "borrowing-limit",
        "preemption",
        "stop-policy-hold",
        "pod-placement",
        "victim-recovery",
        "unlabelled-namespace",
        "cleanup",
    ):
        assert statuses[check] == "passed", check  # fmt: skip
