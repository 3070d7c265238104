from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

CQS = "clusters/gpu-prod/clusterqueues.yaml"
VALIDATED = "    checkpointingValidated: true\n    idempotentOutputValidated: true\n"


def test_preempting_queues_whose_tenants_validated_resumption_pass(repo_copy: Path) -> None:
    assert run_check(repo_copy, "preemption") == []


def test_a_tenant_without_validation_forbids_preemption_on_its_queue(repo_copy: Path) -> None:
    edit(repo_copy, "tenants/team-b/profile.yaml", VALIDATED, "    checkpointingValidated: true\n")
    assert_findings(
        run_check(repo_copy, "preemption"),
        (
            "preemption-unvalidated",
            "error",
            CQS,
            line_of(repo_copy, CQS, "reclaimWithinCohort: LowerPriority", 2),
        ),
        contains="preempts (reclaimWithinCohort: LowerPriority, withinClusterQueue: LowerPriority,"
        " borrowWithinCohort.policy: LowerPriority) but tenant(s) team-b have not declared",
    )


def test_never_everywhere_needs_no_validation(repo_copy: Path) -> None:
    edit(repo_copy, "tenants/team-b/profile.yaml", VALIDATED, "    checkpointingValidated: false\n")
    text = (repo_copy / CQS).read_text().replace("LowerPriority", "Never")
    (repo_copy / CQS).write_text(text)
    assert run_check(repo_copy, "preemption") == []


def test_a_preempting_queue_no_tenant_uses_is_an_error(repo_copy: Path) -> None:
    (repo_copy / "clusters/gpu-prod/extra-cq.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: orphan}\n"
        "spec:\n  preemption:\n    borrowWithinCohort: {policy: LowerPriority}\n"
    )
    assert_findings(
        run_check(repo_copy, "preemption"),
        ("preemption-unvalidated", "error", "clusters/gpu-prod/extra-cq.yaml", 6),
        contains="no tenant profile lists this ClusterQueue on gpu-prod",
    )
