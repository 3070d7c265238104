from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, line_of, run_check, write

COHORTS = "clusters/gpu-prod/cohorts.yaml"
CQS = "clusters/gpu-prod/clusterqueues.yaml"


def cohort(name: str, parent: str | None = None, extra: str = "") -> str:
    spec = f"\n  parentName: {parent}" if parent else " {}" if not extra else ""
    return (
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: {name}\n"
        f"spec:{spec}{extra}\n"
    )


def test_the_committed_trees_are_sound(repo_copy: Path) -> None:
    assert run_check(repo_copy, "cohort-tree") == []
    assert run_check(repo_copy, "cohort-tree", "gpu-staging") == []


def test_a_cycle_of_parents_is_one_error_naming_the_loop(repo_copy: Path) -> None:
    write(
        repo_copy,
        COHORTS,
        "---\n".join(
            [
                cohort("ai-shared", "research"),
                cohort("research", "vision"),
                cohort("vision", "ai-shared"),
            ]
        ),
    )
    assert_findings(
        run_check(repo_copy, "cohort-tree"),
        ("cohort-cycle", "error", COHORTS, line_of(repo_copy, COHORTS, "parentName: research")),
        contains="Cohorts ai-shared -> research -> vision -> ai-shared form a cycle",
    )


def test_a_cohort_that_is_its_own_parent_is_a_cycle(repo_copy: Path) -> None:
    write(repo_copy, COHORTS, cohort("ai-shared", "ai-shared"))
    [finding] = run_check(repo_copy, "cohort-tree")
    assert finding.rule.id == "cohort-cycle"
    assert "Cohorts ai-shared -> ai-shared form a cycle" in finding.message


def test_a_parent_that_does_not_exist_is_an_error(repo_copy: Path) -> None:
    write(repo_copy, COHORTS, cohort("ai-shared", "example-orgs") + "---\n" + cohort("example-org"))
    assert_findings(
        run_check(repo_copy, "cohort-tree"),
        ("cohort-parent-missing", "error", COHORTS, line_of(repo_copy, COHORTS, "parentName")),
        contains="Cohort ai-shared has parentName example-orgs, but no Cohort example-orgs "
        "exists on gpu-prod (known: ai-shared, example-org)",
    )


def test_a_cluster_queue_may_name_a_cohort_without_an_object(repo_copy: Path) -> None:
    write(repo_copy, COHORTS, cohort("unrelated"))
    assert run_check(repo_copy, "cohort-tree") == []  # ai-shared is implicit: fine for a queue


def gpus(fields: str) -> str:
    return (
        "\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
        "    - name: a100\n      resources:\n"
        f"      - {{name: nvidia.com/gpu, {fields}}}"
    )


def test_a_cohort_borrowing_limit_above_what_the_rest_of_its_tree_lends_warns(
    repo_copy: Path,
) -> None:
    write(
        repo_copy,
        COHORTS,
        cohort("ai-shared", "example-org", gpus('nominalQuota: "0", borrowingLimit: "40"'))
        + "---\n"
        + cohort("example-org", None, gpus('nominalQuota: "6"')),
    )
    found = [f for f in run_check(repo_copy, "quotas") if f.file == COHORTS]
    assert [(f.rule.id, f.line) for f in found] == [
        ("borrowing-over-lendable", line_of(repo_copy, COHORTS, "borrowingLimit"))
    ]
    assert found[0].message.startswith(
        "borrowingLimit 40 of a100/nvidia.com/gpu is more than the rest of tree example-org "
        "outside cohort ai-shared can ever lend (6)"
    )
    write(
        repo_copy,
        COHORTS,
        cohort("ai-shared", "example-org", gpus('nominalQuota: "0", borrowingLimit: "6"'))
        + "---\n"
        + cohort("example-org", None, gpus('nominalQuota: "6"')),
    )
    assert [f for f in run_check(repo_copy, "quotas") if f.file == COHORTS] == []
