from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

CQS = "clusters/gpu-prod/clusterqueues.yaml"
LQ = "tenants/team-a/gpu-prod/localqueues.yaml"


def test_none_or_absent_passes(repo_copy: Path) -> None:
    edit(
        repo_copy, LQ, "  clusterQueue: team-a-cq", "  clusterQueue: team-a-cq\n  stopPolicy: None"
    )
    assert run_check(repo_copy, "stop-policy") == []


def test_hold_and_drain_warn_with_what_they_do(repo_copy: Path) -> None:
    edit(
        repo_copy, LQ, "  clusterQueue: team-a-cq", "  clusterQueue: team-a-cq\n  stopPolicy: Hold"
    )
    edit(
        repo_copy,
        CQS,
        "  cohortName: ai-shared",
        "  stopPolicy: HoldAndDrain\n  cohortName: ai-shared",
    )
    findings = run_check(repo_copy, "stop-policy")
    assert_findings(
        findings,
        ("stop-policy-holds", "warning", LQ, line_of(repo_copy, LQ, "stopPolicy")),
        ("stop-policy-holds", "warning", CQS, line_of(repo_copy, CQS, "stopPolicy")),
        contains="holds admission",
    )
    by_kind = {f.kind: f.message for f in findings}
    assert "running ones finish" in by_kind["LocalQueue"]
    assert "running ones are evicted" in by_kind["ClusterQueue"]
