"""`kueue-gitops generate argocd --repo-url`: argocd/ pointed at a fork, nothing else changed."""

from __future__ import annotations

import shutil
import typing as t
from pathlib import Path

import yaml

from tests.conftest import ROOT, run_line

COMMITTED = "https://github.com/example-org/kueue-gitops.git"
FORK = "https://github.com/someone/kueue-gitops.git"


def committed() -> list[dict[str, t.Any]]:
    return [
        doc
        for path in sorted((ROOT / "argocd").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


def test_every_committed_url_and_only_it_names_the_fork() -> None:
    result = run_line(["kueue-gitops", "--repo", str(ROOT), "generate", "argocd",
                       "--repo-url", FORK])  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert len(printed) == len(committed())
    assert COMMITTED not in result.stdout
    # With the committed URL put back, every object is exactly as committed.
    assert [
        yaml.safe_load(yaml.safe_dump(d).replace(FORK, COMMITTED)) for d in printed
    ] == committed()
    for appset in (d for d in printed if d["kind"] == "ApplicationSet"):
        assert appset["spec"]["generators"][0]["git"]["repoURL"] == FORK
        assert appset["spec"]["template"]["spec"]["source"]["repoURL"] == FORK
    for project in (d for d in printed if d["kind"] == "AppProject"):
        assert project["spec"]["sourceRepos"] == [FORK]


def test_without_an_application_set_there_is_nothing_to_point(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "clusters", tmp_path / "clusters")
    shutil.copytree(ROOT / "tenants", tmp_path / "tenants")
    result = run_line(["kueue-gitops", "--repo", str(tmp_path), "generate", "argocd",
                       "--repo-url", FORK])  # fmt: skip
    assert result.exit_code == 2
    assert "no ApplicationSet in argocd/ names a repository URL" in result.output
