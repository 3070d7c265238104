"""Drift of the tenant boundaries on a real API server: a policy deleted or loosened live, or
Kueue's Configuration changed, is an error of its own category."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.kueue import NAMESPACE, admission
from auditor.kueue import config as kueue_config
from auditor.sandbox import Sandbox, Toolchain
from tests.integration.drift_live import drift_json, sync, synced_sandbox

Json = dict[str, t.Any]


@pytest.fixture(scope="module")
def synced(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path]]:
    repo_dir = tmp_path_factory.mktemp("boundaries-repo")
    with synced_sandbox(toolchain, sandboxes_dir, repo_dir, "drift-boundaries") as box_and_repo:
        yield box_and_repo


def brief(report: Json) -> list[tuple[t.Any, ...]]:
    return sorted(
        (f["rule"], f["change"], f["kind"], f["name"], f["path"], f["severity"])
        for f in report["findings"]
    )


def test_synced_policies_and_configuration_are_clean(synced: tuple[Sandbox, Path]) -> None:
    box, repo = synced
    code, report = drift_json(repo, box.kubeconfig)
    assert (code, report["findings"]) == (0, [])


def test_a_policy_deleted_or_loosened_live_is_an_error(synced: tuple[Sandbox, Path]) -> None:
    box, repo = synced
    cluster = box.connect()
    cluster.patch(
        admission.API,
        admission.BINDING,
        admission.PRIORITY_POLICY,
        {"spec": {"validationActions": ["Warn"]}},
    )
    cluster.patch(
        admission.API,
        admission.POLICY,
        admission.QUEUE_POLICY,
        {"spec": {"failurePolicy": "Ignore"}},
    )
    cluster.delete(admission.API, admission.BINDING, admission.NAMESPACE_POLICY)
    live = cluster.get("v1", "ConfigMap", kueue_config.CONFIG_MAP, NAMESPACE)
    text = live["data"][kueue_config.KEY]
    relaid = "# a comment and a blank line are not drift\n\n" + text.replace(
        "manageJobsWithoutQueueName: true", "manageJobsWithoutQueueName: false"
    )
    cluster.patch(
        "v1",
        "ConfigMap",
        kueue_config.CONFIG_MAP,
        {"data": {kueue_config.KEY: relaid}},
        namespace=NAMESPACE,
    )
    try:
        code, report = drift_json(repo, box.kubeconfig)
    finally:
        # the repository's objects again (a merge patch first: validationActions is a set,
        # which a server-side apply would merge with the hand-set Warn rather than replace)
        cluster.patch(
            admission.API,
            admission.BINDING,
            admission.PRIORITY_POLICY,
            {"spec": {"validationActions": ["Deny"]}},
        )
        sync(box, repo)
    assert code == 1
    assert brief(report) == [
        ("drift-admission-policy", "missing", admission.BINDING, admission.NAMESPACE_POLICY, None,
         "error"),
        ("drift-admission-policy", "modified", admission.POLICY, admission.QUEUE_POLICY,
         "spec.failurePolicy", "error"),
        ("drift-admission-policy", "modified", admission.BINDING, admission.PRIORITY_POLICY,
         "spec.validationActions", "error"),
        ("drift-kueue-config", "modified", "ConfigMap", kueue_config.CONFIG_MAP,
         f"data.{kueue_config.KEY}.manageJobsWithoutQueueName", "error"),
    ]  # fmt: skip
    [config] = [f for f in report["findings"] if f["kind"] == "ConfigMap"]
    assert config["file"].endswith("clusters/gpu-prod/kueue/manager-config.yaml")
    assert "is False live but True in the repo; changed by kubectl-edit" in config["message"]
    code, report = drift_json(repo, box.kubeconfig)
    assert (code, report["findings"]) == (0, [])
