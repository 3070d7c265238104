"""Drift of the objects that hold the tenant boundaries: admission policies and Kueue's
Configuration (their own categories; tests/integration/test_drift_boundaries.py runs them live)."""

from __future__ import annotations

import typing as t

from auditor.drift import classify
from auditor.drift.compare import DriftItem, Op, diff
from auditor.drift.normalize import normalize
from auditor.kueue import config as kueue_config

KEY = kueue_config.KEY


def config_map(text: str) -> dict[str, t.Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {KEY: text},
    }


def test_kueue_configuration_is_compared_by_what_it_says_not_its_text() -> None:
    repo = config_map("# Kueue\nmanageJobsWithoutQueueName: true\nnamespace: kueue-system\n")
    relaid = config_map("namespace: kueue-system\nmanageJobsWithoutQueueName: true")
    assert diff(normalize(repo), normalize(relaid)) == []
    changed = config_map("namespace: kueue-system\nmanageJobsWithoutQueueName: false\n")
    [item] = diff(normalize(repo), normalize(changed))
    assert item == DriftItem(Op.CHANGE, ("data", KEY, "manageJobsWithoutQueueName"), True, False)
    assert classify.category("ConfigMap", item.path) == "kueue-config"


def test_other_config_maps_stay_text() -> None:
    other = {**config_map("a: 1"), "metadata": {"name": "ksm", "namespace": "kueue-system"}}
    assert normalize(other).body["data"][KEY] == "a: 1"
    assert classify.category("ConfigMap", ("data", "config.yaml")) == "other"


def test_a_policy_takes_the_api_servers_defaults_before_comparing() -> None:
    repo: dict[str, t.Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "p"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [{"apiGroups": ["batch"], "resources": ["jobs"]}]
            },
        },
    }
    live: dict[str, t.Any] = {
        **repo,
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [{"apiGroups": ["batch"], "resources": ["jobs"], "scope": "*"}],
                "namespaceSelector": {},
                "objectSelector": {},
                "matchPolicy": "Equivalent",
            },
        },
    }
    assert diff(normalize(repo), normalize(live)) == []
    loosened = {**live, "spec": {**live["spec"], "failurePolicy": "Ignore"}}
    [item] = diff(normalize(repo), normalize(loosened))
    assert item.path == ("spec", "failurePolicy")
    assert classify.category("ValidatingAdmissionPolicy", item.path) == "admission-policy"


def test_categories_of_the_boundary_objects() -> None:
    assert classify.category("ValidatingAdmissionPolicyBinding", ("spec", "validationActions")) == (
        "admission-policy"
    )
    assert classify.category("ValidatingAdmissionPolicy") == "admission-policy"
    config = classify.of_object("v1", "ConfigMap", "kueue-system", "kueue-manager-config")
    assert config.id == "drift-kueue-config"
    assert classify.of_object("v1", "ConfigMap", "kueue-monitoring", "ksm").id == "drift-other"
