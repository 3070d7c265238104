"""A git revision as a Tree: the repository's files at any ref, read without a checkout; the
runbook's commit on a new branch; the copy of the repository the sandbox's Argo CD serves.

The only module that imports gitpython (and so the only one that drives git). Paths are
relative to the kueue-gitops repository, which may sit in a subfolder of the git repository
(`prefix`).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import typing as t
from pathlib import Path

import git

from auditor.errors import ConfigError
from auditor.repo.layout import Repository
from auditor.repo.tree import (
    MANIFEST_SUFFIXES,
    MAX_FILE_BYTES,
    SymlinkLoop,
    SymlinkOutside,
    too_large,
)

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
        self._refused: dict[str, OSError] = {}

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

    def _resolve(self, rel: str, hops: int = 0) -> str:
        """`rel` with every link on its way followed: a path of the commit below the prefix.

        A link leading out of the repository raises SymlinkOutside; links that go on and on,
        SymlinkLoop."""
        parts = [p for p in rel.strip("/").split("/") if p not in ("", ".")]
        for i in range(len(parts)):
            obj = self._object("/".join(parts[: i + 1]))
            if not (isinstance(obj, git.Blob) and obj.mode == _LINK_MODE):
                continue
            if hops >= _MAX_LINK_HOPS:
                raise SymlinkLoop(f"{rel}: links lead round in a circle")
            link = obj.data_stream.read().decode(errors="replace")
            target = posixpath.normpath(posixpath.join("/".join(parts[:i]), link))
            if target.startswith("../") or target == ".." or posixpath.isabs(target):
                raise SymlinkOutside(f"{rel} is a link to {link}, outside the repository")
            return self._resolve("/".join([target, *parts[i + 1 :]]), hops + 1)
        return "/".join(parts)

    def files(self, folder: str, suffixes: tuple[str, ...] = MANIFEST_SUFFIXES) -> list[str]:
        """The manifests (files ending in one of `suffixes`) below `folder`, linked folders
        inside the repository followed; links out of it or in a loop are listed as "path/"
        and refused by `read`."""
        rel = folder.strip("/")
        try:
            real = self._resolve(rel)
        except OSError as exc:
            return [self._refuse(rel, exc)]
        tree = self._object(real)
        if not isinstance(tree, git.Tree):
            return []
        parts = real.split("/") if real else []
        chain = frozenset("/".join(parts[:i]) for i in range(len(parts) + 1))
        found: list[str] = []
        self._walk(rel, real, tree, chain, found, suffixes)
        return sorted(found)

    def _walk(
        self,
        rel: str,
        real: str,
        tree: git.Tree,
        chain: frozenset[str],
        found: list[str],
        suffixes: tuple[str, ...] = MANIFEST_SUFFIXES,
    ) -> None:
        for item in tree:
            child = f"{rel}/{item.name}" if rel else item.name
            inner = f"{real}/{item.name}" if real else item.name
            if isinstance(item, git.Tree):
                self._walk(child, inner, item, chain | {inner}, found, suffixes)
            elif item.mode != _LINK_MODE:
                if item.name.endswith(suffixes):
                    found.append(child)
            elif item.name.endswith(suffixes):
                found.append(child)  # read() follows it, or says why not
            else:
                self._linked_folder(child, chain, found, suffixes)

    def _linked_folder(
        self,
        child: str,
        chain: frozenset[str],
        found: list[str],
        suffixes: tuple[str, ...] = MANIFEST_SUFFIXES,
    ) -> None:
        try:
            target = self._resolve(child)
        except OSError as exc:
            found.append(self._refuse(child, exc))
            return
        obj = self._object(target)
        if not isinstance(obj, git.Tree):
            return  # a link to a file that is no manifest
        if target in chain:
            loop = SymlinkLoop(f"{child} is a link to {target}, a folder that holds it: a loop")
            found.append(self._refuse(child, loop))
        else:
            self._walk(child, target, obj, chain | {target}, found, suffixes)

    def _refuse(self, rel: str, why: OSError) -> str:
        key = rel.rstrip("/") + "/"
        self._refused[key] = why
        return key

    def read(self, path: str) -> bytes:
        refused = self._refused.get(path)
        if refused is not None:
            raise refused
        blob = self._object(self._resolve(path))
        if not isinstance(blob, git.Blob):
            raise FileNotFoundError(f"{path} is not a file at {self.rev}")
        if blob.size > MAX_FILE_BYTES:
            raise too_large(path, blob.size)
        data: bytes = blob.data_stream.read()
        return data

    def is_dir(self, folder: str) -> bool:
        try:
            return isinstance(self._object(self._resolve(folder)), git.Tree)
        except OSError:
            return False

    def subfolders(self, folder: str) -> list[str]:
        """Folders, and links to folders (a link out of the repository too: loading it says why
        it is refused)."""
        try:
            tree = self._object(self._resolve(folder))
        except OSError:
            return []
        if not isinstance(tree, git.Tree):
            return []
        names = [sub.name for sub in tree.trees]
        for blob in tree.blobs:
            if blob.mode == _LINK_MODE and not blob.name.endswith(MANIFEST_SUFFIXES):
                try:
                    target = self._object(self._resolve(f"{folder}/{blob.name}"))
                except OSError:
                    names.append(blob.name)
                    continue
                if isinstance(target, git.Tree):
                    names.append(blob.name)
        return sorted(n for n in names if not n.startswith("."))


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


# -- a served copy of the repository (the sandbox's Argo CD syncs from it) --------------------

_SANDBOX_AUTHOR = {
    "GIT_AUTHOR_NAME": "kueue-gitops sandbox",
    "GIT_AUTHOR_EMAIL": "sandbox@kueue-gitops.invalid",
    "GIT_COMMITTER_NAME": "kueue-gitops sandbox",
    "GIT_COMMITTER_EMAIL": "sandbox@kueue-gitops.invalid",
}


def _run(repo: git.Repo, *args: str, env: t.Mapping[str, str] | None = None) -> str:
    try:
        return str(repo.git.execute(["git", *args], env={**os.environ, **(env or {})})).strip()
    except git.GitCommandError as exc:
        raise ConfigError(f"`git {' '.join(args)}` failed: {exc.stderr.strip()}") from exc


def snapshot(root: Path, bare: Path, branch: str) -> str:
    """A bare clone of the repository at `root`, written at `bare`, whose `branch` is the
    current commit with the working tree's uncommitted changes (untracked files included,
    ignored ones not) as one more commit on top; the commit `branch` names. Nothing is written
    into `root`'s own repository."""
    shutil.rmtree(bare, ignore_errors=True)
    try:
        source = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise ConfigError(f"{root} is not inside a git repository: nothing to serve") from exc
    with contextlib.closing(source):
        head = source.head.commit.hexsha
        top = Path(source.working_tree_dir or root)
    with contextlib.closing(
        git.Repo.clone_from(str(top), str(bare), bare=True, no_hardlinks=True)
    ) as served:
        index = bare / "snapshot-index"
        env = {"GIT_DIR": str(bare), "GIT_WORK_TREE": str(top), "GIT_INDEX_FILE": str(index)}
        _run(served, "read-tree", head, env=env)
        _run(served, "add", "--all", env=env)
        tree = _run(served, "write-tree", env=env)
        index.unlink(missing_ok=True)
        commit = head
        if tree != served.commit(head).tree.hexsha:
            message = f"uncommitted changes of the working tree on top of {head[:12]}"
            commit = _run(
                served, "commit-tree", tree, "-p", head, "-m", message, env=_SANDBOX_AUTHOR
            )
        _run(served, "update-ref", f"refs/heads/{branch}", commit)
        _run(served, "symbolic-ref", "HEAD", f"refs/heads/{branch}")
    return commit


def clone_or_pull(url: str, work: Path, branch: str) -> Path:
    """A working clone of `url`'s `branch` at `work` (made once), brought up to date."""
    if not (work / ".git").is_dir():
        try:
            git.Repo.clone_from(url, str(work), branch=branch).close()
        except git.GitCommandError as exc:
            raise ConfigError(f"cannot clone {url}: {exc.stderr.strip()}") from exc
    with contextlib.closing(git.Repo(work)) as repo:
        _run(repo, "pull", "--quiet", "--ff-only")
    return work


def commit_and_push(work: Path, message: str, branch: str) -> str:
    """Commit everything in the clone at `work` and push it to its origin's `branch`; the
    commit's sha."""
    with contextlib.closing(git.Repo(work)) as repo:
        _run(repo, "add", "--all")
        _run(repo, "commit", "--quiet", "-m", message, env=_SANDBOX_AUTHOR)
        _run(repo, "push", "--quiet", "origin", branch)
        return str(repo.head.commit.hexsha)
