"""GitTree: a revision's files read from git objects, links included, never from the disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.repo.gitsource import revision
from auditor.repo.layout import Repository
from tests.unit.conftest import Revisions


def test_a_revision_loads_like_the_working_tree(revs: Revisions) -> None:
    with revision(revs.root, "base") as repo:
        loaded = repo.load()
        assert sorted(repo.clusters) == ["gpu-legacy", "gpu-prod", "gpu-staging"]
        assert repo.label.startswith("base (")
    on_disk = Repository.open(revs.root).load()
    assert loaded.findings == on_disk.findings
    assert [(r.key, r.file, r.line, r.cluster, r.tenant) for r in loaded.resources] == [
        (r.key, r.file, r.line, r.cluster, r.tenant) for r in on_disk.resources
    ]


def test_links_inside_are_followed_and_links_outside_are_findings(revs: Revisions) -> None:
    folder = revs.root / "tenants/team-a/gpu-prod"
    revs.write(
        "shared/extra.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: extra\n"
        "  namespace: team-a\nspec:\n  clusterQueue: team-a-cq\n",
    )
    os.symlink("../../../shared/extra.yaml", folder / "shared.yaml")  # inside: followed
    os.symlink("/etc/hostname", folder / "escape.yaml")
    os.symlink("../../../../../outside.yaml", folder / "climb.yaml")
    head = revs.commit("links")
    (folder / "shared.yaml").unlink()  # gone from the disk: the revision still has it
    with revision(revs.root, head) as repo:
        loaded = repo.load(["gpu-prod"])
    outside = {f.file for f in loaded.findings if f.rule.id == "symlink-outside"}
    assert outside == {"tenants/team-a/gpu-prod/escape.yaml", "tenants/team-a/gpu-prod/climb.yaml"}
    [shared] = [r for r in loaded.resources if r.file.endswith("shared.yaml")]
    assert (shared.name, shared.namespace, shared.cluster) == ("extra", "team-a", "gpu-prod")


def test_linked_folders_at_a_revision_are_followed_inside_and_refused_outside(
    revs: Revisions,
) -> None:
    folder = revs.root / "tenants/team-a/gpu-prod"
    revs.write("shared/queues/bad.yaml", "kind: [unclosed\n")
    os.symlink("../../../shared/queues", folder / "more")  # inside: followed, judged
    os.symlink("/etc", folder / "etc")
    os.symlink("..", folder / "again")
    head = revs.commit("linked folders")
    with revision(revs.root, head) as repo:
        loaded = repo.load(["gpu-prod"])
    found = {(f.rule.id, f.file) for f in loaded.findings}
    assert found == {
        ("yaml-syntax", "tenants/team-a/gpu-prod/more/bad.yaml"),
        ("symlink-outside", "tenants/team-a/gpu-prod/etc/"),
        ("symlink-loop", "tenants/team-a/gpu-prod/again/"),
    }


def test_a_missing_profile_at_a_revision_is_a_configuration_error(revs: Revisions) -> None:
    (revs.root / "clusters/gpu-prod/profile.yaml").unlink()
    head = revs.commit("lose the profile")
    with revision(revs.root, head) as repo, pytest.raises(ConfigError, match=r"profile\.yaml"):
        _ = repo.clusters


def test_outside_git_is_a_configuration_error(tmp_path: Path) -> None:
    with (
        pytest.raises(ConfigError, match="not inside a git repository"),
        revision(tmp_path, "HEAD"),
    ):
        pass
