"""Temporary git repositories with a base and a head commit, built from a copy of the frozen
estate (tests/estate.py); and a cluster profile for tests that need one without reading one."""

from __future__ import annotations

import dataclasses
import typing as t
from pathlib import Path

import git
import pytest

from auditor.repo.profiles import ClusterProfile
from tests.estate import copy_estate

STAGING = ClusterProfile(
    name="gpu-staging",
    file="clusters/gpu-staging/profile.yaml",
    context="gpu-staging",
    owners=(),
    kueue_api_versions=("v1beta2",),
    admission_label=("platform.example.com/kueue", "enabled"),
    tenant_label=None,
    capacity={},
)


def cluster_profile(**changes: t.Any) -> ClusterProfile:
    """The gpu-staging profile, as its profile.yaml gives the fields tests use, with `changes`."""
    return dataclasses.replace(STAGING, **changes)


class Revisions:
    """A real git repository in a temporary folder; edit files, then `commit()`.

    It holds the frozen estate's schemas/ too: plan reads them at the head revision."""

    def __init__(self, root: Path) -> None:
        self.root = root
        if not (root / "schemas").exists():
            copy_estate(root, "schemas")
        self.repo = git.Repo.init(root, initial_branch="main")
        with self.repo.config_writer() as cfg:
            cfg.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")

    def commit(self, message: str) -> str:
        self.repo.git.add(A=True)
        self.repo.index.commit(message)
        return self.repo.head.commit.hexsha

    def edit(self, rel: str, old: str, new: str, count: int = 1) -> None:
        path = self.root / rel
        text = path.read_text()
        assert text.count(old) >= count, f"{old!r} not in {rel}"
        path.write_text(text.replace(old, new, count))

    def write(self, rel: str, text: str) -> None:
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.root / rel).write_text(text)

    def line_of(self, rel: str, needle: str, after: str = "") -> int:
        """The 1-based line of the first `needle` after the first `after`."""
        lines = (self.root / rel).read_text().splitlines()
        start = next(i for i, line in enumerate(lines) if after in line) if after else 0
        return next(i for i, line in enumerate(lines) if i >= start and needle in line) + 1


@pytest.fixture
def revs(repo_copy: Path) -> t.Iterator[Revisions]:
    revisions = Revisions(repo_copy)
    revisions.commit("base")
    revisions.repo.create_tag("base")
    yield revisions
    revisions.repo.close()
