"""Kueue upgraded and rolled back in place, across the estate's real releases, with work running:
the legacy cluster from v0.9.1 to v0.17.0 in the runbook's order (hold, export, upgrade, check,
resume), and gpu-prod from v0.17.0 to v0.19.2 and back. No queue and no Workload is lost on the
way, and the admitted work stays admitted and accounted in its ClusterQueue."""

from __future__ import annotations

import json
import os
import signal
import typing as t
from pathlib import Path

from auditor.k8s import conditions
from auditor.k8s.objects import CRD_API
from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox, Toolchain, crds, kueue, releases
from tests.conftest import ROOT, own_context, run_line
from tests.estate import ESTATE
from tests.integration.checkpointed_jobs import job
from tests.integration.conftest import repo_kueue_config, synced_kueue_sandbox
from tests.integration.waiting import eventually

Json = dict[str, t.Any]
OLD, NEW = "kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def line(box: Sandbox, *argv: str, repo: Path = ESTATE) -> t.Any:
    return run_line(["kueue-gitops", "--repo", str(repo), *argv, *own_context(box.kubeconfig)])


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
    for name in names:
        eventually(lambda: not box.process_alive(name), what=f"{name} stopped", seconds=30)  # noqa: B023 (called at once)


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

        def admitted() -> list[Json]:
            return [w for w in cluster.list(OLD, "Workload") if conditions.is_true(w, "Admitted")]

        eventually(  # Kueue v0.9.1 on two busy cores can take a while
            lambda: len(admitted()) == 3,
            what="the 3 Jobs admitted before the upgrade begins",
            seconds=180,
            seen=lambda: len(admitted()),
        )
        before = inventory(box, OLD)
        assert len(before["Workload"]) == 3 and len(before["ClusterQueue"]) == 2

        # 1. hold every queue live: admitted work keeps running, nothing new starts
        for cq in ("team-a-cq", "team-b-cq"):
            cluster.patch(OLD, "ClusterQueue", cq, {"spec": {"stopPolicy": "Hold"}})
        # 2. export what runs
        exported = line(
            box, "export-workloads", "--cluster", "gpu-legacy", "--out-dir", str(tmp_path)
        )
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


def admitted_workloads(cluster: KubeCluster) -> list[Json]:
    return [
        w for w in cluster.list(NEW, "Workload")
        if any(c["type"] == "Admitted" and c["status"] == "True"
               for c in (w.get("status") or {}).get("conditions", []))
        and not any(c["type"] == "Evicted" and c["status"] == "True"
                    for c in (w.get("status") or {}).get("conditions", []))
    ]  # fmt: skip


def accounted(cluster: KubeCluster) -> dict[str, Json]:
    """What each ClusterQueue's status says it holds: admitted Workloads and reserved quota."""
    out = {}
    for cq in cluster.list(NEW, "ClusterQueue"):
        status = cq.get("status") or {}
        out[cq["metadata"]["name"]] = {
            "admitted": status.get("admittedWorkloads"),
            "reserved": {
                (f["name"], r["name"]): r["total"]
                for f in status.get("flavorsReservation") or []
                for r in f.get("resources") or []
            },
        }
    return out


def switch(box: Sandbox, toolchain: Toolchain, version: str) -> None:
    """Replace the running Kueue by `version`: stop it, install that release's CRDs, start it."""
    stop(box, "kueue")
    target = releases.release(toolchain, version)
    crds.install(box.connect(), crds.load_crds(target.crds))
    kueue.start(box, toolchain, target, configuration=repo_kueue_config("gpu-prod"))


def wait_for(what: str, check: t.Callable[[], bool], timeout: float = 120.0) -> None:
    eventually(check, what=what, seconds=timeout)


def test_prod_upgrades_to_0_19_2_and_rolls_back_with_its_work_admitted_and_accounted(
    toolchain: Toolchain, sandboxes_dir: Path, repo_copy: Path
) -> None:
    (repo_copy / "schemas").symlink_to(ESTATE / "schemas")
    (repo_copy / "testenv").symlink_to(ROOT / "testenv")
    profile = repo_copy / "clusters" / "gpu-prod" / "profile.yaml"
    box = synced_kueue_sandbox(toolchain, sandboxes_dir / "prod-upgrade", "gpu-prod")
    try:
        cluster = box.connect()
        for i in range(3):  # long-running work, admitted before the upgrade starts
            cluster.create(job("team-a", f"train-{i}", "batch-low", 2, 3600))
        wait_for("3 Workloads admitted", lambda: len(admitted_workloads(cluster)) == 3, 180)
        before = inventory(box, NEW)
        wait_for(
            "team-a-cq accounting its 3 Workloads",
            lambda: accounted(cluster)["team-a-cq"]["admitted"] == 3,
        )
        held = accounted(cluster)
        assert held["team-a-cq"]["reserved"][("a100", "nvidia.com/gpu")] == "6"

        running = "v0.17.0"
        for version, direction in (("v0.19.2", "upgrade"), ("v0.17.0", "rollback")):
            checked = line(box, "upgrade-check", "--cluster", "gpu-prod", "--to", version,
                           "-o", "json", repo=repo_copy)  # fmt: skip
            doc = json.loads(checked.stdout)
            assert (checked.exit_code, doc["findings"]) == (0, []), doc["findings"]
            assert doc["upgrade"]["direction"] == direction
            assert len(doc["upgrade"]["admitted"]) == 3
            switch(box, toolchain, version)
            # the change a team merges with the upgrade: the profile names what now runs
            profile.write_text(
                profile.read_text().replace(f"version: {running}", f"version: {version}")
            )
            running = version
            state = box.state()
            assert state is not None and box.process_alive("kueue")
            # The new controller rebuilt its view from the admitted Workloads: the same
            # objects, still admitted, the same quota reserved, nothing evicted or re-admitted.
            wait_for(
                f"Kueue {version} accounting the admitted work",
                lambda: accounted(cluster) == held,
            )
            assert inventory(box, NEW) == before
            assert len(admitted_workloads(cluster)) == 3
            served = cluster.served_versions("kueue.x-k8s.io")
            assert served[0] == "v1beta2" and "v1beta1" in served
        # A new Job is admitted by the rolled-back release as by the first.
        cluster.create(job("team-a", "after", "batch-low", 1, 3600))
        wait_for("the new Job admitted", lambda: len(admitted_workloads(cluster)) == 4)
    finally:
        box.down()
