"""Which nodes a flavor selects, whether they hold its quota, and the nodes a profile stands for."""

from __future__ import annotations

import typing as t

from auditor.k8s.quantity import parse
from auditor.kueue import capacity

Json = dict[str, t.Any]

A100: Json = {
    "metadata": {"name": "a100"},
    "spec": {
        "nodeLabels": {"pool": "gpu", "gpu.product": "A100"},
        "nodeTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
    },
}
H100 = {
    "metadata": {"name": "h100"},
    "spec": {"nodeLabels": {"pool": "gpu", "gpu.product": "H100"}},
}


def node(name: str, labels: dict[str, str], gpus: str, *, ready: str = "True") -> Json:
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {
            "allocatable": {"nvidia.com/gpu": gpus, "cpu": "64"},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def queue(name: str, flavor: str, gpus: str) -> Json:
    return {
        "metadata": {"name": name},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [{"name": flavor, "resources": [
                        {"name": "nvidia.com/gpu", "nominalQuota": gpus}]}],
                }
            ]
        },
    }  # fmt: skip


def test_a_flavor_selects_nodes_carrying_every_one_of_its_labels() -> None:
    a100 = node("n1", {"pool": "gpu", "gpu.product": "A100", "zone": "a"}, "8")
    h100 = node("n2", {"pool": "gpu", "gpu.product": "H100"}, "8")
    assert capacity.pool(A100, [a100, h100]) == [a100]
    assert capacity.pool(H100, [a100, h100]) == [h100]


def test_not_ready_and_cordoned_nodes_do_not_count() -> None:
    down = node("n1", {"pool": "gpu", "gpu.product": "A100"}, "8", ready="False")
    cordoned = node("n2", {"pool": "gpu", "gpu.product": "A100"}, "8")
    cordoned["spec"]["unschedulable"] = True
    assert capacity.pool(A100, [down, cordoned]) == []


def test_a_pool_holding_the_promised_quota_has_no_gap() -> None:
    nodes = [node(f"n{i}", {"pool": "gpu", "gpu.product": "A100"}, "8") for i in range(2)]
    queues = [queue("team-a-cq", "a100", "8"), queue("team-b-cq", "a100", "8")]
    assert capacity.gaps([A100], nodes, queues) == []


def test_a_pool_smaller_than_the_sum_of_nominal_quotas_is_a_gap() -> None:
    nodes = [node("n1", {"pool": "gpu", "gpu.product": "A100"}, "8")]
    queues = [queue("team-a-cq", "a100", "8"), queue("team-b-cq", "a100", "4")]
    [gap] = capacity.gaps([A100], nodes, queues)
    assert (gap.flavor, gap.resource, gap.promised, gap.held, gap.nodes) == (
        "a100", "nvidia.com/gpu", parse("12"), parse("8"), 1,
    )  # fmt: skip
    assert "hold 8 nvidia.com/gpu, less than the 12" in gap.message


def test_a_flavor_selecting_no_ready_node_is_a_gap_whatever_its_quota() -> None:
    nodes = [node("n1", {"pool": "gpu", "gpu.product": "A100"}, "8")]
    [gap] = capacity.gaps([H100], nodes, [])
    assert gap.flavor == "h100" and gap.resource is None
    assert "selects no Ready node" in gap.message


def test_simulated_nodes_carry_the_flavors_labels_taints_and_the_declared_capacity() -> None:
    made = capacity.simulated_nodes(
        [A100, H100], {"a100": {"cpu": "512", "memory": "4Ti", "nvidia.com/gpu": 32}}
    )
    assert [n["metadata"]["name"] for n in made] == ["a100-0"]  # h100 declares no capacity
    [a100] = made
    assert capacity.selects(A100, a100) and not capacity.selects(H100, a100)
    assert a100["spec"]["taints"] == A100["spec"]["nodeTaints"]
    assert a100["status"]["capacity"] == {
        "cpu": "512", "memory": "4Ti", "nvidia.com/gpu": "32", "pods": capacity.PODS_PER_NODE,
    }  # fmt: skip
