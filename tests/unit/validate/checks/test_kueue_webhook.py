from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

CQS = "clusters/gpu-prod/clusterqueues.yaml"
RFS = "clusters/gpu-prod/resourceflavors.yaml"


def test_the_committed_objects_pass_kueues_webhooks(repo_copy: Path) -> None:
    assert run_check(repo_copy, "kueue-webhook") == []
    assert run_check(repo_copy, "kueue-webhook", "gpu-staging") == []


def test_a_negative_nominal_quota_is_refused_at_its_line(repo_copy: Path) -> None:
    edit(repo_copy, CQS, 'nominalQuota: "16"', 'nominalQuota: "-2"')
    [finding] = run_check(repo_copy, "kueue-webhook")
    assert (finding.rule.id, finding.file, finding.line) == (
        "quantity-negative",
        CQS,
        line_of(repo_copy, CQS, 'nominalQuota: "-2"'),
    )
    assert finding.path == "spec.resourceGroups[0].flavors[1].resources[2].nominalQuota"
    assert finding.message == (
        "Kueue v0.17.0's webhook refuses this ClusterQueue: -2: must be greater than or equal to 0"
    )  # gpu-prod's release, in its own words


def test_each_cluster_is_held_to_what_its_own_release_refuses(repo_copy: Path) -> None:
    # A weight of 1n: Kueue v0.17.0 refuses it, v0.9.1's webhook checks only its sign.
    for cluster in ("gpu-prod", "gpu-legacy"):
        path = f"clusters/{cluster}/clusterqueues.yaml"
        edit(
            repo_copy,
            path,
            "  queueingStrategy:",
            "  fairSharing: {weight: 1n}\n  queueingStrategy:",
        )
    prod = run_check(repo_copy, "kueue-webhook")
    assert [f.rule.id for f in prod] == ["fair-sharing-weight-tiny"]
    assert prod[0].message.startswith("Kueue v0.17.0's webhook refuses this ClusterQueue")
    assert run_check(repo_copy, "kueue-webhook", "gpu-legacy") == []


def test_a_flavor_label_with_a_space_and_a_repeated_taint(repo_copy: Path) -> None:
    edit(repo_copy, RFS, "gpu.product: NVIDIA-H100-80GB-HBM3", "gpu.product: NVIDIA H100")
    edit(
        repo_copy,
        RFS,
        '      effect: NoSchedule\n    - key: platform.example.com/spot\n      value: "true"',
        '      effect: NoSchedule\n    - key: nvidia.com/gpu\n      value: "true"',
    )
    assert_findings(
        run_check(repo_copy, "kueue-webhook"),
        ("flavor-labels-invalid", "error", RFS, line_of(repo_copy, RFS, "NVIDIA H100")),
        (
            "flavor-taint-repeated",
            "error",
            RFS,
            line_of(repo_copy, RFS, 'value: "true"') - 1,
        ),
        contains="Kueue v0.17.0's webhook refuses this ResourceFlavor",
    )
