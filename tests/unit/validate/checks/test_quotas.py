from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check, write

CQS = "clusters/gpu-prod/clusterqueues.yaml"
COHORTS = "clusters/gpu-prod/cohorts.yaml"
A100_GPU_A = (
    '              nominalQuota: "16"\n              borrowingLimit: "8"\n'
    '              lendingLimit: "8"'
)


def test_the_repositorys_quotas_pass(repo_copy: Path) -> None:
    assert run_check(repo_copy, "quotas") == []
    assert run_check(repo_copy, "quotas", "gpu-staging") == []


def test_limits_without_a_cohort_are_errors(repo_copy: Path) -> None:
    edit(repo_copy, CQS, "  cohortName: ai-shared\n", "")
    findings = [f for f in run_check(repo_copy, "quotas") if f.rule.id == "limit-without-cohort"]
    assert_findings(
        findings,
        ("limit-without-cohort", "error", CQS, line_of(repo_copy, CQS, "borrowingLimit", 1)),
        ("limit-without-cohort", "error", CQS, line_of(repo_copy, CQS, "lendingLimit", 1)),
        ("limit-without-cohort", "error", CQS, line_of(repo_copy, CQS, "borrowingLimit", 2)),
        contains="needs spec.cohortName",
    )
    assert findings[0].path is not None and findings[0].path.startswith(
        "spec.resourceGroups[0].flavors[1].resources[2]"
    )


def test_cohort_limits_need_a_parent(repo_copy: Path) -> None:
    write(
        repo_copy,
        COHORTS,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: ai-shared}\nspec:\n"
        "  resourceGroups:\n    - coveredResources: [cpu]\n      flavors:\n"
        "        - name: cpu-only\n          resources:\n"
        '            - {name: cpu, nominalQuota: "0", lendingLimit: "0"}\n',
    )
    assert_findings(
        run_check(repo_copy, "quotas"),
        ("limit-without-cohort", "error", COHORTS, 10),
        contains="needs spec.parentName",
    )


def test_lending_more_than_nominal_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, CQS, 'lendingLimit: "8"', 'lendingLimit: "20"')
    assert_findings(
        run_check(repo_copy, "quotas"),
        ("lending-over-nominal", "error", CQS, line_of(repo_copy, CQS, 'lendingLimit: "20"')),
        contains="lendingLimit 20 of a100/nvidia.com/gpu is more than its nominalQuota 16",
    )


def test_unknown_and_repeated_flavors_are_errors(repo_copy: Path) -> None:
    edit(repo_copy, CQS, "        - name: h100", "        - name: a100")
    edit(repo_copy, CQS, "        - name: cpu-only", "        - name: cpu-spot")
    findings = [f for f in run_check(repo_copy, "quotas") if f.rule.id.startswith("flavor-")]
    assert_findings(
        findings,
        ("flavor-missing", "error", CQS, line_of(repo_copy, CQS, "name: cpu-spot")),
        ("flavor-repeated", "error", CQS, line_of(repo_copy, CQS, "- name: a100", 2)),
    )
    assert "no ResourceFlavor cpu-spot on gpu-prod (known: a100, a100-spot, cpu-only, h100)" in (
        next(f.message for f in findings if f.rule.id == "flavor-missing")
    )


def test_resources_out_of_covered_order_and_covered_twice_are_errors(repo_copy: Path) -> None:
    write(
        repo_copy,
        CQS,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team-a-cq}\n"
        "spec:\n  resourceGroups:\n"
        "    - coveredResources: [cpu, memory]\n      flavors:\n        - name: a100\n"
        '          resources: [{name: memory, nominalQuota: 1Gi}, {name: cpu, nominalQuota: "1"}]\n'
        "    - coveredResources: [cpu]\n      flavors:\n        - name: h100\n"
        '          resources: [{name: cpu, nominalQuota: "1"}]\n',
    )
    assert_findings(
        run_check(repo_copy, "quotas"),
        ("resource-order", "error", CQS, 9),
        ("resource-repeated", "error", CQS, 10),
    )


