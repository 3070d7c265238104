"""Check kueue-config: Kueue's Configuration is there, valid for its release, and manages Jobs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from auditor.kueue import config as kueue_config
from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

CONFIG = "clusters/gpu-prod/kueue/manager-config.yaml"
PROFILE = "clusters/gpu-prod/profile.yaml"


def test_the_repositorys_configuration_passes(repo_copy: Path) -> None:
    assert run_check(repo_copy, "kueue-config") == []
    assert run_check(repo_copy, "kueue-config", "gpu-staging") == []


def test_an_unknown_field_is_an_error_at_its_line_inside_the_config_map(repo_copy: Path) -> None:
    edit(repo_copy, CONFIG, "    webhook:\n", "    webhook:\n      hostname: x\n")
    assert_findings(
        run_check(repo_copy, "kueue-config"),
        ("kueue-config-invalid", "error", CONFIG, line_of(repo_copy, CONFIG, "hostname: x")),
        contains="unknown field webhook.hostname: Kueue v0.17.0 decodes its Configuration",
    )


def test_a_wrong_type_and_an_unknown_framework_are_errors(repo_copy: Path) -> None:
    edit(repo_copy, CONFIG, "qps: 50", "qps: fast")
    edit(repo_copy, CONFIG, "- batch/job", "- batch/jobs")
    findings = run_check(repo_copy, "kueue-config")
    assert_findings(
        findings,
        ("kueue-config-invalid", "error", CONFIG, line_of(repo_copy, CONFIG, "qps: fast")),
        ("kueue-config-invalid", "error", CONFIG, line_of(repo_copy, CONFIG, "- batch/jobs")),
    )
    assert any("'fast' is not of type 'number'" in f.message for f in findings)
    assert any("'batch/jobs' is not one of" in f.message for f in findings)


def test_jobs_without_a_queue_name_must_be_managed_in_admitting_namespaces(
    repo_copy: Path,
) -> None:
    edit(repo_copy, CONFIG, "manageJobsWithoutQueueName: true", "manageJobsWithoutQueueName: no")
    edit(
        repo_copy,
        CONFIG,
        "platform.example.com/kueue: enabled",
        "platform.example.com/gpu: enabled",
    )
    assert_findings(
        run_check(repo_copy, "kueue-config"),
        (
            "kueue-config-unmanaged-jobs",
            "error",
            CONFIG,
            line_of(repo_copy, CONFIG, "manageJobsWithoutQueueName: no"),
        ),
        (
            "kueue-config-unmanaged-jobs",
            "error",
            CONFIG,
            line_of(repo_copy, CONFIG, "managedJobsNamespaceSelector:"),
        ),
    )


def test_a_selector_that_would_manage_kube_system_stops_kueue(repo_copy: Path) -> None:
    edit(
        repo_copy,
        CONFIG,
        "      matchLabels:\n        platform.example.com/kueue: enabled\n",
        "      matchExpressions: [{key: platform.example.com/kueue, operator: DoesNotExist}]\n",
    )
    findings = run_check(repo_copy, "kueue-config")
    assert sorted(f.rule.id for f in findings) == [
        "kueue-config-invalid",
        "kueue-config-invalid",
        "kueue-config-unmanaged-jobs",
    ]
    assert any("matches namespace kube-system" in f.message for f in findings)
    assert any("matches namespace kueue-system" in f.message for f in findings)


def test_without_the_config_map_kueue_runs_on_upstream_defaults(repo_copy: Path) -> None:
    (repo_copy / CONFIG).unlink()
    assert_findings(
        run_check(repo_copy, "kueue-config"),
        ("kueue-config-missing", "error", PROFILE, line_of(repo_copy, PROFILE, "  kueue:")),
        contains="clusters/gpu-prod/kueue/",
    )


def test_a_release_this_tool_does_not_carry_names_the_nearest_and_how_to_add_it(
    repo_copy: Path,
) -> None:
    edit(repo_copy, PROFILE, "version: v0.17.0", "version: v0.18.0")
    [finding] = run_check(repo_copy, "kueue-config")
    assert (finding.rule.id, finding.file, finding.line) == (
        "kueue-config-invalid", PROFILE, line_of(repo_copy, PROFILE, "  kueue:")
    )  # fmt: skip
    assert "names Kueue v0.18.0, a release this tool does not know" in finding.message
    assert "the nearest known release, v0.17.0" in finding.message
    assert "testenv/kueue-v0.18.0/" in finding.message
    assert "`kueue-gitops sandbox kueue-api --kueue v0.18.0 --write`" in finding.message


def test_text_that_is_not_yaml_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, CONFIG, "    kind: Configuration\n", "    kind: Configuration\n    : [\n")
    [finding] = run_check(repo_copy, "kueue-config")
    assert finding.rule.id == "kueue-config-invalid" and "not valid YAML" in finding.message


def test_a_release_without_the_namespace_selector_cannot_keep_to_admitting_namespaces(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned = kueue_config.api("v0.17.0")
    assert pinned is not None
    properties = dict(pinned.schema["properties"])
    del properties["managedJobsNamespaceSelector"]
    older = dataclasses.replace(
        pinned, version="v0.9.1", schema={**pinned.schema, "properties": properties}
    )
    monkeypatch.setattr(kueue_config, "api", lambda version: older)
    edit(repo_copy, CONFIG, "    managedJobsNamespaceSelector:", "    unusedBefore:")
    edit(repo_copy, CONFIG, "      matchLabels:\n        platform.example.com/kueue: enabled\n", "")
    findings = run_check(repo_copy, "kueue-config")
    assert [
        (f.rule.id, f.line) for f in findings if f.rule.id == "kueue-config-unmanaged-jobs"
    ] == [
        ("kueue-config-unmanaged-jobs", line_of(repo_copy, CONFIG, "manageJobsWithoutQueueName:"))
    ]
    assert "Kueue v0.9.1 has no managedJobsNamespaceSelector" in findings[-1].message


def test_feature_gates_are_those_the_release_has(repo_copy: Path) -> None:
    staging = "clusters/gpu-staging/kueue/manager-config.yaml"
    edit(
        repo_copy,
        staging,
        "    integrations:\n",
        "    featureGates:\n      WorkloadPriorityClassDefault: true\n"
        "      HierarchicalCohorts: false\n      MultiKueueManagerQuotaAutomation: true\n"
        "    integrations:\n",
    )
    findings = run_check(repo_copy, "kueue-config", "gpu-staging")
    assert_findings(
        findings,
        ("kueue-config-invalid", "error", staging, line_of(repo_copy, staging, "PriorityClassDef")),
        ("kueue-config-invalid", "error", staging, line_of(repo_copy, staging, "Hierarchical")),
    )
    assert [f.message for f in findings] == [
        "featureGates.WorkloadPriorityClassDefault: Kueue v0.19.2 has no such feature gate (did "
        "you mean WorkloadPriorityClassDefaulting?) and would not start",
        "featureGates.HierarchicalCohorts: the gate is locked to true in Kueue v0.19.2 (it "
        "graduated), which would not start with False",
    ]
    # v0.17.0 has no quota automation yet (alpha in v0.18)
    prod = "clusters/gpu-prod/kueue/manager-config.yaml"
    edit(
        repo_copy,
        prod,
        "    integrations:\n",
        "    featureGates: {MultiKueueManagerQuotaAutomation: true}\n    integrations:\n",
    )
    [finding] = run_check(repo_copy, "kueue-config", "gpu-prod")
    assert "Kueue v0.17.0 has no such feature gate" in finding.message
