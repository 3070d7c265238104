"""The drift command's forked loader and its shape check shared across a fleet's clusters."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.drift import shapes
from auditor.drift.preload import Preload
from auditor.model import Resource
from auditor.repo import manifests
from auditor.repo.layout import Loaded, Repository
from auditor.repo.profiles import PROFILE_FILE
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator

ROOT = Path(__file__).resolve().parents[3]
CLUSTERS = ["gpu-prod", "gpu-staging"]


def _seen(resources: list[Resource]) -> list[tuple[str, int, dict[str, object]]]:
    return [(r.file, r.line, r.body) for r in resources]


def _same_as_a_plain_load(got: Loaded, repo_copy: Path) -> None:
    """`got` holds what loading the repository directly gives: objects, findings and lines."""
    want = Repository.open(repo_copy).load(CLUSTERS)
    for cluster in CLUSTERS:
        assert _seen(got.for_cluster(cluster)) == _seen(want.for_cluster(cluster))
    assert got.findings == want.findings
    resource = got.for_cluster("gpu-prod")[0]
    assert resource.line_of(["metadata", "name"]) == want.for_cluster("gpu-prod")[0].line_of(
        ["metadata", "name"]
    )


def test_the_forked_load_is_the_load(repo_copy: Path) -> None:
    repo = Repository.open(repo_copy)
    preload = Preload.start(repo, CLUSTERS)
    assert preload.forked  # a child was forked (this machine has two cores)
    got = preload.result()
    _same_as_a_plain_load(got, repo_copy)


def test_a_broken_manifest_is_reported_as_without_the_fork(repo_copy: Path) -> None:
    (repo_copy / "clusters/gpu-prod/broken.yaml").write_text("kind: [unclosed\n")
    got = Preload.start(Repository.open(repo_copy), CLUSTERS).result()
    want = Repository.open(repo_copy).load(CLUSTERS)
    assert got.findings == want.findings != []


def test_a_child_that_fails_leaves_the_parent_to_load(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repository.open(repo_copy)
    real = Repository.load
    monkeypatch.setattr(Repository, "load", lambda *_a, **_k: 1 / 0)  # the child's copy fails
    preload = Preload.start(repo, CLUSTERS)
    monkeypatch.setattr(Repository, "load", real)
    assert _seen(preload.result().for_cluster("gpu-prod")) == _seen(
        Repository.open(repo_copy).load(CLUSTERS).for_cluster("gpu-prod")
    )


def test_a_run_after_another_parses_only_the_files_that_changed(
    repo_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """drift reads and fills validate's cache: the first run forks the loader, which fills it;
    the next loads here from it, parsing only an edited file, and loads what a cold load does."""
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    first = Preload.start(Repository.open(repo_copy), CLUSTERS, cache=True)
    assert first.forked  # nothing cached yet: the child loads (and fills the cache)
    first.result()
    edited = repo_copy / "clusters/gpu-prod/cohorts.yaml"
    edited.write_text(edited.read_text().replace("name: ", "name: x", 1))
    parsed: list[str] = []
    real = manifests.load_bytes

    def counting(data: bytes, path: str) -> t.Any:
        if not path.endswith(PROFILE_FILE):
            parsed.append(path)
        return real(data, path)

    monkeypatch.setattr(manifests, "load_bytes", counting)
    again = Preload.start(Repository.open(repo_copy), CLUSTERS, cache=True)
    assert not again.forked  # every cluster's pack holds entries: loaded here
    got = again.result()
    assert parsed == ["clusters/gpu-prod/cohorts.yaml"]
    _same_as_a_plain_load(got, repo_copy)


def test_without_the_cache_nothing_is_read_or_written_there(
    repo_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """drift --no-cache: the loader forks as before and leaves the cache directory alone."""
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    preload = Preload.start(Repository.open(repo_copy), CLUSTERS, cache=False)
    assert preload.caches == {} and preload.forked
    got = preload.result()
    assert _seen(got.for_cluster("gpu-prod")) == _seen(
        Repository.open(repo_copy).load(CLUSTERS).for_cluster("gpu-prod")
    )
    assert not (tmp_path / "cache").exists()
    Preload.start(Repository.open(repo_copy), CLUSTERS, cache=True).result()
    assert list((tmp_path / "cache").rglob("*.pickle"))  # the same run with it fills it


def test_clusters_with_the_same_schemas_compile_each_kind_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        (tmp_path / "schemas" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "schemas" / name).symlink_to(ROOT / "schemas" / "gpu-prod")
    compiled_kinds: list[tuple[str, str]] = []
    real = ClusterValidator.kind_schema

    def counting(self: ClusterValidator, api_version: str, kind: str) -> object:
        compiled_kinds.append((api_version, kind))
        return real(self, api_version, kind)

    monkeypatch.setattr(ClusterValidator, "kind_schema", counting)
    repo = Repository.open(ROOT)
    desired = repo.load(["gpu-prod"]).for_cluster("gpu-prod")
    compiled: shapes.Compiled = {}
    for name in ("a", "b"):
        catalog = SchemaCatalog(tmp_path / "schemas", name)
        sound, refused = shapes.sound(repo.cluster("gpu-prod"), catalog, desired, compiled)
        assert (len(sound), refused) == (len(desired), [])
    assert compiled_kinds  # the first cluster compiled its kinds; the second none again
    assert len(compiled_kinds) == len(set(compiled_kinds)) == len(compiled)
