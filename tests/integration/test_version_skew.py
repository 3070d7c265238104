"""drift --fleet on real control planes serving each release's own CRDs: gpu-legacy on Kueue
v0.9.1 and gpu-staging on v0.19.2 (each built from its pinned module). The fleet section reads
what the API servers serve and store; gpu-legacy, ten minor releases behind the newest pinned,
is flagged at its profile, gpu-staging is not."""

from __future__ import annotations

import os
import typing as t
from pathlib import Path

import pytest

from auditor.drift import audit
from auditor.live import access
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from auditor.sandbox import Sandbox, Toolchain, releases
from tests.estate import ESTATE

CLUSTERS = ("gpu-legacy", "gpu-staging")


@pytest.fixture(scope="module")
def boxes(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[dict[str, Sandbox]]:
    repo = Repository.open(ESTATE)
    found: dict[str, Sandbox] = {}
    try:
        for name in CLUSTERS:
            box = Sandbox(f"skew-{name}-{os.getpid()}", root=sandboxes_dir)
            found[name] = box
            release = releases.release(toolchain, repo.cluster(name).kueue_version, log=print)
            box.up(toolchain, kueue_release=release)  # the release's CRDs on its API server
    except Exception as exc:
        for box in found.values():
            box.down()
        pytest.fail(f"the sandboxes could not start: {exc}", pytrace=False)
    yield found
    for box in found.values():
        box.down()


def test_the_fleet_section_reads_each_releases_crds_and_flags_the_one_behind(
    boxes: dict[str, Sandbox],
) -> None:
    def connect(profile: ClusterProfile) -> KubeCluster:
        box = boxes[profile.name]
        return access.connect(profile, kubeconfig=str(box.kubeconfig), context=box.context)

    report = audit.audit(Repository.open(ESTATE), list(CLUSTERS), connect, with_fleet=True)
    assert [c.status for c in report.clusters] == ["ok", "ok"], report.clusters
    fleet = report.to_json()["fleet"]
    assert fleet["newestPinned"] == "v0.19.2"
    members = {m["cluster"]: m for m in fleet["clusters"]}
    legacy, staging = members["gpu-legacy"], members["gpu-staging"]
    assert (legacy["kueue"], legacy["minorsBehind"]) == ("v0.9.1", 10)
    assert (staging["kueue"], staging["minorsBehind"]) == ("v0.19.2", 0)
    # What the API servers say, from the CRDs each release installs.
    assert legacy["servedVersions"]["ClusterQueue"] == ["v1beta1"]
    assert legacy["servedVersions"]["Cohort"] == ["v1alpha1"]
    assert legacy["storedVersions"]["ClusterQueue"] == ["v1beta1"]
    assert set(staging["servedVersions"]["ClusterQueue"]) == {"v1beta1", "v1beta2"}
    assert staging["storedVersions"]["ClusterQueue"] == ["v1beta2"]
    behind = [f for f in report.findings if f.rule.id == "kueue-release-behind"]
    assert [(f.cluster, f.file) for f in behind] == [
        ("gpu-legacy", "clusters/gpu-legacy/profile.yaml")
    ]
