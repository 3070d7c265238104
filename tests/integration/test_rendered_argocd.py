"""The kustomize estate (tests/data/rendered/kustomize) synced by the real Argo CD, which
renders it with the pinned kustomize on its repo-server's PATH; then `drift` on the objects
kueue-gitops renders the same way.

One sandbox, registered as the estate's cluster `east`, runs Kueue and Argo CD; the estate's
ApplicationSets make `queues-east` (queues/overlays/east, with the GPU component) and one
Application per team (access/teams/<team>, named by namePrefix). `west` is not registered, so
only its Application's error names it.
"""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.sandbox import Sandbox, Toolchain
from tests.integration import rendered
from tests.integration.rendered import drift

KUEUE = "kueue.x-k8s.io/v1beta2"
APPS = {"queues-east", "vision-east", "speech-east"}


@pytest.fixture(scope="module")
def synced(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path]]:
    yield from rendered.synced(
        "kustomize", "east", APPS, toolchain, sandboxes_dir, tmp_path_factory
    )


def test_argo_cd_renders_the_overlay_as_kueue_gitops_does(synced: tuple[Sandbox, Path]) -> None:
    box, _repo = synced
    live = box.connect()
    vision = live.get(KUEUE, "ClusterQueue", "vision")
    groups = vision["spec"]["resourceGroups"]
    assert groups[0]["flavors"][0]["resources"][0]["nominalQuota"] == "128"  # east's patch
    assert groups[1]["flavors"][0]["name"] == "gpu-a100"  # the component
    assert live.get(KUEUE, "LocalQueue", "vision-queue", "vision")["spec"]["clusterQueue"] == (
        "vision"
    )


def test_drift_is_clean_then_names_a_planted_change(synced: tuple[Sandbox, Path]) -> None:
    box, repo = synced
    code, report = drift(repo, box, "east")
    assert (code, report["findings"]) == (0, []), [
        (f["rule"], f["message"]) for f in report["findings"]
    ]
    live = box.connect()
    queue = live.get(KUEUE, "ClusterQueue", "speech")
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "4"
    live.patch(KUEUE, "ClusterQueue", "speech", {"spec": queue["spec"]}, manager="kubectl-edit")
    code, report = drift(repo, box, "east")
    assert code == 1
    assert [(f["kind"], f["name"], f.get("file"), f.get("line")) for f in report["findings"]] == [
        ("ClusterQueue", "speech", "queues/base/clusterqueues.yaml", 33),  # its changed flavor
    ], report["findings"]
