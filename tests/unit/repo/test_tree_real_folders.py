"""A tenant's profile, read before any walk, is opened without resolving its path again when
`subfolders` found its folder real (as a walked file is); a linked folder or a linked profile
still goes the long way, and is refused when it leads out of the repository."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from auditor.repo.tree import SymlinkOutside, WorkTree


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name in ("team-a", "team-b"):
        (root / "tenants" / name).mkdir(parents=True)
        (root / "tenants" / name / "profile.yaml").write_text(f"name: {name}\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "profile.yaml").write_text("name: elsewhere\n")
    (root / "tenants" / "linked").symlink_to(outside)  # a tenant folder that leads out
    (root / "tenants" / "team-c").mkdir()
    (root / "tenants" / "team-c" / "profile.yaml").symlink_to(outside / "profile.yaml")
    return root


def test_a_profile_in_a_real_folder_is_read_without_resolving_its_path(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = WorkTree(root)
    assert tree.subfolders("tenants") == ["linked", "team-a", "team-b", "team-c"]
    resolved: list[str] = []
    real = os.path.realpath

    def counting(path: str, *args: object, **kwargs: object) -> str:
        resolved.append(str(path))
        return real(path)

    monkeypatch.setattr(os.path, "realpath", counting)
    assert tree.read("tenants/team-a/profile.yaml") == b"name: team-a\n"
    assert tree.read("tenants/team-b/profile.yaml") == b"name: team-b\n"
    assert resolved == []


def test_a_linked_tenant_folder_or_profile_is_still_refused(root: Path) -> None:
    tree = WorkTree(root)
    tree.subfolders("tenants")
    for path in ("tenants/linked/profile.yaml", "tenants/team-c/profile.yaml"):
        with pytest.raises(SymlinkOutside):
            tree.read(path)
