"""A release's CRD bundle: which Kueue CRDs it holds, what they serve, and the move's direction."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from auditor.errors import ConfigError
from auditor.upgrade import bundle


def crd(plural: str, kind: str, *versions: tuple[str, bool]) -> dict[str, object]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.kueue.x-k8s.io"},
        "spec": {
            "group": "kueue.x-k8s.io",
            "names": {"kind": kind, "plural": plural},
            "versions": [{"name": v, "served": True, "storage": s} for v, s in versions],
        },
    }


def write(folder: Path, *docs: object) -> Path:
    folder.mkdir(parents=True)
    other = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kueue-system"}}
    (folder / "manifests.yaml").write_text(yaml.safe_dump_all([other, *docs]))
    return folder


def test_a_folder_holds_the_release_its_path_names_and_only_kueue_crds(tmp_path: Path) -> None:
    found = bundle.read(write(tmp_path / "kueue-v0.17.0", crd(
        "clusterqueues", "ClusterQueue", ("v1beta1", False), ("v1beta2", True))))  # fmt: skip
    assert found.version == "v0.17.0"
    assert list(found.crds) == ["clusterqueues.kueue.x-k8s.io"]
    assert found.served("clusterqueues.kueue.x-k8s.io") == ["v1beta1", "v1beta2"]
    assert found.storage_version == "v1beta2"


def test_the_direction_follows_the_storage_version_then_the_release(tmp_path: Path) -> None:
    v1 = crd("clusterqueues", "ClusterQueue", ("v1beta1", True))
    v2 = crd("clusterqueues", "ClusterQueue", ("v1beta2", True))
    old = bundle.read(write(tmp_path / "a", v1), version="v0.9.1")
    new = bundle.read(write(tmp_path / "b", v2), version="v0.17.0")
    assert bundle.direction("v1beta2", old, "v0.17.0") == "rollback"
    assert bundle.direction("v1beta1", new, "v0.9.1") == "upgrade"
    assert bundle.direction("v1beta2", new, "v0.16.0") == "upgrade"
    assert bundle.direction("v1beta2", new, "v0.18.0") == "rollback"
    assert bundle.direction("v1beta2", new, "v0.17.0") == "same"


def test_a_bundle_without_kueue_crds_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no CustomResourceDefinition of kueue\.x-k8s\.io"):
        bundle.read(write(tmp_path / "empty"))
    with pytest.raises(ConfigError, match="no such file or folder"):
        bundle.read(tmp_path / "missing")
