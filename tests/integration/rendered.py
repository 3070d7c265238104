"""The rendered estates of tests/data/rendered/ (kustomize/, helm/) as the tests use them
(the pinned renderers: the `renderers` fixture of conftest.py): a copy to plant an error in,
validate and drift as a user runs them, and an estate committed and synced by the real Argo CD
into a sandbox."""

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
ESTATES = ROOT / "tests" / "data" / "rendered"
SYNC_TIMEOUT = 300.0
Json = dict[str, t.Any]


def estate(name: str, tmp_path: Path) -> Path:
    """A copy of the estate `name` to change."""
    target = tmp_path / name
    shutil.copytree(ESTATES / name, target)
    return target


def validate(repo: Path) -> tuple[int, list[Json]]:
    result = run_line(["kueue-gitops", "--repo", str(repo), "validate", "-o", "json"])
    return result.exit_code, json.loads(result.stdout)["findings"]


def where(findings: list[Json]) -> set[tuple[str, str | None, str, int]]:
    return {(f["rule"], f.get("cluster"), f["file"], f["line"]) for f in findings}


def drift(repo: Path, box: Sandbox, cluster: str) -> tuple[int, Json]:
    result = run_line(
        ["kueue-gitops", "--repo", str(repo), "drift", "--cluster", cluster,
         *own_context(box.kubeconfig), "-o", "json"]
    )  # fmt: skip
    return result.exit_code, json.loads(result.stdout)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def synced(
    name: str,
    cluster: str,
    apps: set[str],
    toolchain: Toolchain,
    sandboxes_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> t.Iterator[tuple[Sandbox, Path]]:
    """The estate `name` committed to a git repository and synced by the real Argo CD into a
    sandbox named as `cluster`, once `apps` are all Synced and Healthy (a fixture's body)."""
    repo = tmp_path_factory.mktemp("estate") / "platform"
    shutil.copytree(ESTATES / name, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "estate")
    box = Sandbox(f"rendered-{cluster}-{os.getpid()}", root=sandboxes_dir)
    try:
        box.up(toolchain, with_kueue=True)
        argocd.start(box, {cluster: box}, Repository.open(repo), toolchain.testenv, log=print)

        def all_synced(found: dict[str, Json]) -> bool:
            return set(found) >= apps and all(
                argocd_control.sync_status(found[n]) == ("Synced", "Healthy") for n in apps
            )

        argocd_control.wait_for(box, all_synced, timeout=SYNC_TIMEOUT, what="the first sync")
    except Exception as exc:
        box.down()
        pytest.fail(f"Argo CD could not sync the estate: {exc}", pytrace=False)
    yield box, repo
    box.down()
