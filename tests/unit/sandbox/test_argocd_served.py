"""The repository Argo CD reads in the sandbox: a bare clone at the current commit, plus the
working tree's uncommitted changes as one commit, never written into the repository itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

from auditor.sandbox.argocd import serve_repository


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout.rstrip()  # fmt: skip


def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "clusters/c").mkdir(parents=True)
    (root / "clusters/c/queues.yaml").write_text("a: 1\n")
    (root / ".gitignore").write_text("build/\n")
    git("init", "--quiet", "--initial-branch", "work", cwd=root)
    git("add", "--all", cwd=root)
    git("commit", "--quiet", "-m", "first", cwd=root)
    return root


def show(bare: Path, path: str) -> str:
    return git("--git-dir", str(bare), "show", f"main:{path}", cwd=bare.parent)


def test_a_clean_tree_is_served_at_its_commit_on_main(tmp_path: Path) -> None:
    root = repo(tmp_path)
    served = serve_repository(root, tmp_path / "served.git")
    assert served == git("rev-parse", "HEAD", cwd=root)
    assert show(tmp_path / "served.git", "clusters/c/queues.yaml") == "a: 1"


def test_uncommitted_changes_are_one_more_commit_and_the_repository_is_untouched(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path)
    head = git("rev-parse", "HEAD", cwd=root)
    (root / "clusters/c/queues.yaml").write_text("a: 2\n")
    (root / "clusters/c/new.yaml").write_text("b: 1\n")
    (root / "build").mkdir()
    (root / "build/ignored.yaml").write_text("c: 1\n")
    objects_before = git("count-objects", cwd=root)

    served = serve_repository(root, tmp_path / "served.git")
    bare = tmp_path / "served.git"
    assert served != head
    assert git("--git-dir", str(bare), "rev-parse", "main^", cwd=tmp_path) == head
    assert show(bare, "clusters/c/queues.yaml") == "a: 2"
    assert show(bare, "clusters/c/new.yaml") == "b: 1"
    tree = git("--git-dir", str(bare), "ls-tree", "-r", "--name-only", "main", cwd=tmp_path)
    assert "build/ignored.yaml" not in tree.split()
    # Nothing was staged, committed or written into the repository being served.
    assert git("rev-parse", "HEAD", cwd=root) == head
    assert git("status", "--porcelain", cwd=root).splitlines() == [
        " M clusters/c/queues.yaml",
        "?? clusters/c/new.yaml",
    ]
    assert git("count-objects", cwd=root) == objects_before
