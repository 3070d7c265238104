"""One cluster's fault leaves the others reported: a missing kubeconfig context, a deadline that
passes mid-read, a bug while comparing. Clusters here are fakes at our reader interface
(KubeCluster.list) that serve the repository's own objects, so an untroubled cluster is clean."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.drift import engine
from auditor.drift.audit import audit
from auditor.live.credentials import ContextMissing
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from tests.estate import ESTATE
from tests.unit.drift.repo_as_live import RepoAsLive, live_objects


@pytest.fixture
def repo(repo_copy: Path) -> Repository:
    return Repository.open(repo_copy)


def test_a_cluster_without_a_kubeconfig_context_is_incomplete_and_the_other_audited(
    repo: Repository,
) -> None:
    staging = live_objects(repo, "gpu-staging")

    def connect(profile: ClusterProfile) -> KubeCluster:
        if profile.name == "gpu-prod":
            raise ContextMissing("cluster gpu-prod: no context gpu-prod of kc")
        return RepoAsLive(profile.name, staging)

    report = audit(repo, ["gpu-prod", "gpu-staging"], connect)
    assert [(c.name, c.status, c.errors) for c in report.clusters] == [
        ("gpu-prod", "incomplete", ["cluster gpu-prod: no context gpu-prod of kc"]),
        ("gpu-staging", "ok", []),
    ]
    assert (report.findings, report.exit_code) == ([], 3)


def test_a_deadline_passed_mid_read_names_every_kind_left_unread(repo: Repository) -> None:
    cluster = RepoAsLive("gpu-prod", live_objects(repo, "gpu-prod"), reads=3)
    report = audit(repo, ["gpu-prod"], lambda _p: cluster)
    [result] = report.clusters
    assert result.status == "incomplete" and report.exit_code == 3
    read, failed = cluster.asked[:3], cluster.asked[3]
    assert result.errors[0].startswith(f"LIST {failed} ") and "9s deadline" in result.errors[0]
    assert len(cluster.asked) == 4  # nothing is asked of it after the deadline
    head, rest = result.errors[1].split(": ", 1)  # every kind left unread, on one line
    assert len(result.errors) == 2 and head == "LIST not attempted (the cluster's deadline passed)"
    unread = rest.split(", ")
    assert {"Namespace", "RoleBinding", "LocalQueue", "Node"} <= set(unread)
    assert not set(read) & set(unread)
    assert [f for f in report.findings if f.kind not in read] == []


def test_a_bug_while_comparing_one_cluster_leaves_the_others_drift_reported(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = engine.compare_kind

    def compare(comparison: engine.Comparison, kind: str) -> t.Any:
        if comparison.side.profile.name == "gpu-prod":
            raise KeyError("spec")
        return real(comparison, kind)

    monkeypatch.setattr(engine, "compare_kind", compare)
    staging = live_objects(repo, "gpu-staging")
    staging = [o for o in staging if o["kind"] != "LocalQueue"]  # drift to be reported
    objects = {"gpu-prod": live_objects(repo, "gpu-prod"), "gpu-staging": staging}
    report = audit(repo, ["gpu-prod", "gpu-staging"], lambda p: RepoAsLive(p.name, objects[p.name]))
    prod, stage = report.clusters
    assert prod.status == "incomplete" and stage.status == "ok"
    assert prod.errors == [
        "internal error while comparing cluster gpu-prod: KeyError: 'spec' "
        "(a bug in kueue-gitops; -v shows the traceback)"
    ]
    assert {f.change for f in report.findings} == {"missing"}
    assert {f.cluster for f in report.findings} == {"gpu-staging"}
    assert (report.status, report.exit_code) == ("incomplete", 3)


def test_a_malformed_repo_object_is_a_finding_not_a_crash(repo_copy: Path) -> None:
    """Drift does not validate; an object its schema refuses is said to be not compared."""
    path = repo_copy / "tenants/team-b/gpu-staging/namespace.yaml"
    live = live_objects(Repository.open(repo_copy), "gpu-staging")
    text = path.read_text()
    path.write_text(text[: text.index("  annotations:")] + "  annotations: note\n")
    report = audit(
        Repository.open(repo_copy),
        ["gpu-staging"],
        lambda p: RepoAsLive(p.name, live),
        schemas_root=ESTATE / "schemas",
    )
    assert not report.incomplete
    [found] = [f for f in report.findings if f.rule.id == "drift-not-compared"]
    assert (found.file, found.kind, found.name) == (
        "tenants/team-b/gpu-staging/namespace.yaml",
        "Namespace",
        "team-b",
    )
    assert found.line == text[: text.index("  annotations:")].count("\n") + 1
