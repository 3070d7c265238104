from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

CQS = "clusters/gpu-prod/clusterqueues.yaml"
PROFILE = "clusters/gpu-prod/profile.yaml"


def test_the_committed_queues_preempt_only_lower_priority_work(repo_copy: Path) -> None:
    assert run_check(repo_copy, "preemption-policy") == []
    assert run_check(repo_copy, "preemption-policy", "gpu-staging") == []


def test_reclaiming_any_priority_or_newer_equal_priority_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, CQS, "reclaimWithinCohort: LowerPriority", "reclaimWithinCohort: Any")
    edit(
        repo_copy,
        CQS,
        "withinClusterQueue: LowerPriority",
        "withinClusterQueue: LowerOrNewerEqualPriority",
    )
    assert_findings(
        run_check(repo_copy, "preemption-policy"),
        ("preemption-policy-too-broad", "error", CQS, line_of(repo_copy, CQS, "Within", 1)),
        ("preemption-policy-too-broad", "error", CQS, line_of(repo_copy, CQS, "withinCluster", 1)),
        contains="ClusterQueue team-a-cq sets",
    )


def test_the_cluster_profile_may_allow_a_broader_policy_for_one_queue(repo_copy: Path) -> None:
    edit(repo_copy, CQS, "reclaimWithinCohort: LowerPriority", "reclaimWithinCohort: Any")
    edit(
        repo_copy,
        PROFILE,
        "  verify:",
        "  preemption:\n    allow:\n      team-a-cq: {reclaimWithinCohort: Any}\n  verify:",
    )
    assert run_check(repo_copy, "preemption-policy") == []
    edit(repo_copy, CQS, "reclaimWithinCohort: LowerPriority", "reclaimWithinCohort: Any")
    [finding] = run_check(repo_copy, "preemption-policy")  # team-b-cq is not allowed it
    assert finding.message.startswith("ClusterQueue team-b-cq sets reclaimWithinCohort: Any")
    assert "preemption.allow.team-b-cq.reclaimWithinCohort" in finding.message


def test_preempting_while_borrowing_needs_a_threshold_below_the_platform(repo_copy: Path) -> None:
    edit(
        repo_copy,
        CQS,
        "      maxPriorityThreshold: 100   # borrowed capacity evicts only batch-low work\n",
        "",
    )
    edit(repo_copy, CQS, "maxPriorityThreshold: 100", "maxPriorityThreshold: 10000")
    findings = run_check(repo_copy, "preemption-policy")
    assert_findings(
        findings,
        ("borrow-preemption-unbounded", "error", CQS, line_of(repo_copy, CQS, "borrowWithin", 1)),
        (
            "borrow-preemption-unbounded",
            "error",
            CQS,
            line_of(repo_copy, CQS, "maxPriorityThreshold"),
        ),
        contains="preempts while borrowing but",
    )
    messages = sorted(f.message for f in findings)
    assert "team-a-cq preempts while borrowing but sets no maxPriorityThreshold" in messages[0]
    assert (
        "team-b-cq preempts while borrowing but has maxPriorityThreshold 10000, not below "
        "WorkloadPriorityClass batch-critical (10000)"
    ) in messages[1]
