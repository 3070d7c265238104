"""`kueue-gitops generate argocd --repo-url`: argocd/ pointed at a fork, nothing else changed."""

from __future__ import annotations

import shutil
import typing as t
from pathlib import Path

import yaml

from auditor import rules
from tests.conftest import run_line
from tests.estate import ESTATE, copy_estate

COMMITTED = "https://github.com/example-org/kueue-gitops.git"
FORK = "https://github.com/someone/kueue-gitops.git"


def committed() -> list[dict[str, t.Any]]:
    return [
        doc
        for path in sorted((ESTATE / "argocd").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


def test_every_committed_url_and_only_it_names_the_fork() -> None:
    result = run_line(["kueue-gitops", "--repo", str(ESTATE), "generate", "argocd",
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
    shutil.copytree(ESTATE / "clusters", tmp_path / "clusters")
    shutil.copytree(ESTATE / "tenants", tmp_path / "tenants")
    result = run_line(["kueue-gitops", "--repo", str(tmp_path), "generate", "argocd",
                       "--repo-url", FORK])  # fmt: skip
    assert result.exit_code == 2
    assert "no ApplicationSet in argocd/ names a repository URL" in result.output


def test_where_kueue_writes_a_managers_quota_argo_cd_is_told_to_leave_it(tmp_path: Path) -> None:
    copy_estate(tmp_path, "clusters", "tenants", "argocd")
    # The automated manager of the rules' own example, on gpu-staging (Kueue v0.19.2).
    example = rules.get("multikueue-quota-unsupported").passes
    assert example.file
    (tmp_path / example.file).write_text(example.text)
    result = run_line(["kueue-gitops", "--repo", str(tmp_path), "generate", "argocd",
                       "--repo-url", FORK])  # fmt: skip
    assert result.exit_code == 0, result.output
    sets = {d["metadata"]["name"]: d for d in yaml.safe_load_all(result.stdout) if d}
    spec = sets["kueue-clusters"]["spec"]["template"]["spec"]
    assert spec["ignoreDifferences"] == [
        {"group": "kueue.x-k8s.io", "kind": "ClusterQueue", "name": "remote-cq",
         "managedFieldsManagers": ["kueue"]}
    ]  # fmt: skip
    assert spec["syncPolicy"]["syncOptions"][-1] == "RespectIgnoreDifferences=true"
    assert "ignoreDifferences" not in sets["kueue-tenants"]["spec"]["template"]["spec"]