def test_borrowing_more_than_the_cohort_can_lend_warns(repo_copy: Path) -> None:
    # team-b lends at most 12 a100 GPUs; team-a asks to borrow 13
    edit(repo_copy, CQS, 'borrowingLimit: "8"', 'borrowingLimit: "13"')
    assert_findings(
        run_check(repo_copy, "quotas"),
        (
            "borrowing-over-lendable",
            "warning",
            CQS,
            line_of(repo_copy, CQS, 'borrowingLimit: "13"'),
        ),
        contains="rest of cohort ai-shared can ever lend (12)",
    )


def test_a_cohorts_own_pool_counts_as_lendable(repo_copy: Path) -> None:
    edit(repo_copy, CQS, 'borrowingLimit: "8"', 'borrowingLimit: "13"')
    write(
        repo_copy,
        COHORTS,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: ai-shared}\nspec:\n"
        "  resourceGroups:\n    - coveredResources: [nvidia.com/gpu]\n      flavors:\n"
        "        - name: a100\n          resources:\n"
        '            - {name: nvidia.com/gpu, nominalQuota: "0"}\n'
        "---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: spare}\nspec:\n"
        "  parentName: ai-shared\n  resourceGroups:\n    - coveredResources: [nvidia.com/gpu]\n"
        "      flavors:\n        - name: a100\n          resources:\n"
        '            - {name: nvidia.com/gpu, nominalQuota: "0"}\n',
    )
    assert [f.rule.id for f in run_check(repo_copy, "quotas")] == ["borrowing-over-lendable"]
    # one more GPU in the child cohort's pool is both lendable and inside the a100 capacity
    edit(
        repo_copy, "clusters/gpu-prod/profile.yaml", 'nvidia.com/gpu: "32"', 'nvidia.com/gpu: "33"'
    )
    edit(repo_copy, COHORTS, 'nominalQuota: "0"}\n---', 'nominalQuota: "1"}\n---')
    assert run_check(repo_copy, "quotas") == []


def test_nominal_quotas_beyond_the_profiles_capacity_are_errors(repo_copy: Path) -> None:
    # a100 holds 32 GPUs; team-a 16 + team-b 16; raise team-a to 24
    edit(repo_copy, CQS, A100_GPU_A, A100_GPU_A.replace('"16"', '"24"'))
    assert_findings(
        run_check(repo_copy, "quotas"),
        ("capacity-exceeded", "error", CQS, line_of(repo_copy, CQS, 'nominalQuota: "24"')),
        contains="add up to 40 (team-a-cq 24, team-b-cq 16), more than the 32 its profile "
        "clusters/gpu-prod/profile.yaml declares",
    )


def test_a_flavor_the_profile_declares_no_capacity_for_holds_none(repo_copy: Path) -> None:
    profile = "clusters/gpu-prod/profile.yaml"
    edit(repo_copy, profile, '    h100: {cpu: "512", memory: 4Ti, nvidia.com/gpu: "16"}\n', "")
    findings = run_check(repo_copy, "quotas")
    assert {f.rule.id for f in findings} == {"capacity-exceeded"}
    assert {f.message.split(" on ")[0] for f in findings} == {
        "nominal quotas of h100/cpu",
        "nominal quotas of h100/memory",
        "nominal quotas of h100/nvidia.com/gpu",
    }


def test_a_finding_about_a_limit_or_a_sum_measures_how_far_over_it_is(repo_copy: Path) -> None:
    """What a baseline records, so the same finding grown worse is new: a borrowingLimit 13
    where the cohort lends 12 is 1 over, 20 is 8 over; 40 GPUs promised on 32 is 8 over."""
    edit(repo_copy, CQS, 'borrowingLimit: "8"', 'borrowingLimit: "13"')
    [over_by_one] = run_check(repo_copy, "quotas")
    edit(repo_copy, CQS, 'borrowingLimit: "13"', 'borrowingLimit: "20"')
    [over_by_eight] = run_check(repo_copy, "quotas")
    assert (over_by_one.measured, over_by_eight.measured) == (1, 8)
    assert over_by_one.fingerprint == over_by_eight.fingerprint
    edit(repo_copy, CQS, 'borrowingLimit: "20"', 'borrowingLimit: "8"')
    edit(repo_copy, CQS, A100_GPU_A, A100_GPU_A.replace('"16"', '"24"'))
    [capacity] = run_check(repo_copy, "quotas")
    assert (capacity.rule.id, capacity.measured) == ("capacity-exceeded", 8)
