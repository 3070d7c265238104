"""The repo read back as if it were the live cluster: a fake of our own reader interface."""

from __future__ import annotations

import copy

from auditor.k8s.objects import Json
from auditor.live.apierrors import DeadlineExceeded
from auditor.live.kube import KubeCluster, Limits
from auditor.repo.layout import Repository


class RepoAsLive(KubeCluster):
    """A cluster holding exactly what the repository says; its deadline passes after `reads`."""

    def __init__(self, name: str, objects: list[Json], reads: int | None = None) -> None:
        self.name, self.objects, self.reads, self.limits = name, objects, reads, Limits(deadline=9)
        self.asked: list[str] = []

    def list(
        self, api_version: str, kind: str, *, page_size: int = 500, selector: str = ""
    ) -> list[Json]:
        self.asked.append(kind)
        if self.reads is not None and len(self.asked) > self.reads:
            raise DeadlineExceeded(f"cluster {self.name}: LIST {kind} not done: the 9s deadline")
        return [copy.deepcopy(o) for o in self.objects if o.get("kind") == kind]


def live_objects(repo: Repository, cluster: str) -> list[Json]:
    return [r.body for r in repo.load([cluster]).for_cluster(cluster)]
