from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.repo.layout import Repository
from tests.estate import ESTATE


def test_the_estate_loads_cleanly_and_places_objects_on_clusters() -> None:
    repo = Repository.open(ESTATE)
    assert set(repo.clusters) == {"gpu-legacy", "gpu-prod", "gpu-staging"}
    assert set(repo.tenants) == {"team-a", "team-b"}
    loaded = repo.load()
    assert loaded.findings == []
    prod = {str(r.key): r for r in loaded.for_cluster("gpu-prod")}
    lq = prod["LocalQueue.kueue.x-k8s.io team-a/batch"]
    assert (lq.tenant, lq.file) == ("team-a", "tenants/team-a/gpu-prod/localqueues.yaml")
    assert prod["ClusterQueue.kueue.x-k8s.io team-a-cq"].tenant is None
    assert not any(r.kind in ("ClusterProfile", "TenantProfile") for r in loaded.resources)


def test_profile_errors_are_configuration_errors_with_file_and_line(repo_copy: Path) -> None:
    profile = repo_copy / "clusters/gpu-prod/profile.yaml"
    profile.write_text(profile.read_text().replace("context: gpu-prod", "kontext: gpu-prod"))
    with pytest.raises(ConfigError, match=r"clusters/gpu-prod/profile.yaml:\d+: invalid"):
        _ = Repository.open(repo_copy).clusters


def test_the_same_object_twice_is_reported_once_and_kept_once(repo_copy: Path) -> None:
    src = repo_copy / "tenants/team-a/gpu-prod/localqueues.yaml"
    (repo_copy / "tenants/team-a/gpu-prod/copy.yaml").write_text(src.read_text())
    loaded = Repository.open(repo_copy).load(["gpu-prod"])
    [dup] = [f for f in loaded.findings if f.rule.id == "duplicate-object"]
    assert dup.file is not None
    assert dup.file == "tenants/team-a/gpu-prod/localqueues.yaml" or dup.file.endswith("copy.yaml")
    assert (
        sum(
            r.kind == "LocalQueue" and r.namespace == "team-a"
            for r in loaded.for_cluster("gpu-prod")
        )
        == 1
    )


def test_symlink_out_of_the_repository_is_not_followed(repo_copy: Path, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-secret.yaml"
    outside.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: stolen}\n")
    (repo_copy / "tenants/team-a/gpu-prod/link.yaml").symlink_to(outside)
    loaded = Repository.open(repo_copy).load(["gpu-prod"])
    assert [f.rule.id for f in loaded.findings] == ["symlink-outside"]
    assert "stolen" not in {r.name for r in loaded.resources}


def test_unknown_cluster_folder_in_a_tenant_is_reported(repo_copy: Path) -> None:
    (repo_copy / "tenants/team-a/gpu-typo").mkdir()
    loaded = Repository.open(repo_copy).load()
    assert [f.rule.id for f in loaded.findings] == ["unknown-cluster-folder"]


def test_a_directory_source_puts_what_names_no_namespace_in_the_destinations(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "platform"
    shutil.copytree(Path(__file__).parents[2] / "data/overrides", repo)
    opened = Repository.open(repo)
    placed, _ = opened.plan(["north"])
    folders = [p for p in placed if p.source is None and p.path.startswith("teams/")]
    loaded = opened.load_placed(folders)  # three teams' folders, one object name in each
    assert [f.rule.id for f in loaded.findings] == []
    assert sorted(str(r.key) for r in loaded.resources if r.kind == "LocalQueue") == [
        "LocalQueue.kueue.x-k8s.io nlp/research",
        "LocalQueue.kueue.x-k8s.io speech/research",
        "LocalQueue.kueue.x-k8s.io vision/research",
    ]
