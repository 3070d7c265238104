"""The validate cache's packs: keys, content over stat, atomic writes, old packs pruned."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from auditor import cache as auditor_cache
from auditor.repo import cache as repo_cache


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.yaml").write_text("kind: A\n")
    past = time.time() - 60
    os.utime(repo / "a.yaml", (past, past))
    return repo


def filled(repo: Path, tool: str = "t", schemas: str = "s") -> repo_cache.FileCache:
    cache = repo_cache.FileCache(repo, "c", tool, schemas)
    cache.store("a.yaml", (repo / "a.yaml").read_bytes(), "parsed")
    cache.save()
    return cache


def test_the_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", "/x/y")
    assert repo_cache.validate_cache_root() == Path("/x/y/validate")
    monkeypatch.delenv("KUEUE_GITOPS_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert auditor_cache.root() == Path("/xdg/kueue-gitops")


def test_an_entry_is_served_only_under_its_own_keys(repo: Path) -> None:
    filled(repo)
    assert repo_cache.FileCache(repo, "c", "t", "s").unchanged("a.yaml") is not None
    assert repo_cache.FileCache(repo, "c", "t", "other schemas").unchanged("a.yaml") is None
    assert repo_cache.FileCache(repo, "c", "other tool", "s").unchanged("a.yaml") is None
    assert repo_cache.FileCache(repo, "other cluster", "t", "s").unchanged("a.yaml") is None


def test_a_file_changed_within_the_racy_window_is_hashed_not_trusted(repo: Path) -> None:
    (repo / "a.yaml").write_text("kind: A\n")  # same bytes, mtime now: the stat is not trusted
    filled(repo)
    cache = repo_cache.FileCache(repo, "c", "t", "s")
    assert cache.unchanged("a.yaml") is None
    assert cache.same_content("a.yaml", (repo / "a.yaml").read_bytes()) is not None
    assert cache.same_content("a.yaml", b"kind: B\n") is None


def test_a_save_leaves_no_temporary_file_and_an_unreadable_pack_is_ignored(repo: Path) -> None:
    cache = filled(repo)
    assert [p.name for p in cache.file.parent.iterdir()] == ["c.pickle"]
    cache.file.write_bytes(b"garbage")
    assert repo_cache.FileCache(repo, "c", "t", "s").old == {}


def test_packs_of_repositories_unused_for_long_are_pruned(repo: Path, tmp_path: Path) -> None:
    old = filled(repo).file.parent
    past = time.time() - (repo_cache.STALE_DAYS + 1) * 86400
    os.utime(old, (past, past))
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.yaml").write_text("kind: A\n")
    kept = filled(other).file.parent
    assert kept.exists() and not old.exists()
