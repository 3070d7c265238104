"""The sandbox's simulated node pools (kwok, kube-scheduler) and the `capacity` drift category."""

from __future__ import annotations

import json
import typing as t

from auditor.k8s.quantity import parse
from auditor.kueue import capacity
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.integration.waiting import eventually

Json = dict[str, t.Any]


def test_each_flavor_gets_a_ready_node_with_its_labels_taints_and_declared_capacity(
    kueue_sandbox: Sandbox,
) -> None:
    repo = Repository.open(ESTATE)
    profile = repo.cluster("gpu-staging")
    flavors = {
        r.name: r.body
        for r in repo.load(["gpu-staging"]).for_cluster("gpu-staging")
        if r.kind == "ResourceFlavor"
    }
    nodes = {n["metadata"]["name"]: n for n in kueue_sandbox.connect().list("v1", "Node")}
    assert sorted(nodes) == sorted(f"{name}-0" for name in profile.capacity)
    for name, declared in profile.capacity.items():
        node = nodes[f"{name}-0"]
        assert capacity.ready(node) and capacity.pool(flavors[name], [node]) == [node]
        allocatable = node["status"]["allocatable"]
        assert {k: parse(allocatable[k]) for k in declared} == {
            k: parse(v) for k, v in declared.items()
        }
        taints = {(x["key"], x["effect"]) for x in node["spec"].get("taints") or []}
        wanted = {(x["key"], x["effect"]) for x in flavors[name]["spec"].get("nodeTaints") or []}
        assert taints == wanted  # and the not-ready taint is gone: the lifecycle saw it Ready
        assert node["status"]["nodeInfo"]["kubeletVersion"].startswith("kwok-")


def drift_capacity(box: Sandbox) -> tuple[int, list[Json]]:
    result = run_line(
        ["kueue-gitops", "--repo", str(ESTATE), "drift", "--cluster", "gpu-staging",
         *own_context(box.kubeconfig), "-o", "json"]
    )  # fmt: skip
    findings = json.loads(result.stdout)["findings"]
    return result.exit_code, [f for f in findings if f["category"] == "capacity"]


def patch_node(cluster: KubeCluster, name: str, patch: Json, *, status: bool = False) -> None:
    path = cluster.path("v1", "Node", None, name) + ("/status" if status else "")
    cluster.request(
        "PATCH", path, body=patch, content_type="application/merge-patch+json", what="patch"
    )


def test_the_pools_hold_what_the_queues_promise(kueue_sandbox: Sandbox) -> None:
    assert drift_capacity(kueue_sandbox)[1] == []


def test_a_cordoned_pool_and_a_shrunk_pool_are_capacity_drift(kueue_sandbox: Sandbox) -> None:
    cluster = kueue_sandbox.connect()
    try:
        patch_node(cluster, "cpu-only-0", {"spec": {"unschedulable": True}})
        # The a100 node reports 4 GPUs: less than team-a-cq's 4 and team-b-cq's 3 promise,
        # plus example-org's pool of 1.
        patch_node(cluster, "a100-0", {"status": {"allocatable": {"nvidia.com/gpu": "4"}}},
                   status=True)  # fmt: skip
        code, found = drift_capacity(kueue_sandbox)
    finally:
        patch_node(cluster, "cpu-only-0", {"spec": {"unschedulable": None}})
        patch_node(cluster, "a100-0", {"status": {"allocatable": {"nvidia.com/gpu": "8"}}},
                   status=True)  # fmt: skip
    assert code == 1
    by_flavor = {f["name"]: f for f in found}
    assert by_flavor["cpu-only"]["message"].startswith("ResourceFlavor cpu-only selects no Ready")
    assert by_flavor["cpu-only"]["file"] == "clusters/gpu-staging/resourceflavors.yaml"
    a100 = by_flavor["a100"]
    assert (a100["desired"], a100["live"], a100["resource"]) == ("8", "4", "nvidia.com/gpu")
    assert "less than the 8 the queues' nominalQuota promises" in a100["message"]
    eventually(
        lambda: not drift_capacity(kueue_sandbox)[1],
        what="no capacity finding once the nodes are back",
        seconds=10,
        seen=lambda: drift_capacity(kueue_sandbox)[1],
    )
