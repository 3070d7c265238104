"""A plan: what a change between two revisions does to each cluster, as data the renderers read."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

from auditor.k8s.objects import ResourceKey
from auditor.model import Report, Resource
from auditor.repo.profiles import ClusterProfile


@dataclass
class Change:
    """One thing the change does to a cluster; `before`/`after` are None when absent."""

    cluster: str
    category: str  # quota | cohort | admission | object
    action: str  # added | removed | changed | increased | decreased | gains | loses
    key: ResourceKey
    summary: str
    path: str | None = None
    before: t.Any = None
    after: t.Any = None
    delta: str | None = None
    file: str | None = None
    line: int | None = None
    cell: tuple[str, str] | None = None  # (flavor, resource) of a quota change

    def to_json(self) -> dict[str, t.Any]:
        return {
            "cluster": self.cluster,
            "category": self.category,
            "action": self.action,
            "kind": self.key.kind,
            "namespace": self.key.namespace,
            "name": self.key.name,
            "path": self.path,
            "before": self.before,
            "after": self.after,
            "delta": self.delta,
            "flavor": self.cell[0] if self.cell else None,
            "resource": self.cell[1] if self.cell else None,
            "file": self.file,
            "line": self.line,
            "summary": self.summary,
        }


@dataclass
class ClusterRevision:
    """One revision of one cluster: its profile (None when absent) and its objects by key."""

    profile: ClusterProfile | None
    objects: dict[ResourceKey, Resource] = field(default_factory=dict)


@dataclass
class ClusterPlan:
    name: str
    base: ClusterRevision
    head: ClusterRevision
    changes: list[Change] = field(default_factory=list)
    live_checked: bool = False

    @property
    def profile(self) -> ClusterProfile:
        found = self.head.profile or self.base.profile
        assert found is not None  # a cluster is planned only when one side has it
        return found


@dataclass
class Plan:
    base: str
    head: str
    clusters: list[ClusterPlan]
    report: Report
    live: bool = False  # whether the plan was weighed against live usage (plan_live.check)

    def __post_init__(self) -> None:
        self.report.section = self  # the plan is its report's section

    def to_json(self) -> dict[str, t.Any]:
        """The plan's keys of the JSON report."""
        return {
            "base": self.base,
            "head": self.head,
            "changes": [c.to_json() for p in self.clusters for c in p.changes],
        }

    @property
    def change_count(self) -> int:
        return sum(len(p.changes) for p in self.clusters)
