from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

LQ = "tenants/team-a/gpu-prod/localqueues.yaml"
NS = "tenants/team-a/gpu-prod/namespace.yaml"


def test_queues_pointing_at_their_own_admitting_cluster_queue_pass(repo_copy: Path) -> None:
    assert run_check(repo_copy, "localqueue-target") == []
    assert run_check(repo_copy, "localqueue-target", "gpu-staging") == []


def test_a_cluster_queue_missing_on_the_cluster_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, LQ, "clusterQueue: team-a-cq", "clusterQueue: team-a-typo")
    assert_findings(
        run_check(repo_copy, "localqueue-target"),
        ("lq-cluster-queue-missing", "error", LQ, line_of(repo_copy, LQ, "clusterQueue:")),
        contains="'team-a-typo' does not exist on gpu-prod (known: team-a-cq, team-b-cq)",
    )


def test_another_tenants_cluster_queue_is_not_authorised_nor_admitting(repo_copy: Path) -> None:
    edit(repo_copy, LQ, "clusterQueue: team-a-cq", "clusterQueue: team-b-cq")
    findings = run_check(repo_copy, "localqueue-target")
    line = line_of(repo_copy, LQ, "clusterQueue:")
    assert_findings(
        findings,
        ("lq-cluster-queue-not-authorised", "error", LQ, line),
        ("lq-namespace-not-selected", "error", LQ, line),
    )
    messages = {f.rule.id: f.message for f in findings}
    assert (
        "tenants/team-a/profile.yaml) lists team-a-cq"
        in messages["lq-cluster-queue-not-authorised"]
    )
    assert (
        "labelled platform.example.com/kueue=enabled, platform.example.com/tenant=team-a"
        in (messages["lq-namespace-not-selected"])
    )


def test_a_namespace_without_the_selected_labels_in_the_repo_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, NS, "    platform.example.com/kueue: enabled\n", "")
    assert_findings(
        run_check(repo_copy, "localqueue-target"),
        ("lq-namespace-not-selected", "error", LQ, line_of(repo_copy, LQ, "clusterQueue:")),
        contains="does not match its labels",
    )


def test_a_namespace_not_defined_in_the_repo_is_an_error(repo_copy: Path) -> None:
    (repo_copy / NS).unlink()
    assert_findings(
        run_check(repo_copy, "localqueue-target"),
        ("lq-namespace-not-selected", "error", LQ, line_of(repo_copy, LQ, "namespace: team-a")),
        contains="namespace 'team-a' is not defined in this repository for gpu-prod",
    )


def test_a_cluster_queue_without_selector_admits_no_queue(repo_copy: Path) -> None:
    cqs = "clusters/gpu-prod/clusterqueues.yaml"
    edit(
        repo_copy,
        cqs,
        "  namespaceSelector:\n    matchLabels:\n      platform.example.com/kueue: enabled\n"
        "      platform.example.com/tenant: team-a\n",
        "",
    )
    assert_findings(
        run_check(repo_copy, "localqueue-target"),
        ("lq-namespace-not-selected", "error", LQ, line_of(repo_copy, LQ, "clusterQueue:")),
        contains="has no namespaceSelector (it admits nothing)",
    )


def test_a_cluster_queue_with_a_type_error_is_invalid_not_missing(repo_copy: Path) -> None:
    cqs = "clusters/gpu-prod/clusterqueues.yaml"
    edit(repo_copy, cqs, 'nominalQuota: "256"', "nominalQuota: plenty")
    findings = run_check(repo_copy, "localqueue-target")
    assert_findings(
        findings,
        ("lq-cluster-queue-invalid", "error", LQ, line_of(repo_copy, LQ, "clusterQueue:")),
        contains="ClusterQueue 'team-a-cq' is defined but invalid",
    )
    # it points at the ClusterQueue's own finding: its file, the line of the bad quota, and why
    [finding] = findings
    where = f"{cqs}:{line_of(repo_copy, cqs, 'nominalQuota: plenty')}: "
    assert where + "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota: 'plenty'" in (
        finding.message
    )
