"""Check admission-policies: the committed policies are what the profiles generate now."""

from __future__ import annotations

from pathlib import Path

from auditor.repo.layout import Repository
from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

POLICIES = "clusters/gpu-prod/admission-policies.yaml"


def test_the_committed_policies_are_current(repo_copy: Path) -> None:
    assert run_check(repo_copy, "admission-policies") == []
    assert run_check(repo_copy, "admission-policies", "gpu-staging") == []


def test_approving_a_level_without_regenerating_leaves_the_policies_stale(repo_copy: Path) -> None:
    edit(
        repo_copy,
        "tenants/team-a/profile.yaml",
        "workload: [batch-low, batch-standard]",
        "workload: [batch-low, batch-standard, batch-critical]",
    )
    findings = run_check(repo_copy, "admission-policies")
    line = line_of(repo_copy, POLICIES, '"team-a": ["batch-low", "batch-standard"]')
    assert_findings(
        findings,
        ("admission-policies-stale", "error", POLICIES, line),
        contains="run `kueue-gitops generate policies`",
    )
    assert '"team-a": ["batch-low", "batch-standard", "batch-critical"]' in findings[0].message
    # the other cluster's file is stale too: the tenant's levels hold on every cluster
    assert [f.rule.id for f in run_check(repo_copy, "admission-policies", "gpu-staging")] == [
        "admission-policies-stale"
    ]


def test_a_new_platform_identity_without_regenerating_is_stale(repo_copy: Path) -> None:
    edit(
        repo_copy,
        "clusters/gpu-prod/profile.yaml",
        "    - Group example-org:platform\n",
        "    - Group example-org:platform\n    - User sre-oncall\n",
    )
    [finding] = run_check(repo_copy, "admission-policies")
    assert '"sre-oncall"' in finding.message


def test_without_the_file_the_cluster_holds_no_boundary(repo_copy: Path) -> None:
    (repo_copy / POLICIES).unlink()
    findings = run_check(repo_copy, "admission-policies")
    assert_findings(
        findings,
        ("admission-policies-stale", "error", "clusters/gpu-prod/profile.yaml", 1),
        contains="there is no clusters/gpu-prod/admission-policies.yaml",
    )


def test_a_hand_edit_of_the_file_is_stale(repo_copy: Path) -> None:
    edit(repo_copy, POLICIES, "- Deny", "- Warn")
    [finding] = run_check(repo_copy, "admission-policies")
    assert finding.line == line_of(repo_copy, POLICIES, "- Warn")
    assert Repository.open(repo_copy).cluster("gpu-prod").policy_enforcement == "Deny"


def test_policies_in_warn_lead_to_the_reviewed_flip_to_deny(repo_copy: Path) -> None:
    """An adopter told to regenerate learns what the policies will do and where Deny is set."""
    edit(
        repo_copy,
        "clusters/gpu-prod/profile.yaml",
        "  capacity:",
        "  admissionPolicies: {enforcement: Warn}\n  capacity:",
    )
    [finding] = run_check(repo_copy, "admission-policies")
    assert "only warn and audit" in finding.message
    assert "spec.admissionPolicies.enforcement in clusters/gpu-prod/profile.yaml" in finding.message
    assert "set it to Deny" in finding.message and "docs/boundaries.md" in finding.message
    assert "- Warn" in finding.message and "- Audit" in finding.message  # the diff shows it
