"""Load the repository for drift: from the validate cache when it holds the files, else in a
forked process while the drift command imports and reads clusters.

The repository side is served from the packs `validate` fills (per cluster, per file, keyed
by content, the cluster's schemas and Kueue release and the tool; opened one way for both by
auditor/speed/packs.py), and drift fills them the same way, so a scheduled run after an
earlier one (the workflow restores the user cache directory) parses only the files that
changed. When every cluster's pack holds entries, the load runs here, while the clusters'
LISTs are under way (~0.13 CPU-s for 6,000 objects).

Otherwise the load is pure Python work (~0.4 CPU-s for 6,000 objects) and so is importing the
Kubernetes client; threads would take turns on one core. A child forked (speed/parallel.py)
before those imports loads the manifests on the other core (filling the cache) and hands them
back pickled (a tenth of the cost); a child that fails leaves the parent to load them, so
errors surface exactly as without it.

This module imports nothing heavy: the drift command forks before it imports the engine.
"""

from __future__ import annotations

import contextlib
import typing as t

from auditor.repo import cache as repo_cache
from auditor.repo import cached
from auditor.repo.layout import Loaded, Repository
from auditor.speed import packs, parallel


def file_caches(repo: Repository, clusters: list[str]) -> dict[str, repo_cache.FileCache]:
    """Each cluster's pack, the one validate reads and fills (auditor/speed/packs.py), the
    tenant profiles' cache on; none for a repository that is not a working tree. The profiles
    are read now, before any fork, so the loader's child and the fleet's workers inherit them."""
    tool = packs.tool(repo, True)
    if repo.root is None or tool is None:
        return {}
    with contextlib.suppress(Exception):  # a broken profile is reported where it is next read
        cached.tenants(repo, tool)
    return packs.of_clusters(repo, repo.root / "schemas", clusters, tool)


class Preload:
    """A repository's manifests being loaded: here from the cache, or by a child process."""

    def __init__(
        self,
        repo: Repository,
        clusters: list[str],
        caches: t.Mapping[str, repo_cache.FileCache] | None = None,
        *,
        fork: bool = False,
    ) -> None:
        self.repo, self.clusters = repo, clusters
        self.caches = dict(caches or {})
        # One piece of work, in a child when `fork` (else here, when asked for its result).
        self._loading = parallel.start(self._load, [None], 1 if fork else 0, share=False)

    @classmethod
    def start(cls, repo: Repository, clusters: list[str], *, cache: bool = False) -> Preload:
        """With `cache`, use the validate cache; fork the loader (when forking is for here,
        speed/parallel.py) unless every cluster's pack holds entries, or the repository is not
        a working tree (a git revision's reader does not survive a fork)."""
        caches = file_caches(repo, clusters) if cache else {}
        warm = bool(caches) and all(c.old for c in caches.values())
        return cls(repo, clusters, caches, fork=not warm and repo.root is not None)

    @property
    def forked(self) -> bool:
        return self._loading.forked

    def _load(self, _: None = None) -> Loaded:
        loaded = cached.load(self.repo, self.clusters, self.caches)
        for file_cache in self.caches.values():
            file_cache.save()
        return loaded

    def result(self) -> Loaded:
        """The loaded manifests; the tenant profiles are read here meanwhile (drift needs them).
        A child that failed in any way: loaded here, errors and all."""
        if self._loading.forked:
            with contextlib.suppress(Exception):  # a broken profile is reported where it was
                self.repo.tenants  # noqa: B018 - this core is idle until the child answers
        (loaded,) = self._loading.results()
        return loaded
