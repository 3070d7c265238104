"""Which schemas judge a cluster (catalog.find): its committed schemas/<cluster>/, else the set
the package carries for its Kueue release; and how the package stores those sets."""

from __future__ import annotations

import json
import shutil
import typing as t
from importlib import resources
from pathlib import Path

import git
import pytest

from auditor.errors import ConfigError
from auditor.kueue import release
from auditor.repo.gitsource import GitTree
from auditor.schemas import catalog, fetch
from auditor.schemas.catalog import PACKAGED, PackagedCatalog, SchemaCatalog
from tests.estate import ESTATE

PACKAGE = Path(str(resources.files("auditor.schemas").joinpath(PACKAGED)))


def test_committed_schemas_win_over_the_packaged_ones(tmp_path: Path) -> None:
    shutil.copytree(ESTATE / "schemas/gpu-prod", tmp_path / "schemas/gpu-prod")
    found = catalog.find(tmp_path / "schemas", "gpu-prod", "v0.17.0")
    assert type(found) is SchemaCatalog
    assert found.source.to_json() == {"source": "repository", "folder": "schemas/gpu-prod"}


def test_without_committed_schemas_the_packaged_set_of_the_clusters_release(
    tmp_path: Path,
) -> None:
    (tmp_path / "schemas/gpu-a").mkdir(parents=True)  # a folder without index.json is none
    found = catalog.find(tmp_path / "schemas", "gpu-a", "v0.9.1")
    assert isinstance(found, PackagedCatalog)
    assert found.source.to_json() == {
        "source": "package", "kueue": "v0.9.1", "kubernetes": "v1.35.4"
    }  # fmt: skip
    # v0.9.1 serves only v1beta1, and Cohort in v1alpha1: the release's own CRDs say so.
    assert found.kind("kueue.x-k8s.io", "ClusterQueue")["served"] == ["v1beta1"]  # type: ignore[index]
    assert found.kind("kueue.x-k8s.io", "Cohort")["served"] == ["v1alpha1"]  # type: ignore[index]
    assert found.schema("kueue.x-k8s.io/v1beta2", "ClusterQueue") is None
    queue = found.schema("kueue.x-k8s.io/v1beta1", "ClusterQueue")
    assert queue is not None and "resourceGroups" in queue["properties"]["spec"]["properties"]
    namespace = found.schema("v1", "Namespace")  # the pinned Kubernetes's core kinds too
    assert namespace is not None and namespace["properties"]["kind"]["type"] == "string"
    assert found.where("core/namespace_v1.json") == (
        "core/namespace_v1.json of the package's Kueue v0.9.1 schemas"
    )


def test_a_release_the_package_lacks_is_a_configuration_error_naming_the_fix(
    tmp_path: Path,
) -> None:
    assert catalog.find(tmp_path / "schemas", "gpu-a", "v0.18.0") is None
    with pytest.raises(ConfigError) as raised:
        catalog.require(tmp_path / "schemas", "gpu-a", "v0.18.0")
    said = str(raised.value)
    assert "no schemas for cluster gpu-a" in said
    assert "carries the schemas of Kueue v0.9.1, v0.17.0, v0.19.2, not v0.18.0" in said
    assert "`kueue-gitops schemas fetch --cluster gpu-a`" in said
    with pytest.raises(ConfigError, match=r"names no Kueue release \(spec.kueue.version\)"):
        catalog.require(tmp_path / "schemas", "gpu-a", None)


def test_at_a_git_revision_the_committed_schemas_are_those_of_that_revision(
    tmp_path: Path,
) -> None:
    shutil.copytree(ESTATE / "schemas/gpu-prod", tmp_path / "schemas/gpu-prod")
    repo = git.Repo.init(tmp_path, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "Test").set_value("user", "email", "t@example.com")
    repo.git.add(A=True)
    with_schemas = repo.index.commit("schemas").hexsha
    repo.git.rm("-r", "-q", "schemas")
    without = repo.index.commit("none").hexsha
    root = Path("schemas")
    then = catalog.find(root, "gpu-prod", "v0.17.0", GitTree(repo, with_schemas))
    now = catalog.find(root, "gpu-prod", "v0.17.0", GitTree(repo, without))
    assert then is not None and then.source.folder == "schemas/gpu-prod"
    assert now is not None and now.source.kueue == "v0.17.0"


def test_the_package_carries_every_supported_release_and_only_those() -> None:
    """The releases this tool knows (auditor/kueue/api/) are those with schemas, each file a
    manifest names is there, and no file is there that no manifest names."""
    assert catalog.packaged_releases() == release.known()
    named = set()
    for version in release.known():
        manifest = json.loads((PACKAGE / f"{version}.json").read_text())
        assert manifest["kueue"] == version
        kinds = manifest["index"]["kinds"]
        for core in ("Namespace", "rbac.authorization.k8s.io/RoleBinding",
                     "scheduling.k8s.io/PriorityClass",
                     "admissionregistration.k8s.io/ValidatingAdmissionPolicy"):  # fmt: skip
            assert core in kinds, (version, core)
        assert "kueue.x-k8s.io/ClusterQueue" in kinds
        named |= set(manifest["files"].values())
    stored = {p.stem for p in (PACKAGE / catalog.PACKAGED_FILES).glob("*.json")}
    assert stored == named


def fetched(**schemas: t.Any) -> fetch.Fetched:
    out = fetch.Fetched("sandbox")
    for kind, schema in schemas.items():
        out.schemas[("kueue.x-k8s.io", kind, "v1beta2")] = schema
        out.kinds[f"kueue.x-k8s.io/{kind}"] = {"kind": kind, "served": ["v1beta2"]}
    return out


def test_a_file_two_releases_share_is_stored_once_and_dropped_when_none_names_it(
    tmp_path: Path,
) -> None:
    shared, own = {"type": "object"}, {"type": "object", "required": ["spec"]}
    fetch.write_packaged(fetched(Cohort=shared, Topology=own), "v1.0.0", "v1.35.4", tmp_path)
    fetch.write_packaged(fetched(Cohort=shared), "v1.1.0", "v1.35.4", tmp_path)
    assert len(list((tmp_path / "files").glob("*.json"))) == 2
    again = fetch.write_packaged(fetched(Cohort=shared), "v1.1.0", "v1.35.4", tmp_path)
    assert again == []  # unchanged: nothing rewritten
    fetch.write_packaged(fetched(Cohort=own), "v1.0.0", "v1.35.4", tmp_path)
    assert len(list((tmp_path / "files").glob("*.json"))) == 2  # own by v1.0.0, shared by v1.1.0
    fetch.write_packaged(fetched(Cohort=own), "v1.1.0", "v1.35.4", tmp_path)
    [only] = (tmp_path / "files").glob("*.json")
    assert json.loads(only.read_text()) == own


def test_a_packaged_catalogs_fingerprint_follows_its_manifest() -> None:
    a = catalog.find(None, "x", "v0.17.0")
    b = catalog.find(None, "x", "v0.19.2")
    assert a is not None and b is not None
    assert a.fingerprint() != b.fingerprint()
    assert a.fingerprint() == catalog.find(None, "y", "v0.17.0").fingerprint()  # type: ignore[union-attr]
