"""Whose work a ClusterQueue's preemption policies can evict: Kueue's preemption edges, offline.

`withinClusterQueue` evicts the queue's own workloads. `reclaimWithinCohort` and
`borrowWithinCohort` evict workloads of the other ClusterQueues of its cohort tree, and only of
those borrowing at the time (pkg/scheduler/preemption: a queue within its nominal quota is never
a candidate), so a queue that can never borrow, outside a cohort or with every borrowingLimit 0,
is nobody's victim. Policies are read as written; an unset one is Kueue's default, `Never`.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.k8s.objects import Json
from auditor.k8s.quantity import ZERO
from auditor.kueue import cohorts
from auditor.kueue.quota import BORROWING, cells

NEVER = "Never"
WITHIN = ("withinClusterQueue",)
RECLAIM = ("reclaimWithinCohort",)
BORROW = ("borrowWithinCohort", "policy")
THRESHOLD = ("borrowWithinCohort", "maxPriorityThreshold")
POLICIES: tuple[tuple[str, ...], ...] = (RECLAIM, WITHIN, BORROW)


def _name(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def setting(cq: Json, path: tuple[str, ...]) -> t.Any:
    """A field under spec.preemption, as written (None when unset)."""
    value: t.Any = (cq.get("spec") or {}).get("preemption")
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def active(cq: Json) -> list[tuple[tuple[str, ...], t.Any]]:
    """The policies that preempt (anything but unset or Never), in POLICIES order."""
    return [(p, v) for p in POLICIES if (v := setting(cq, p)) not in (None, NEVER)]


def shown(path: tuple[str, ...], value: t.Any) -> str:
    return f"{'.'.join(path)}: {value}"


def can_borrow(cq: Json) -> bool:
    """Whether a ClusterQueue can ever use more than its nominal quota (so be reclaimed from)."""
    if not cohorts.cohort_of(cq):
        return False
    return any((limit := c.quantity(BORROWING)) is None or limit > ZERO for c in cells(cq))


@dataclass(frozen=True)
class Edge:
    """One policy of one ClusterQueue, and the ClusterQueues whose workloads it can evict."""

    preemptor: str
    policy: tuple[str, ...]
    value: t.Any
    victims: tuple[str, ...]

    @property
    def shown(self) -> str:
        return shown(self.policy, self.value)


def edges(objs: t.Iterable[Json]) -> list[Edge]:
    """Every preemption edge among a cluster's ClusterQueues (Cohorts give the tree shape)."""
    objs = list(objs)
    forest = cohorts.Forest.of(objs)
    queues = [o for o in objs if o.get("kind") == "ClusterQueue"]
    trees: dict[str, list[str]] = {}
    for cq in queues:
        tree = forest.tree_of(cq)
        if tree is not None and can_borrow(cq):
            trees.setdefault(tree, []).append(_name(cq))
    out: list[Edge] = []
    for cq in queues:
        name, tree = _name(cq), forest.tree_of(cq)
        for policy, value in active(cq):
            if policy == WITHIN:
                victims: tuple[str, ...] = (name,)
            else:
                victims = tuple(v for v in trees.get(tree or "", []) if v != name)
            out.append(Edge(name, policy, value, victims))
    return out
