"""A git revision as a Tree: the repository's files at any ref, read without a checkout.

The only module that imports gitpython. Paths are relative to the kueue-gitops repository, which
may sit in a subfolder of the git repository (`prefix`).
"""

from __future__ import annotations

import contextlib
import posixpath
import typing as t
from pathlib import Path

import git

from auditor.errors import ConfigError
from auditor.repo.layout import Repository
from auditor.repo.tree import MANIFEST_SUFFIXES, SymlinkOutside

_LINK_MODE = 0o120000
_MAX_LINK_HOPS = 16


class GitTree:
    """The files of one commit below `prefix`; the working tree is never touched."""

    def __init__(self, repo: git.Repo, rev: str, prefix: str = "") -> None:
        try:
            self.commit = repo.commit(rev)
        except (git.BadName, git.BadObject, ValueError, git.GitCommandError) as exc:
            raise ConfigError(f"unknown git revision {rev!r} in {repo.working_dir}") from exc
        self.rev = rev
        self.prefix = prefix.strip("/")

    def _full(self, rel: str) -> str:
        rel = rel.strip("/")
        return posixpath.join(self.prefix, rel) if self.prefix else rel

    def _object(self, rel: str) -> git.Tree | git.Blob | None:
        full = self._full(rel)
        if not full or full == ".":
            return self.commit.tree
        try:
            return self.commit.tree[full]
        except KeyError:
            return None

    def files(self, folder: str) -> list[str]:
        tree = self._object(folder)
        if not isinstance(tree, git.Tree):
            return []
        cut = len(self.prefix) + 1 if self.prefix else 0
        paths = (str(item.path) for item in tree.traverse() if isinstance(item, git.Blob))
        return sorted(p[cut:] for p in paths if p.endswith(MANIFEST_SUFFIXES))

    def read(self, path: str) -> bytes:
        rel = path
        for _ in range(_MAX_LINK_HOPS):
            blob = self._object(rel)
            if not isinstance(blob, git.Blob):
                raise FileNotFoundError(f"{path} is not a file at {self.rev}")
            data: bytes = blob.data_stream.read()
            if blob.mode != _LINK_MODE:
                return data
            target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), data.decode()))
            if target.startswith("../") or target == ".." or posixpath.isabs(target):
                raise SymlinkOutside(f"{path} is a link to {data.decode()}, outside the repository")
            rel = target
        raise SymlinkOutside(f"{path}: too many levels of links")

    def is_dir(self, folder: str) -> bool:
        return isinstance(self._object(folder), git.Tree)

    def subfolders(self, folder: str) -> list[str]:
        tree = self._object(folder)
        if not isinstance(tree, git.Tree):
            return []
        return sorted(sub.name for sub in tree.trees if not sub.name.startswith("."))


@contextlib.contextmanager
def revision(root: Path, rev: str) -> t.Iterator[Repository]:
    """The kueue-gitops repository at `root`, as it was at git revision `rev`."""
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise ConfigError(f"{root} is not inside a git repository: no revisions to read") from exc
    try:  # gitpython keeps `git cat-file` helpers running until the repo is closed
        top = Path(repo.working_tree_dir or root).resolve()
        prefix = root.resolve().relative_to(top).as_posix()
        tree = GitTree(repo, rev, "" if prefix == "." else prefix)
        yield Repository(tree, f"{rev} ({tree.commit.hexsha[:12]})")
    finally:
        repo.close()


def commit_on_new_branch(root: Path, branch: str, files: dict[str, bytes], message: str) -> str:
    """Switch the working tree to a new `branch` at HEAD, write `files` there, commit only them.

    Paths are relative to the kueue-gitops repository at `root`. Refuses, touching nothing, when
    the index already holds staged changes (they would ride along) or a file to write has local
    changes (they would be lost). Returns the new commit's sha.
    """
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise ConfigError(f"{root} is not inside a git repository: cannot commit") from exc
    try:
        top = Path(repo.working_tree_dir or root).resolve()
        paths = [(root.resolve() / rel).relative_to(top).as_posix() for rel in files]
        if repo.head.is_valid() and repo.index.diff("HEAD"):
            raise ConfigError("the git index holds staged changes; commit or unstage them first")
        dirty = sorted(set(paths) & {d.a_path for d in repo.index.diff(None)})
        if dirty:
            raise ConfigError(f"uncommitted changes in {', '.join(dirty)}; commit them first")
        if branch in repo.heads:
            raise ConfigError(f"branch {branch} already exists")
        try:
            repo.git.checkout("-b", branch)
        except git.GitCommandError as exc:
            raise ConfigError(f"cannot create branch {branch}: {exc.stderr.strip()}") from exc
        for rel, data in files.items():
            (root / rel).write_bytes(data)
        repo.index.add(paths)
        return str(repo.index.commit(message).hexsha)
    finally:
        repo.close()
