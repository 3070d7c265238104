"""Kueue's Configuration API as this tool carries it, derived from the pinned module's Go types
(tests/integration/test_kueue_api.py derives it again and compares)."""

from __future__ import annotations

import jsonschema

from auditor.kueue import config, release


def test_the_pinned_release_is_carried_with_its_configuration_and_frameworks() -> None:
    assert "v0.17.0" in config.known_versions()
    api = config.api("v0.17.0")
    assert api is not None and api.version == "v0.17.0"
    assert api.frameworks["batch/job"] == config.Framework(
        "batch/job", "batch", "v1", "Job", "jobs"
    )
    assert api.frameworks["pod"].group == ""
    assert config.api("v0.0.1") is None
    assert config.api_or_nearest("v0.0.1").version == config.known_versions()[0]
    assert config.api_or_nearest("v0.19.5").version == "v0.19.2"


def test_unknown_fields_and_frameworks_are_errors_as_kueue_decodes_strictly() -> None:
    api = config.api("v0.17.0")
    assert api is not None
    validator = jsonschema.Draft202012Validator(api.schema)
    good = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "manageJobsWithoutQueueName": True,
        "managedJobsNamespaceSelector": {"matchLabels": {"a": "b"}},
        "integrations": {"frameworks": ["batch/job", "pod"]},
        "waitForPodsReady": {"timeout": "5m"},
    }
    assert list(validator.iter_errors(good)) == []
    bad = {
        **good,
        "manageJobsWithoutQueueNames": True,
        "integrations": {"frameworks": ["batch/jobs"]},
        "metrics": {"enableClusterQueueResources": "yes"},
    }
    problems = sorted(e.message for e in validator.iter_errors(bad))
    assert any("manageJobsWithoutQueueNames" in p for p in problems)
    assert any("'batch/jobs' is not one of" in p for p in problems)
    assert any("'yes' is not of type 'boolean'" in p for p in problems)


def test_the_frameworks_a_configuration_turns_on() -> None:
    api = config.api("v0.17.0")
    assert api is not None
    found, unknown = config.frameworks({}, api)
    assert [f.name for f in found] == ["batch/job"] and unknown == []  # Kueue's default
    found, unknown = config.frameworks(
        {
            "integrations": {
                "frameworks": ["pod", "nope"],
                "externalFrameworks": ["Widget.v1.example.com", "broken"],
            }
        },
        api,
    )
    assert [(f.kind, f.group, f.resource) for f in found] == [
        ("Pod", "", "pods"),
        ("Widget", "example.com", "widgets"),
    ]
    assert unknown == ["nope", "broken"]


def test_resources_are_guessed_from_kinds_as_kubernetes_does() -> None:
    assert [config.guess_resource(k) for k in ("Job", "Policy", "Ingress")] == [
        "jobs",
        "policies",
        "ingresses",
    ]


def test_gates_are_the_releases_defaults_under_the_configurations_feature_gates() -> None:
    staging = release.get("v0.19.2")
    assert staging is not None
    assert config.gate(None, staging, "WorkloadPriorityClassDefaulting") is False
    on = {"featureGates": {"WorkloadPriorityClassDefaulting": True}}
    assert config.gate(on, staging, "WorkloadPriorityClassDefaulting") is True
    # a locked gate keeps its default; a gate the release lacks is None
    assert config.gate({"featureGates": {"HierarchicalCohorts": False}}, staging,
                       "HierarchicalCohorts") is True  # fmt: skip
    assert config.gate(on, staging, "NoSuchGate") is None


def test_fair_sharing_and_admission_fair_sharing_as_each_configuration_api_turns_them_on() -> None:
    v1beta2, v1beta1 = "config.kueue.x-k8s.io/v1beta2", "config.kueue.x-k8s.io/v1beta1"
    assert config.fair_sharing({"apiVersion": v1beta2, "fairSharing": {}})
    assert not config.fair_sharing({"apiVersion": v1beta2, "fairSharing": None})
    assert not config.fair_sharing({"apiVersion": v1beta1, "fairSharing": {}})
    assert config.fair_sharing({"apiVersion": v1beta1, "fairSharing": {"enable": True}})
    staging = release.get("v0.19.2")
    assert staging is not None
    block = {"usageHalfLifeTime": "1h"}
    assert config.admission_fair_sharing({"admissionFairSharing": block}, staging) == block
    off = {"admissionFairSharing": block, "featureGates": {"AdmissionFairSharing": False}}
    assert config.admission_fair_sharing(off, staging) is None
    assert config.admission_fair_sharing({}, staging) is None


def test_go_durations() -> None:
    assert config.duration_seconds("1h30m") == 5400
    assert config.duration_seconds("0") == config.duration_seconds("0s") == 0
    assert config.duration_seconds("1.5h") == 5400
    assert config.duration_seconds("300ms") == 0.3
    assert config.duration_seconds("-1m") == -60
    assert config.duration_seconds("soon") is None
    assert config.duration_seconds("1d") is None  # Go has no days
