"""Load the repository for drift: from the validate cache when it holds the files, else in a
forked process while the drift command imports and reads clusters.

The repository side is served from the cache `validate` fills (auditor/repo/cache.py: per
cluster, per file, keyed by content, the cluster's schemas and the tool), and drift fills it
the same way, so a scheduled run after an earlier one (the workflow restores the user cache
directory) parses only the files that changed. When every cluster's pack holds entries, the
load runs here, while the clusters' LISTs are under way (~0.13 CPU-s for 6,000 objects).

Otherwise the load is pure Python work (~0.4 CPU-s for 6,000 objects) and so is importing the
Kubernetes client; threads would take turns on one core. A child forked before those imports
loads the manifests on the other core (filling the cache) and hands them back pickled (a tenth
of the cost). Anything that goes wrong in the child (an error in the repo, a pickling problem,
a crash) makes the parent load the repository itself, so errors surface exactly as without it.

This module imports nothing heavy: the drift command forks before it imports the engine.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import typing as t

from auditor.errors import ConfigError
from auditor.live import forking
from auditor.repo import cache as repo_cache
from auditor.repo import cached
from auditor.repo.layout import Loaded, Repository
from auditor.schemas import catalog


def file_caches(repo: Repository, clusters: list[str]) -> dict[str, repo_cache.FileCache]:
    """Each cluster's validate pack (keyed as validate keys it), the tenant profiles' cache on;
    none for a repository that is not a working tree, or a cluster whose schemas cannot be read.
    The profiles are read now, before any fork, so the loader's child and the fleet's workers
    inherit them."""
    if repo.root is None:
        return {}
    tool = repo_cache.tool_key()
    with contextlib.suppress(Exception):  # a broken profile is reported where it is next read
        cached.tenants(repo, tool)
    caches = {}
    for name in clusters:
        with contextlib.suppress(OSError, ConfigError):  # reported where it is next read
            found = catalog.find(repo.root / "schemas", name, repo.cluster(name).kueue_version)
            if found is not None:
                caches[name] = repo_cache.FileCache(repo.root, name, tool, found.fingerprint())
    return caches


class Preload:
    """A repository's manifests being loaded: here from the cache, or by a child process."""

    def __init__(
        self,
        repo: Repository,
        clusters: list[str],
        caches: t.Mapping[str, repo_cache.FileCache] | None = None,
    ) -> None:
        self.repo, self.clusters = repo, clusters
        self.caches = dict(caches or {})
        self._pid: int | None = None
        self._pipe: int | None = None

    @classmethod
    def start(cls, repo: Repository, clusters: list[str], *, cache: bool = False) -> Preload:
        """With `cache`, use the validate cache; fork the loader unless every cluster's pack
        holds entries, when there is a second core, a working tree to read, and no other
        thread (one holding a lock at the fork would leave it held in the child for good)."""
        preload = cls(repo, clusters, file_caches(repo, clusters) if cache else None)
        warm = bool(preload.caches) and all(c.old for c in preload.caches.values())
        if warm or not forking.alone() or (os.cpu_count() or 1) < 2:
            return preload
        if repo.root is not None:
            preload._fork()
        return preload

    def _load(self) -> Loaded:
        loaded = cached.load(self.repo, self.clusters, self.caches)
        for file_cache in self.caches.values():
            file_cache.save()
        return loaded

    def _fork(self) -> None:
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: load, send, and leave without running the parent's exit code
            os.close(read_end)
            code = 1
            with contextlib.suppress(BaseException):
                data = pickle.dumps(self._load(), pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as out:
                    out.write(data)
                code = 0
            os._exit(code)
        os.close(write_end)
        self._pid, self._pipe = pid, read_end

    def result(self) -> Loaded:
        """The loaded manifests; the tenant profiles are read here meanwhile (drift needs them)."""
        if self._pid is None or self._pipe is None:
            return self._load()
        with contextlib.suppress(Exception):  # a broken profile is reported where it was
            self.repo.tenants  # noqa: B018 - this core is idle until the child answers
        with os.fdopen(self._pipe, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = self._pipe = None
        if status == 0 and data:
            with contextlib.suppress(Exception):
                return t.cast(Loaded, pickle.loads(data))  # our own child's bytes
        return self.repo.load(self.clusters)  # the child failed: load here, errors and all
