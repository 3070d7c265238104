from __future__ import annotations

from pathlib import Path

import pytest

from auditor.validate.checks.flavors import is_accelerator
from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

RFS = "clusters/gpu-prod/resourceflavors.yaml"
CQS = "clusters/gpu-prod/clusterqueues.yaml"
TEAM_A = "tenants/team-a/profile.yaml"
H100_LABELS = (
    "  nodeLabels:\n    platform.example.com/pool: gpu\n"
    "    nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n"
)


def test_the_committed_flavors_are_distinct_and_tolerated(repo_copy: Path) -> None:
    assert run_check(repo_copy, "flavors") == []
    assert run_check(repo_copy, "flavors", "gpu-staging") == []


@pytest.mark.parametrize(
    ("resource", "gpu"),
    [("nvidia.com/gpu", True), ("amd.com/gpu", True), ("gpu.intel.com/i915", True),
     ("nvidia.com/mig-1g.10gb", True), ("cpu", False), ("example.com/fpga", False)],
)  # fmt: skip
def test_accelerators_are_told_by_name(resource: str, gpu: bool) -> None:
    assert is_accelerator(resource) is gpu


def test_a_gpu_flavor_without_node_labels_is_an_error_where_a_queue_offers_it(
    repo_copy: Path,
) -> None:
    edit(repo_copy, RFS, H100_LABELS, "")
    assert_findings(
        run_check(repo_copy, "flavors"),
        ("gpu-flavor-unlabelled", "error", CQS, line_of(repo_copy, CQS, "- name: h100", 1)),
        ("gpu-flavor-unlabelled", "error", CQS, line_of(repo_copy, CQS, "- name: h100", 2)),
        contains="offers nvidia.com/gpu in flavor h100, which has no nodeLabels",
    )


def test_two_flavors_selecting_the_same_nodes_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, RFS, "platform.example.com/pool: gpu-spot", "platform.example.com/pool: gpu")
    edit(
        repo_copy,
        RFS,
        '    - key: platform.example.com/spot\n      value: "true"\n      effect: NoSchedule\n',
        "",
    )
    [finding] = run_check(repo_copy, "flavors")
    assert (finding.rule.id, finding.name) == ("flavor-overlap", "a100-spot")
    assert finding.message.startswith(
        "ResourceFlavor a100-spot has the same nodeLabels and nodeTaints as a100 ("
    )


def test_a_queue_offering_a_tenant_a_flavor_it_does_not_tolerate_is_an_error(
    repo_copy: Path,
) -> None:
    edit(
        repo_copy,
        TEAM_A,
        "flavors: [cpu-only, a100, h100, a100-spot]",
        "flavors: [cpu-only, a100, h100]",
    )
    assert_findings(
        run_check(repo_copy, "flavors"),
        ("flavor-not-tolerated", "error", CQS, line_of(repo_copy, CQS, "- name: a100-spot")),
        contains="ClusterQueue team-a-cq offers flavor a100-spot to team-a, whose profile does "
        "not list it",
    )
    edit(repo_copy, TEAM_A, "  flavors: [cpu-only, a100, h100]", "")
    assert run_check(repo_copy, "flavors") == []  # no list: every flavor


STAGING_RFS = "clusters/gpu-staging/resourceflavors.yaml"
STAGING_CQS = "clusters/gpu-staging/clusterqueues.yaml"
RACKS = (
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata:\n  name: gpu-racks\n"
    "spec:\n  levels:\n    - nodeLabel: kubernetes.io/hostname\n---\n"
)


def name_topology(repo: Path, rfs: str) -> None:
    product = "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n"
    edit(repo, rfs, product, product + "  topologyName: gpu-racks\n")


def test_a_tas_flavor_without_its_topology_deactivates_each_queue_offering_it(
    repo_copy: Path,
) -> None:
    name_topology(repo_copy, STAGING_RFS)
    assert_findings(
        run_check(repo_copy, "flavors", "gpu-staging"),
        *[
            ("flavor-topology-missing", "error", STAGING_CQS, line)
            for line in (line_of(repo_copy, STAGING_CQS, "- name: a100", n) for n in (1, 2))
        ],
        contains="topologyName gpu-racks names no Topology in the repository: Kueue v0.19.2 "
        "keeps the queue inactive (TopologyNotFound)",
    )
    (repo_copy / STAGING_RFS).write_text(RACKS + (repo_copy / STAGING_RFS).read_text())
    assert run_check(repo_copy, "flavors", "gpu-staging") == []


def test_without_topology_aware_scheduling_the_topology_is_not_looked_up(
    repo_copy: Path,
) -> None:
    # Kueue v0.9.1's TopologyAwareScheduling gate is alpha and off.
    name_topology(repo_copy, "clusters/gpu-legacy/resourceflavors.yaml")
    assert run_check(repo_copy, "flavors", "gpu-legacy") == []
