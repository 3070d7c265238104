from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

CQS = "clusters/gpu-prod/clusterqueues.yaml"


def test_canonical_quantities_pass(repo_copy: Path) -> None:
    assert run_check(repo_copy, "quantities") == []


def test_non_canonical_quantities_warn_with_the_canonical_value(repo_copy: Path) -> None:
    edit(repo_copy, CQS, "nominalQuota: 1Ti", "nominalQuota: 1024Gi")
    edit(repo_copy, CQS, 'nominalQuota: "128"', "nominalQuota: 128000m")
    edit(repo_copy, CQS, 'nominalQuota: "16"', "nominalQuota: 16")
    findings = run_check(repo_copy, "quantities")
    assert_findings(
        findings,
        ("quantity-not-canonical", "warning", CQS, line_of(repo_copy, CQS, "1024Gi")),
        ("quantity-not-canonical", "warning", CQS, line_of(repo_copy, CQS, "128000m")),
        ("quantity-not-canonical", "warning", CQS, line_of(repo_copy, CQS, "nominalQuota: 16")),
        contains="OutOfSync",
    )
    messages = sorted(f.message.split(":")[0] for f in findings)
    assert messages == [
        "write '128' instead of '128000m'",
        "write '16' instead of 16",
        "write '1Ti' instead of '1024Gi'",
    ]


def test_fair_sharing_weights_are_quantities_too(repo_copy: Path) -> None:
    lq = "tenants/team-a/gpu-prod/localqueues.yaml"
    edit(
        repo_copy,
        lq,
        "  clusterQueue: team-a-cq",
        "  clusterQueue: team-a-cq\n  fairSharing: {weight: 0.5}",
    )
    assert_findings(
        run_check(repo_copy, "quantities"),
        ("quantity-not-canonical", "warning", lq, line_of(repo_copy, lq, "weight")),
        contains="write '500m'",
    )


def test_text_that_is_no_quantity_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, CQS, 'borrowingLimit: "8"', "borrowingLimit: 8 GPUs")
    assert_findings(
        run_check(repo_copy, "quantities"),
        ("quantity-invalid", "error", CQS, line_of(repo_copy, CQS, "8 GPUs")),
        contains="'8 GPUs' is not a quantity",
    )


def test_a_quantity_the_server_stores_but_no_arithmetic_holds_is_policy(repo_copy: Path) -> None:
    edit(repo_copy, CQS, 'borrowingLimit: "8"', 'borrowingLimit: "1e309"')
    assert_findings(
        run_check(repo_copy, "quantities"),
        ("quantity-too-large", "error", CQS, line_of(repo_copy, CQS, '"1e309"')),
        contains="the API server stores it",
    )
