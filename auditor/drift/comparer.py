"""Drift's repository side, in a process of its own: loaded, prepared and compared with each
kind as its LIST arrives (auditor/speed/stream.py), while this process reads the clusters.

Started by the drift command before it imports the Kubernetes client, so the child loads the
manifests (from the packs validate fills, auditor/speed/packs.py, else parsed, filling them),
checks their shapes, reads the tenants' profiles and makes each cluster's read plan while the
parent imports and opens its first LISTs (the CRDs, which the plan always starts with). Each
kind read is put to the child, which adds it to its cluster's `engine.Comparison`; the parent's
interpreter is left to the readers. Without a child (one core, a thread already running, a
repository read from a git revision, whose reader does not survive a fork) the same work runs
here, the repository side prepared before the first repo-dependent LIST.

This module imports nothing heavy: the engine is imported by the process that compares.
"""

from __future__ import annotations

import contextlib
import typing as t
from dataclasses import dataclass
from pathlib import Path

from auditor.drift.reading import Listed, Planned
from auditor.model import Finding
from auditor.repo import cache as repo_cache
from auditor.repo import cached
from auditor.repo.layout import Loaded, Repository
from auditor.speed import packs, stream

if t.TYPE_CHECKING:
    from auditor.drift import engine
    from auditor.drift.shapes import Compiled
    from auditor.live.argocd import Running

Message = tuple[str, "Listed | Running"]  # a cluster's name, one kind's LIST or its Argo CD
Plans = dict[str, list[Planned]]  # each cluster's kinds to read, in order
Compared = tuple[list[Finding], str | None]  # a cluster's findings, or its bug's error
Result = tuple[list[Finding], dict[str, Compared]]  # the repository's own findings beside


def file_caches(repo: Repository, clusters: list[str]) -> dict[str, repo_cache.FileCache]:
    """Each cluster's pack, the one validate reads and fills (auditor/speed/packs.py), the
    tenant profiles' cache on; none for a repository that is not a working tree."""
    tool = packs.tool(repo, True)
    if repo.root is None or tool is None:
        return {}
    with contextlib.suppress(Exception):  # a broken profile is reported where it is next read
        cached.tenants(repo, tool)
    return packs.of_clusters(repo, repo.root / "schemas", clusters, tool)


@dataclass
class Prepared:
    loaded: list[Finding]  # what loading the repository found (a broken manifest...)
    comparisons: dict[str, engine.Comparison]


class RepoSide(stream.Work[Prepared, Message, Plans, Result]):
    """The stream's work: the repository side of `clusters`, then their comparisons."""

    def __init__(
        self, repo: Repository, clusters: list[str], schemas_root: Path | None, cache: bool
    ) -> None:
        self.repo, self.clusters, self.schemas_root = repo, clusters, schemas_root
        self.cache = cache

    def prepare(self) -> Prepared:
        from auditor.drift import engine  # the comparison's imports: where it compares

        caches = file_caches(self.repo, self.clusters) if self.cache else {}
        loaded = cached.load(self.repo, self.clusters, caches)
        for file_cache in caches.values():
            file_cache.save()
        compiled: Compiled = {}  # each kind's schema compiled once for every cluster
        sides = {name: self.side(name, loaded, compiled) for name in self.clusters}
        return Prepared(loaded.findings, {n: engine.Comparison(s) for n, s in sides.items()})

    def side(self, name: str, loaded: Loaded, compiled: Compiled) -> engine.RepoSide:
        """One cluster's repository side: its objects' shapes checked (drift/shapes.py)."""
        from auditor.drift import engine, unread
        from auditor.schemas import catalog

        profile = self.repo.cluster(name)
        found = catalog.find(self.schemas_root, name, profile.kueue_version)
        desired, refused = loaded.for_cluster(name), list[Finding]()
        if found is not None and found.index:
            from auditor.drift import shapes  # the schema validator and CEL: only here

            desired, refused = shapes.sound(profile, found, desired, compiled)
        lost = unread.unread(self.repo, loaded.findings, name)
        return engine.RepoSide(profile, desired, refused, found, self.repo.tenants, lost)

    def early(self, state: Prepared) -> Plans:
        return {name: c.side.plan for name, c in state.comparisons.items()}

    def take(self, state: Prepared, message: Message) -> None:
        name, read = message
        if isinstance(read, Listed):
            state.comparisons[name].add(read)
        else:
            state.comparisons[name].argocd(read)

    def ahead(self, state: Prepared) -> bool:
        return any(c.ahead() for c in state.comparisons.values())

    def finish(self, state: Prepared) -> Result:
        return state.loaded, {n: c.findings() for n, c in state.comparisons.items()}


Comparer = stream.Stream[Prepared, Message, Plans, Result]


def start(
    repo: Repository,
    clusters: list[str],
    schemas_root: Path | None,
    *,
    cache: bool = False,
    fork: bool = True,
) -> Comparer:
    """The repository side of `clusters` under way: in a child when `fork` and forking is for
    here (speed/), never for a git revision's repository. `cache`: through validate's packs."""
    work = RepoSide(repo, clusters, schemas_root, cache)
    return stream.Stream(work, fork=fork and repo.root is not None)
