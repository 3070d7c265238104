"""kubeconform (built from its pinned module) reads our schemas/ with the documented template."""

from __future__ import annotations

import json
import subprocess
import typing as t
from pathlib import Path

import pytest

from auditor.repo.layout import Repository
from auditor.sandbox.build import TOOLS, ensure_tool
from auditor.schemas.catalog import KUBECONFORM_TEMPLATE
from tests.acceptance.validating import committed_repo
from tests.conftest import ROOT

SKIP = ["-skip", "ClusterProfile,TenantProfile"]  # our profiles are not Kubernetes objects


@pytest.fixture(scope="module")
def kubeconform() -> Path:
    try:
        return ensure_tool(ROOT / "testenv", "kubeconform", TOOLS["kubeconform"], log=print)
    except Exception as exc:
        pytest.fail(f"kubeconform could not be built: {exc}", pytrace=False)


def run(binary: Path, repo: Path, cluster: str) -> dict[str, t.Any]:
    tenants = sorted(str(p.relative_to(repo)) for p in repo.glob(f"tenants/*/{cluster}"))
    location = KUBECONFORM_TEMPLATE.format(root="schemas", cluster=cluster)
    argv = [str(binary), "-strict", "-summary", "-output", "json", *SKIP]
    proc = subprocess.run(
        [*argv, "-schema-location", location, f"clusters/{cluster}", *tenants],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    return {"rc": proc.returncode, **json.loads(proc.stdout)}


@pytest.mark.parametrize("cluster", ["gpu-prod", "gpu-staging"])
def test_kubeconform_finds_a_schema_for_every_object(
    kubeconform: Path, tmp_path: Path, cluster: str
) -> None:
    repo = committed_repo(tmp_path)
    objects = len(Repository.open(repo).load([cluster]).for_cluster(cluster))
    result = run(kubeconform, repo, cluster)
    assert result["rc"] == 0, result
    summary = result["summary"]
    assert isinstance(summary, dict)
    assert (summary["valid"], summary["invalid"], summary["errors"]) == (objects, 0, 0)


def test_kubeconform_is_strict_with_our_schemas(kubeconform: Path, tmp_path: Path) -> None:
    repo = committed_repo(tmp_path)
    lq = repo / "tenants/team-a/gpu-prod/localqueues.yaml"
    lq.write_text(lq.read_text() + "  clusterQueeu: typo\n")
    result = run(kubeconform, repo, "gpu-prod")
    assert result["rc"] == 1
    assert result["summary"]["invalid"] == 1
