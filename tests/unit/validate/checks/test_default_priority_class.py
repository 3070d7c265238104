"""Check default-priority-class: a WorkloadPriorityClass named `default` is judged by the
cluster's release (its gate, its default name) and the Configuration's featureGates."""

from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

INTEGRATIONS = "    integrations:\n"
GATE = "    featureGates: {WorkloadPriorityClassDefaulting: true}\n"


def name_default(repo: Path, cluster: str) -> str:
    path = f"clusters/{cluster}/priorityclasses.yaml"
    text = (repo / path).read_text()
    (repo / path).write_text(
        text + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
        "metadata:\n  name: default\nvalue: 500\n"
    )
    return path


def test_the_gate_off_by_default_leaves_a_class_named_default_alone(repo_copy: Path) -> None:
    name_default(repo_copy, "gpu-staging")
    assert run_check(repo_copy, "default-priority-class", "gpu-staging") == []


def test_with_the_gate_on_the_class_named_default_is_warned(repo_copy: Path) -> None:
    path = name_default(repo_copy, "gpu-staging")
    config = "clusters/gpu-staging/kueue/manager-config.yaml"
    edit(repo_copy, config, INTEGRATIONS, GATE + INTEGRATIONS)
    assert_findings(
        run_check(repo_copy, "default-priority-class", "gpu-staging"),
        (
            "default-workload-priority-class",
            "warning",
            path,
            line_of(repo_copy, path, "name: default"),
        ),
        contains="Kueue v0.19.2 gives every job without a kueue.x-k8s.io/priority-class label "
        "this class's priority (500)",
    )


def test_a_release_without_the_gate_is_not_judged(repo_copy: Path) -> None:
    # v0.17.0 has no WorkloadPriorityClassDefaulting (it came in v0.18): a class named default
    # is a class like any other there.
    name_default(repo_copy, "gpu-prod")
    assert run_check(repo_copy, "default-priority-class", "gpu-prod") == []
