from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check, write

CQS = "clusters/gpu-prod/clusterqueues.yaml"
SELECTOR = (
    "  namespaceSelector:\n    matchLabels:\n      platform.example.com/kueue: enabled\n"
    "      platform.example.com/tenant: team-a\n"
)


def test_selectors_requiring_the_admission_label_pass(repo_copy: Path) -> None:
    assert run_check(repo_copy, "namespace-selector") == []


def test_an_expression_requiring_the_label_also_passes(repo_copy: Path) -> None:
    edit(
        repo_copy,
        CQS,
        SELECTOR,
        "  namespaceSelector:\n    matchExpressions:\n"
        "      - {key: platform.example.com/kueue, operator: In, values: [enabled]}\n",
    )
    assert run_check(repo_copy, "namespace-selector") == []


def test_an_absent_selector_warns_that_the_queue_admits_nothing(repo_copy: Path) -> None:
    edit(repo_copy, CQS, SELECTOR, "")
    assert_findings(
        run_check(repo_copy, "namespace-selector"),
        ("namespace-selector-absent", "warning", CQS, line_of(repo_copy, CQS, "spec:")),
        contains="it admits nothing",
    )


@pytest.mark.parametrize(
    "selector",
    [
        "{}",
        "\n    matchLabels: {platform.example.com/tenant: team-a}",
        "\n    matchExpressions: [{key: platform.example.com/kueue, operator: Exists}]",
        "\n    matchExpressions:\n"
        "      - {key: platform.example.com/kueue, operator: In, values: [enabled, paused]}",
        "\n    matchLabels: {platform.example.com/kueue: disabled}",
    ],
)
def test_selectors_that_can_match_an_unlabelled_namespace_are_errors(
    repo_copy: Path, selector: str
) -> None:
    edit(repo_copy, CQS, SELECTOR, f"  namespaceSelector: {selector}\n")
    findings = run_check(repo_copy, "namespace-selector")
    assert_findings(
        findings,
        (
            "namespace-selector-too-broad",
            "error",
            CQS,
            line_of(repo_copy, CQS, "namespaceSelector"),
        ),
        contains="without the admission label platform.example.com/kueue=enabled",
    )
    if selector == "{}":
        assert findings[0].message.startswith("{} admits every namespace")


def test_an_admission_labelled_namespace_no_tenant_owns_is_an_error(repo_copy: Path) -> None:
    path = "clusters/gpu-prod/namespaces.yaml"
    (repo_copy / path).write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shadow\n  labels:\n"
        "    platform.example.com/kueue: enabled\n"
    )
    assert_findings(
        run_check(repo_copy, "namespace-selector"),
        ("admission-label-unowned", "error", path, 6),
        contains="no tenant profile lists it on gpu-prod",
    )


def test_a_tenant_label_naming_another_tenant_is_an_error(repo_copy: Path) -> None:
    ns = "tenants/team-a/gpu-prod/namespace.yaml"
    edit(
        repo_copy, ns, "platform.example.com/tenant: team-a", "platform.example.com/tenant: team-b"
    )
    assert_findings(
        run_check(repo_copy, "namespace-selector"),
        ("tenant-label-mismatch", "error", ns, line_of(repo_copy, ns, "tenant: team-b")),
        contains="namespace team-a belongs to team-a but its platform.example.com/tenant label "
        "says 'team-b'",
    )


def test_a_namespace_import_wrote_unowned_is_named_with_how_to_assign_it(
    repo_copy: Path,
) -> None:
    path = "clusters/gpu-prod/unowned/scratch.yaml"
    write(
        repo_copy,
        path,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: scratch\n  labels:\n"
        "    platform.example.com/kueue: enabled\n",
    )
    findings = run_check(repo_copy, "namespace-selector")
    # one finding, a warning (not also admission-label-unowned's error)
    assert_findings(
        findings,
        ("namespace-unowned", "warning", path, 4),
        contains="namespace scratch on gpu-prod belongs to no tenant",
    )
    assert (
        f"move {path} into tenants/TENANT/gpu-prod/ and add scratch to "
        "clusters.gpu-prod.namespaces in tenants/TENANT/profile.yaml, or label it "
        "platform.example.com/tenant=TENANT on the cluster and import again"
    ) in findings[0].message
