from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.repo.layout import Repository
from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

CQS = "clusters/gpu-prod/clusterqueues.yaml"
TEAM_B = "tenants/team-b/profile.yaml"
TEAM_A = "tenants/team-a/profile.yaml"
CHECKPOINTING = """    checkpointing:
      validated: training jobs evicted mid-epoch resume from their last checkpoint
      reference: https://tickets.example.com/PLAT-418
      date: 2026-11-02
      expires: 2027-11-02           # validate again before then: expired evidence fails validate
"""


def drop_checkpointing(repo: Path) -> None:
    edit(repo, TEAM_B, CHECKPOINTING, "")


def test_preempting_queues_whose_victims_all_recorded_evidence_pass(repo_copy: Path) -> None:
    assert run_check(repo_copy, "preemption") == []
    assert run_check(repo_copy, "preemption", "gpu-staging") == []


def test_a_tenant_without_evidence_is_protected_on_both_sides_of_each_edge(
    repo_copy: Path,
) -> None:
    drop_checkpointing(repo_copy)
    findings = run_check(repo_copy, "preemption")
    # team-b-cq evicts team-b's own work (withinClusterQueue); team-a-cq reclaims and borrows
    # from team-b-cq, which can borrow: team-b's work is evicted there too.
    assert_findings(
        findings,
        ("preemption-unvalidated", "error", CQS, line_of(repo_copy, CQS, "withinClusterQueue", 2)),
        ("preemption-unvalidated", "error", CQS, line_of(repo_copy, CQS, "reclaimWithinCohort")),
        contains="can evict the work of team-b",
    )
    own, other = sorted(findings, key=lambda f: f.line or 0, reverse=True)
    assert "through withinClusterQueue: LowerPriority; it has no preemption.checkpointing" in (
        own.message
    )
    assert (
        "through reclaimWithinCohort: LowerPriority, borrowWithinCohort.policy: LowerPriority"
        in (other.message)
    )


NEVER_PREEMPTS = """  preemption: {reclaimWithinCohort: Never, withinClusterQueue: Never}
"""


def replace_team_b_cq(repo: Path, spec: str) -> None:
    """Keep team-a-cq as committed; team-b-cq gets `spec` (in the cohort, admitting team-b)."""
    text = (repo / CQS).read_text()
    team_a = text[: text.index("---\n")]
    (repo / CQS).write_text(
        f"{team_a}---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
        "metadata: {name: team-b-cq}\nspec:\n  cohortName: ai-shared\n"
        "  namespaceSelector:\n    matchLabels: {platform.example.com/tenant: team-b}\n" + spec
    )


def quota(limit: str = "") -> str:
    """team-b-cq's quota: a100 CPUs and GPUs, with `limit` (say ", borrowingLimit: 0") on each."""
    cells = "".join(
        f"        - {{name: {r}, nominalQuota: {q}{limit}}}\n"
        for r, q in (("cpu", 64), ("nvidia.com/gpu", 4))
    )
    return (
        "  resourceGroups:\n  - coveredResources: [cpu, nvidia.com/gpu]\n"
        f"    flavors:\n    - name: a100\n      resources:\n{cells}"
    )


def test_the_victims_evidence_is_asked_even_when_its_own_queue_never_preempts(
    repo_copy: Path,
) -> None:
    drop_checkpointing(repo_copy)
    replace_team_b_cq(repo_copy, NEVER_PREEMPTS + quota())  # no borrowingLimit: borrows freely
    assert_findings(
        run_check(repo_copy, "preemption"),
        ("preemption-unvalidated", "error", CQS, line_of(repo_copy, CQS, "reclaimWithinCohort")),
        contains="ClusterQueue team-a-cq can evict the work of team-b",
    )


def test_a_queue_that_can_never_borrow_is_nobodys_victim(repo_copy: Path) -> None:
    drop_checkpointing(repo_copy)
    replace_team_b_cq(repo_copy, NEVER_PREEMPTS + quota(", borrowingLimit: 0"))
    assert run_check(repo_copy, "preemption") == []
    edit(repo_copy, CQS, "nominalQuota: 4, borrowingLimit: 0", "nominalQuota: 4, borrowingLimit: 1")
    assert [f.rule.id for f in run_check(repo_copy, "preemption")] == ["preemption-unvalidated"]


def test_never_everywhere_needs_no_evidence(repo_copy: Path) -> None:
    text = (repo_copy / TEAM_B).read_text()
    (repo_copy / TEAM_B).write_text(text[: text.index("  preemption:")])  # no records at all
    text = (repo_copy / CQS).read_text().replace("LowerPriority", "Never")
    (repo_copy / CQS).write_text(text.replace("      maxPriorityThreshold: 100\n", ""))
    assert run_check(repo_copy, "preemption") == []


def test_the_old_boolean_declarations_are_refused(repo_copy: Path) -> None:
    text = (repo_copy / TEAM_B).read_text()
    text = text[: text.index("    checkpointing:")] + "    checkpointingValidated: true\n"
    (repo_copy / TEAM_B).write_text(text)
    with pytest.raises(ConfigError, match="'checkpointingValidated' was unexpected"):
        Repository.open(repo_copy).tenants  # noqa: B018


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


def test_evidence_warns_before_it_expires_and_fails_after(repo_copy: Path) -> None:
    expires = line_of(repo_copy, TEAM_B, "expires: 2027-11-02")
    soon = run_check(repo_copy, "preemption", today=datetime.date(2027, 10, 20))
    assert_findings(
        soon,
        ("preemption-evidence-expiring", "warning", TEAM_A, expires),
        ("preemption-evidence-expiring", "warning", TEAM_A, expires + 5),
        ("preemption-evidence-expiring", "warning", TEAM_B, expires),
        ("preemption-evidence-expiring", "warning", TEAM_B, expires + 5),
        contains="expires in 13 day(s), on 2027-11-02",
    )
    late = run_check(repo_copy, "preemption", today=datetime.date(2027, 11, 2))
    assert {(f.rule.id, str(f.severity)) for f in late} == {
        ("preemption-evidence-expired", "error")
    }
    assert any(
        f.message.startswith(
            "team-b's preemption.checkpointing evidence (https://tickets.example.com/PLAT-418) "
            "expired on 2027-11-02, and ClusterQueue(s) team-a-cq, team-b-cq on gpu-prod can "
            "evict its work"
        )
        for f in late
    )


def test_an_evidence_record_needs_a_reference_and_consistent_dates(repo_copy: Path) -> None:
    edit(repo_copy, TEAM_B, "      reference: https://tickets.example.com/PLAT-418\n", "")
    with pytest.raises(ConfigError, match="'reference' is a required property"):
        Repository.open(repo_copy).tenants  # noqa: B018
    edit(repo_copy, TEAM_B, "date: 2026-11-02", "reference: PLAT-418\n      date: 2028-01-01")
    with pytest.raises(ConfigError, match=r"profile.yaml:\d+: preemption.checkpointing expires"):
        Repository.open(repo_copy).tenants  # noqa: B018
    edit(repo_copy, TEAM_B, "date: 2028-01-01", "date: last spring")
    with pytest.raises(ConfigError, match="must be a date"):
        Repository.open(repo_copy).tenants  # noqa: B018
