"""The checks that look for a cluster's platform objects (its alerts, Kueue's Configuration, the
generated admission policies) and for its Argo CD objects find them wherever a rendered estate
keeps them (tests/data/rendered/), as a user runs them: `validate`, `generate policies`.

Each test plants its change in a copy of an estate.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from auditor.render import tools
from auditor.sandbox.build import TOOLS, ensure_tool
from tests.conftest import run_line
from tests.integration.rendered import ROOT, estate, validate, where

EAST_POLICIES = "queues/overlays/east/admission-policies.yaml"


pytestmark = pytest.mark.usefixtures("renderers")  # the pinned renderers, built


def test_a_new_queue_without_regenerating_is_stale_at_the_overlays_policy_file(
    tmp_path: Path,
) -> None:
    repo = estate("kustomize", tmp_path)
    team = repo / "access/teams/vision"
    (team / "urgent.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: urgent}\nspec: {clusterQueue: vision}\n"
    )
    kustomization = team / "kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text().replace("  - ../../base\n", "  - ../../base\n  - urgent.yaml\n")
    )
    code, findings = validate(repo)
    assert code == 1
    stale = [f for f in findings if f["rule"] == "admission-policies-stale"]
    assert {(f["cluster"], f["file"]) for f in stale} == {
        ("east", EAST_POLICIES),
        ("west", "queues/overlays/west/admission-policies.yaml"),
    }, findings
    assert "+" in stale[0]["message"] and "urgent" in stale[0]["message"]
    result = run_line(["kueue-gitops", "--repo", str(repo), "generate", "policies"])
    assert result.exit_code == 0, result.output
    assert f"{EAST_POLICIES}: 2 namespace(s) that admit work, written" in result.output
    assert not (repo / "clusters").exists()  # written where the estate syncs them from
    assert validate(repo) == (0, [])


def test_without_the_policy_file_the_finding_says_to_sync_what_generate_writes(
    tmp_path: Path,
) -> None:
    repo = estate("helm", tmp_path)
    shutil.rmtree(repo / "platform/policies/south")
    code, findings = validate(repo)
    assert code == 1
    assert where(findings) == {
        ("admission-policies-stale", "south", "platform/profiles/south.yaml", 1),
        # the Application still syncs the folder removed: Argo CD would fail it
        ("argocd-application-unread", None, "apps/policies.yaml", 16),
    }, findings
    stale = next(f for f in findings if f["rule"] == "admission-policies-stale")
    assert (
        "there is no clusters/south/admission-policies.yaml nor any of its " in (stale["message"])
    )


def test_a_missing_alert_is_found_at_the_rendered_prometheus_rule(tmp_path: Path) -> None:
    repo = estate("kustomize", tmp_path)
    alerts = repo / "queues/base/alerts.yaml"
    lines = alerts.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "alert: KueueWebhookRejecting" in line)
    alerts.write_text("".join(lines[:start] + lines[start + 4 :]))
    code, findings = validate(repo)
    assert code == 1
    assert where(findings) == {
        ("alert-missing", "east", "queues/base/alerts.yaml", 2),
        ("alert-missing", "west", "queues/base/alerts.yaml", 2),
    }, findings
    assert "lacks 1 of the required" in findings[0]["message"]
    assert "KueueWebhookRejecting" in findings[0]["message"]


def test_kueues_configuration_is_found_by_its_identity_in_a_plain_folder(tmp_path: Path) -> None:
    repo = estate("helm", tmp_path)
    config = repo / "platform/queues/kueue-config.yaml"
    config.write_text(config.read_text().replace("manageJobsWithoutQueueName: true", ""))
    code, findings = validate(repo)
    assert code == 1
    assert {(f["rule"], f["cluster"], f["file"]) for f in findings} == {
        ("kueue-config-unmanaged-jobs", "north", "platform/queues/kueue-config.yaml"),
        ("kueue-config-unmanaged-jobs", "south", "platform/queues/kueue-config.yaml"),
    }, findings
    config.unlink()
    code, findings = validate(repo)
    missing = [f for f in findings if f["rule"] == "kueue-config-missing"]
    assert {(f["cluster"], f["file"]) for f in missing} == {
        ("north", "platform/profiles/north.yaml"),
        ("south", "platform/profiles/south.yaml"),
    }
    assert "in a folder synced to north" in missing[0]["message"] + missing[1]["message"]


def test_prune_false_may_be_left_out_where_the_estates_application_set_does_not_prune(
    tmp_path: Path,
) -> None:
    repo = estate("kustomize", tmp_path)
    base = repo / "queues/base/kustomization.yaml"
    base.write_text(base.read_text().replace("Prune=false,Delete=false", "Delete=false"))
    # argo/queues.yaml's ApplicationSet makes queues/overlays/*'s Applications with prune: false
    assert validate(repo) == (0, [])
    base.write_text(base.read_text().replace("Delete=false", "Prune=false"))
    code, findings = validate(repo)
    assert code == 1
    unguarded = [f for f in findings if f["rule"] == "prune-unguarded"]
    assert {(f["cluster"], f["file"]) for f in unguarded} >= {
        ("east", "queues/base/clusterqueues.yaml")
    }
    assert all("lacks Delete=false" in f["message"] for f in unguarded), unguarded
    assert {f["rule"] for f in findings} == {"prune-unguarded"}


def test_a_failed_render_is_not_also_reported_as_missing_platform_objects(tmp_path: Path) -> None:
    repo = estate("kustomize", tmp_path)
    (repo / "queues/overlays/west/quotas.yaml").unlink()
    code, findings = validate(repo)
    assert code == 1
    rules = {(f["rule"], f["cluster"]) for f in findings}
    assert ("render-failed", "west") in rules
    # west's ClusterQueues, Kueue's Configuration, its alerts and its policies were in the
    # overlay that did not render: not absent, unread (the render-failed finding says so).
    absent = {"alert-missing", "kueue-config-missing", "admission-policies-stale"}
    # nor is what west's LocalQueues point at (its ClusterQueues were in quotas.yaml)
    absent |= {"lq-cluster-queue-missing", "flavor-missing", "cohort-parent-missing"}
    absent |= {"priority-level-missing"}
    assert not {rule for rule, _ in rules} & absent, findings


def test_once_the_render_is_repaired_a_cached_run_reports_the_absence_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    built = ensure_tool(ROOT / "testenv", "kustomize", TOOLS["kustomize"])
    at = tools.Renderer(str(built), tools.pinned("kustomize"), tools.pinned("kustomize"))
    monkeypatch.setattr(tools, "find", lambda *_: at)  # not this test's empty cache
    repo = estate("kustomize", tmp_path)
    (repo / "queues/overlays/west/admission-policies.yaml").write_text(
        "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n"
        "metadata: {name: kueue-gitops-queue-name, "
        "labels: {app.kubernetes.io/managed-by: kueue-gitops}}\n"
    )  # west's policies are stale...
    quotas = repo / "queues/overlays/west/quotas.yaml"
    kept = quotas.read_text()
    quotas.unlink()  # ...but its overlay does not render: nothing to say of them
    code, findings = validate(repo)
    assert code == 1
    assert "admission-policies-stale" not in {f["rule"] for f in findings}, findings
    quotas.write_text(kept)  # rendered again: the cache must not replay "nothing to say"
    code, findings = validate(repo)
    assert code == 1
    assert where(findings) == {
        ("admission-policies-stale", "west", "queues/overlays/west/admission-policies.yaml", 1)
    }, findings
