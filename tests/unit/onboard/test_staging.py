"""Onboarding writes every file at once or none (auditor/onboard/staging.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from auditor.errors import AuditorError, ConfigError
from auditor.onboard import staging
from auditor.onboard.files import Plan


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "clusters/gpu-a").mkdir(parents=True)
    (tmp_path / "clusters/gpu-a/clusterqueues.yaml").write_text("a: 1\n")
    (tmp_path / "CODEOWNERS").write_text("* @old\n")
    return tmp_path


PLAN = Plan(
    create={"tenants/team-x/profile.yaml": "p\n", "tenants/team-x/gpu-a/ns.yaml": "n\n",
            "argocd/tenants/team-x.yaml": "a\n"},
    append={"clusters/gpu-a/clusterqueues.yaml": "b: 2\n"},
    replace={"CODEOWNERS": "* @new\n"},
)  # fmt: skip


def test_a_plan_is_written_whole_new_folders_moved_in_and_files_replaced(root: Path) -> None:
    written = PLAN.write(root)
    assert sorted(written) == sorted([*PLAN.create, *PLAN.append, *PLAN.replace])
    assert tree(root) == {
        "clusters/gpu-a/clusterqueues.yaml": "a: 1\n---\nb: 2\n",
        "CODEOWNERS": "* @new\n",
        "tenants/team-x/profile.yaml": "p\n",
        "tenants/team-x/gpu-a/ns.yaml": "n\n",
        "argocd/tenants/team-x.yaml": "a\n",
    }
    assert not [p for p in root.iterdir() if p.name.startswith(staging.STAGING_PREFIX)]


def test_a_file_that_exists_already_stops_everything_before_a_byte_is_written(
    root: Path,
) -> None:
    (root / "argocd/tenants").mkdir(parents=True)
    (root / "argocd/tenants/team-x.yaml").write_text("theirs\n")
    before = tree(root)
    with pytest.raises(ConfigError, match=r"argocd/tenants/team-x\.yaml exists already"):
        PLAN.write(root)
    assert tree(root) == before


def test_a_move_that_fails_undoes_the_ones_before_it(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = tree(root)
    real, calls = os.replace, []

    def flaky(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        """The last move (CODEOWNERS, after the new folders and the appended
        clusterqueues.yaml are in) fails, as a full disk would."""
        calls.append(Path(target).name)
        if Path(target) == root / "CODEOWNERS" and Path(source).name == "CODEOWNERS":
            raise OSError(28, "No space left on device")
        real(source, target)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(AuditorError, match="No space left on device; nothing was written"):
        PLAN.write(root)
    assert calls[:3] == ["tenants", "argocd", "clusterqueues.yaml"]  # moved in, then undone
    assert tree(root) == before  # the new folders gone again, CODEOWNERS as it was
    assert not [p for p in root.iterdir() if p.name.startswith(staging.STAGING_PREFIX)]


def test_a_folder_given_whole_replaces_the_old_one_and_removed_files_go(root: Path) -> None:
    (root / "schemas/gpu-a").mkdir(parents=True)
    (root / "schemas/gpu-a/stale.json").write_text("{}")

    def fill(folder: Path) -> None:
        (folder / "index.json").write_text('{"new": true}')

    staging.write_all(root, {}, removed=["CODEOWNERS"], folders={"schemas/gpu-a": fill})
    assert tree(root) == {
        "clusters/gpu-a/clusterqueues.yaml": "a: 1\n",
        "schemas/gpu-a/index.json": '{"new": true}',
    }
