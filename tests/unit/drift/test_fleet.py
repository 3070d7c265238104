"""drift --fleet: each cluster's Kueue release, what its Kueue CRDs serve and store, and the
skew against the newest release pinned (the estate: v0.9.1, v0.17.0, v0.19.2). The clusters are
fakes serving the repository's objects and, as CRDs, what each release's own CRDs serve and store
(auditor/kueue/api/<release>.json, derived from the release)."""

from __future__ import annotations

import io
import json
import os
import typing as t
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from auditor.drift import audit, comparer, engine
from auditor.k8s.objects import CRD_API, KUEUE_GROUP, Json
from auditor.kueue import release
from auditor.live.credentials import ContextMissing
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from auditor.report import REPORTER_BY_NAME
from tests.unit.drift.repo_as_live import RepoAsLive, live_objects

ALL = ["gpu-legacy", "gpu-prod", "gpu-staging"]


def crds_of(version: str) -> list[Json]:
    """The release's Kueue CRDs as a cluster that installed it fresh serves them."""
    known = release.get(version)
    assert known is not None
    return [
        {
            "apiVersion": CRD_API,
            "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{crd.plural}.{KUEUE_GROUP}"},
            "spec": {
                "group": KUEUE_GROUP,
                "names": {"kind": crd.kind, "plural": crd.plural},
                "versions": [
                    {"name": v, "served": True, "storage": v == crd.storage} for v in crd.served
                ],
            },
            "status": {"storedVersions": [crd.storage]},
        }
        for crd in known.crds.values()
    ]


def audited(repo_copy: Path, fleet: bool) -> t.Any:
    repo = Repository.open(repo_copy)

    def connect(profile: ClusterProfile) -> KubeCluster:
        assert profile.kueue_version
        objects = live_objects(repo, profile.name) + crds_of(profile.kueue_version)
        return RepoAsLive(profile.name, objects)

    return audit.audit(repo, ALL, connect, with_fleet=fleet)


def test_the_fleet_summary_and_the_clusters_behind(repo_copy: Path) -> None:
    report = audited(repo_copy, fleet=True)
    doc = report.to_json()
    schema = json.loads(
        resources.files("auditor.report").joinpath("report.schema.json").read_text()
    )
    jsonschema.validate(doc, schema)
    fleet = doc["fleet"]
    assert fleet["newestPinned"] == "v0.19.2"
    by_name = {c["cluster"]: c for c in fleet["clusters"]}
    assert {n: (c["kueue"], c["minorsBehind"]) for n, c in by_name.items()} == {
        "gpu-legacy": ("v0.9.1", 10),
        "gpu-prod": ("v0.17.0", 2),
        "gpu-staging": ("v0.19.2", 0),
    }
    assert by_name["gpu-legacy"]["servedVersions"]["ClusterQueue"] == ["v1beta1"]
    assert by_name["gpu-legacy"]["storedVersions"]["Cohort"] == ["v1alpha1"]
    assert by_name["gpu-staging"]["storedVersions"]["ClusterQueue"] == ["v1beta2"]
    behind = {f.cluster: f for f in report.findings if f.rule.id == "kueue-release-behind"}
    assert sorted(behind) == ["gpu-legacy", "gpu-prod"]
    legacy = behind["gpu-legacy"]
    assert legacy.file == "clusters/gpu-legacy/profile.yaml"
    text = (repo_copy / legacy.file).read_text().splitlines()
    assert "version: v0.9.1" in text[legacy.line - 1]
    assert "10 minor releases behind v0.19.2" in legacy.message
    assert "stored as v1alpha1, v1beta1" in legacy.message
    assert [f for f in report.findings if f.rule.id != "kueue-release-behind"] == []
    assert report.exit_code == 0  # warnings: counted under --strict only
    shown = io.StringIO()
    REPORTER_BY_NAME["text"](report, shown)
    assert shown.getvalue().startswith("fleet (newest Kueue pinned: v0.19.2)\n")
    assert "  gpu-legacy: Kueue v0.9.1, 10 minor(s) behind\n" in shown.getvalue()
    assert "    ClusterQueue: serves v1beta1; stored v1beta1\n" in shown.getvalue()


def test_without_fleet_drift_is_as_it_was(repo_copy: Path) -> None:
    report = audited(repo_copy, fleet=False)
    assert report.section is None and "fleet" not in report.to_json()
    assert report.findings == []


def test_a_fleet_compared_in_a_child_is_reported_as_in_one_process(
    repo_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparisons in a forked child (as the drift command runs them) while this process
    reads: the same report, byte for byte, drift and a cluster down included, in one order."""
    repo = Repository.open(repo_copy)
    objects = {name: live_objects(repo, name) for name in ALL}
    gone = objects["gpu-staging"].pop(2)  # drift: missing there
    queue = next(o for o in objects["gpu-legacy"] if o["kind"] == "LocalQueue")
    queue["spec"]["clusterQueue"] = "elsewhere"  # drift, on an object Argo CD marks as its own
    queue["metadata"]["annotations"] = {"argocd.argoproj.io/tracking-id": "legacy:x"}
    meta = gone["metadata"]
    group = gone["apiVersion"].rpartition("/")[0]
    # Argo CD runs on gpu-legacy and syncs gpu-staging: the finding there names its Application.
    objects["gpu-legacy"].append(
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": {"name": "staging", "namespace": "argocd"},
            "spec": {"destination": {"name": "gpu-staging"}},
            "status": {
                "sync": {"status": "OutOfSync"},
                "resources": [
                    {
                        "group": group,
                        "kind": gone["kind"],
                        "namespace": meta.get("namespace"),
                        "name": meta["name"],
                        "status": "OutOfSync",
                    }
                ],
            },
        }
    )
    compared = tmp_path / "pids"
    real = engine.compare_kind

    def compare_kind(comparison: engine.Comparison, kind: str) -> t.Any:
        with compared.open("a") as f:  # which process compared
            f.write(f"{os.getpid()}\n")
        return real(comparison, kind)

    monkeypatch.setattr(engine, "compare_kind", compare_kind)

    def connect(profile: ClusterProfile) -> KubeCluster:
        if profile.name == "gpu-prod":
            raise ContextMissing("cluster gpu-prod: no context gpu-prod of kc")
        assert profile.kueue_version
        return RepoAsLive(profile.name, objects[profile.name] + crds_of(profile.kueue_version))

    def text(fork: bool) -> str:
        repo = Repository.open(repo_copy)
        comparing = comparer.start(repo, ALL, None, fork=fork)
        assert comparing.forked is fork
        report = audit.audit(repo, ALL, connect, with_fleet=True, comparing=comparing)
        out = io.StringIO()
        REPORTER_BY_NAME["json"](report, out)
        return out.getvalue()

    alone = text(False)
    assert set(compared.read_text().split()) == {str(os.getpid())}
    compared.unlink()
    forked = text(True)
    assert len(pids := set(compared.read_text().split())) == 1 and str(os.getpid()) not in pids
    assert forked == alone
    got = json.loads(alone)
    assert [c["status"] for c in got["clusters"]] == ["ok", "incomplete", "ok"]
    named = {
        (f["cluster"], f["name"], f["argocd"]["application"])
        for f in got["findings"]
        if "argocd" in f
    }
    assert named == {
        ("gpu-staging", meta["name"], "staging"),  # from the Application's status
        ("gpu-legacy", queue["metadata"]["name"], "legacy"),  # from the live object's mark
    }
