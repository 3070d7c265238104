"""The upgrade of a running legacy cluster from Kueue v0.9.1 to v0.17.0, in the runbook's order:
hold, export, upgrade, check, resume. No queue and no Workload is lost on the way."""

from __future__ import annotations

import json
import os
import signal
import time
import typing as t
from pathlib import Path

from auditor.k8s.objects import CRD_API
from auditor.sandbox import Sandbox, Toolchain, crds, kueue
from tests.conftest import ROOT, own_context, run_line
from tests.integration.conftest import synced_kueue_sandbox
from tests.integration.test_preemptions import job

Json = dict[str, t.Any]
OLD, NEW = "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def line(box: Sandbox, *argv: str) -> t.Any:
    return run_line(["kueue-gitops", "--repo", str(ROOT), *argv, *own_context(box.kubeconfig)])


def inventory(box: Sandbox, api: str) -> dict[str, set[str]]:
    """Each Kueue kind's objects (by UID), read in `api`."""
    cluster = box.connect()
    return {
        kind: {o["metadata"]["uid"] for o in cluster.list(api, kind)}
        for kind in ("ClusterQueue", "LocalQueue", "ResourceFlavor", "Workload")
    }


def stop(box: Sandbox, *names: str) -> None:
    state = box.state()
    assert state is not None
    for name in names:
        os.killpg(state.pids[name], signal.SIGTERM)
        deadline = time.monotonic() + 30
        while box.process_alive(name) and time.monotonic() < deadline:
            time.sleep(0.2)


def test_the_legacy_cluster_upgrades_without_losing_a_queue_or_a_workload(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path: Path
) -> None:
    box = synced_kueue_sandbox(toolchain, sandboxes_dir / "upgrade", "gpu-legacy")
    try:
        cluster = box.connect()
        for i in range(3):  # long-running work, admitted before the upgrade starts
            body = job("team-a", f"train-{i}", "batch-low", 1, 3600)
            # Kueue v0.9.1 matches a flavor's nodeTaints against the pod's own tolerations
            # only ("untolerated taint ... in flavor a100" otherwise): the Job carries one.
            body["spec"]["template"]["spec"]["tolerations"] = [GPU_TOLERATION]
            cluster.create(body)
        deadline = time.monotonic() + 180  # Kueue v0.9.1 on two busy cores can take a while
        admitted: list[Json] = []
        while time.monotonic() < deadline:
            admitted = [
                w for w in cluster.list(OLD, "Workload")
                if any(c["type"] == "Admitted" and c["status"] == "True"
                       for c in w["status"].get("conditions", []))
            ]  # fmt: skip
            if len(admitted) == 3:
                break
            time.sleep(0.5)
        assert len(admitted) == 3, "the work was not admitted before the upgrade began"
        before = inventory(box, OLD)
        assert len(before["Workload"]) == 3 and len(before["ClusterQueue"]) == 2

        # 1. hold every queue live: admitted work keeps running, nothing new starts
        for cq in ("team-a-cq", "team-b-cq"):
            cluster.patch(OLD, "ClusterQueue", cq, {"spec": {"stopPolicy": "Hold"}})
        # 2. export what runs
        exported = line(box, "export-workloads", "--cluster", "gpu-legacy", "-o", str(tmp_path))
        assert exported.exit_code == 0, exported.output
        [snapshot] = tmp_path.glob("workloads-*.json")
        assert len(json.loads(snapshot.read_text())["workloads"]) == 3
        # the check first lists what the upgrade needs: the empty v1alpha1 CRDs must go
        checked = line(box, "upgrade-check", "--cluster", "gpu-legacy", "--to", "v0.17.0")
        assert checked.exit_code == 1
        assert "cohorts.kueue.x-k8s.io stores v1alpha1" in checked.output
        # 3. upgrade: stop the old controller, replace the CRDs, start v0.17.0
        stop(box, "kueue", "kube-controller-manager")
        for empty in ("cohorts", "topologies"):
            cluster.delete(CRD_API, "CustomResourceDefinition", f"{empty}.kueue.x-k8s.io")
        crds.install(cluster, crds.load_crds(toolchain.kueue.crds))
        kueue.start(box, toolchain)
        # 4. check: controller, webhooks and conversion of the new release answer
        checked = line(box, "upgrade-check", "--cluster", "gpu-legacy", "--to", "v0.17.0",
                       "-o", "json")  # fmt: skip
        doc = json.loads(checked.stdout)
        now_rules = {f["rule"] for f in doc["findings"]}
        assert not now_rules & {
            "upgrade-controller-not-ready", "upgrade-webhook-down", "upgrade-conversion-failing",
            "upgrade-stored-version-unserved",
        }, doc["findings"]  # fmt: skip
        # 5. resume
        for cq in ("team-a-cq", "team-b-cq"):
            cluster.patch(NEW, "ClusterQueue", cq, {"spec": {"stopPolicy": "None"}})
        after = inventory(box, NEW)
        assert after == before  # every queue and Workload, the same objects, now in v1beta2
        for w in cluster.list(NEW, "Workload"):
            conds = {c["type"]: c["status"] for c in w["status"]["conditions"]}
            assert conds.get("Admitted") == "True" and conds.get("Evicted") != "True"
        team_a = cluster.get(NEW, "ClusterQueue", "team-a-cq")
        assert team_a["spec"]["cohortName"] == "legacy-shared"  # v1beta1's cohort, converted
    finally:
        box.down()
