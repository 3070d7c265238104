"""The kustomize estate (tests/data/rendered/kustomize) synced by the real Argo CD, which
renders it with the pinned kustomize on its repo-server's PATH; then `drift` on the objects
kueue-gitops renders the same way.

One sandbox, registered as the estate's cluster `east`, runs Kueue and Argo CD; the estate's
ApplicationSets make `queues-east` (queues/overlays/east, with the GPU component) and one
Application per team (access/teams/<team>, named by namePrefix). `west` is not registered, so
only its Application's error names it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import typing as t
from pathlib import Path

import pytest

from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain, argocd, argocd_control
from tests.conftest import own_context, run_line

ROOT = Path(__file__).resolve().parents[2]
ESTATE = ROOT / "tests" / "data" / "rendered" / "kustomize"
KUEUE = "kueue.x-k8s.io/v1beta2"
SYNC_TIMEOUT = 300.0
APPS = {"queues-east", "vision-east", "speech-east"}
Json = dict[str, t.Any]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


@pytest.fixture(scope="module")
def synced(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path]]:
    repo = tmp_path_factory.mktemp("estate") / "platform"
    shutil.copytree(ESTATE, repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "estate")
    box = Sandbox(f"rendered-east-{os.getpid()}", root=sandboxes_dir)
    try:
        box.up(toolchain, with_kueue=True)
        argocd.start(box, {"east": box}, Repository.open(repo), toolchain.testenv, log=print)

        def all_synced(apps: dict[str, Json]) -> bool:
            return set(apps) >= APPS and all(
                argocd_control.sync_status(apps[n]) == ("Synced", "Healthy") for n in APPS
            )

        argocd_control.wait_for(box, all_synced, timeout=SYNC_TIMEOUT, what="the first sync")
    except Exception as exc:
        box.down()
        pytest.fail(f"Argo CD could not sync the estate: {exc}", pytrace=False)
    yield box, repo
    box.down()


def drift(repo: Path, box: Sandbox) -> tuple[int, Json]:
    result = run_line(
        ["kueue-gitops", "--repo", str(repo), "drift", "--cluster", "east",
         *own_context(box.kubeconfig), "-o", "json"]
    )  # fmt: skip
    return result.exit_code, json.loads(result.stdout)


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
    code, report = drift(repo, box)
    assert (code, report["findings"]) == (0, []), [
        (f["rule"], f["message"]) for f in report["findings"]
    ]
    live = box.connect()
    queue = live.get(KUEUE, "ClusterQueue", "speech")
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "4"
    live.patch(KUEUE, "ClusterQueue", "speech", {"spec": queue["spec"]}, manager="kubectl-edit")
    code, report = drift(repo, box)
    assert code == 1
    assert [(f["kind"], f["name"], f.get("file"), f.get("line")) for f in report["findings"]] == [
        ("ClusterQueue", "speech", "queues/base/clusterqueues.yaml", 33),  # its changed flavor
    ], report["findings"]
