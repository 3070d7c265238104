"""Whether a ClusterQueue can ever admit an ordinary Job: one whose pods ask for cpu and memory.

Kueue's flavor assigner (pkg/scheduler/flavorassigner, `assignFlavors` and
`findFlavorForPodSets`) takes each resource a Workload requests, non-zero, in turn:

- a resource no resource group of the ClusterQueue lists in `coveredResources` ends the attempt
  with "resource memory unavailable in ClusterQueue", on every try: the Workload stays pending.
  Not so when the Configuration says `resources.quotaCheckStrategy: IgnoreUndeclared` (with the
  QuotaCheckStrategy gate on: beta, on by default, from v0.19), which skips undeclared resources,
  nor for a resource `resources.excludeResourcePrefixes` drops from every request;
- a covered resource fits a flavor of its group only within the flavor's "potential available"
  (pkg/cache/scheduler/resource_node.go, `potentialAvailable`): its nominal quota, plus, in a
  cohort, what the rest of the tree lends, capped by its borrowingLimit. When that is 0 for every
  flavor of the group, any request exceeds the "maximum capacity (0)": never admitted either,
  whatever waits or preemptions follow. A nominalQuota of 0 that can borrow is fine while the
  cohort has something to lend.

Cohort-level lending limits are not followed (cohorts.Lending is an upper bound), so a queue is
named only when nothing could ever reach it.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.k8s.objects import FieldPath, Json
from auditor.k8s.quantity import ZERO
from auditor.kueue import cohorts
from auditor.kueue.quota import BORROWING, NOMINAL, cell_of, resource_groups

# What the pods of an ordinary Job ask for: every container names cpu and memory requests (or
# gets them from a LimitRange), and Kueue sums them into the Workload's request.
EVERY_POD = ("cpu", "memory")
IGNORE_UNDECLARED = "IgnoreUndeclared"
GATE = "QuotaCheckStrategy"


@dataclass(frozen=True)
class Blocked:
    """A resource every Pod requests that the ClusterQueue can never give."""

    resource: str
    covered: bool  # False: in no resource group; True: covered, but 0 everywhere
    path: FieldPath  # where to point: its resource group, or the resourceGroups


def ignored(resource: str, config: Json | None, strategy_gate: bool | None) -> bool:
    """Whether Kueue started from `config` never holds `resource` against a ClusterQueue that
    does not cover it (`strategy_gate`: the release's QuotaCheckStrategy gate, None: none)."""
    block = (config or {}).get("resources")
    block = block if isinstance(block, dict) else {}
    prefixes = block.get("excludeResourcePrefixes")
    if isinstance(prefixes, list) and any(resource.startswith(str(p)) for p in prefixes):
        return True
    return bool(strategy_gate) and block.get("quotaCheckStrategy") == IGNORE_UNDECLARED


def blocked(
    cq: Json,
    lending: cohorts.Lending,
    config: Json | None = None,
    strategy_gate: bool | None = None,
    wanted: t.Sequence[str] = EVERY_POD,
) -> list[Blocked]:
    """The resources of `wanted` the ClusterQueue `cq` can never admit, given what its
    cluster's cohorts can lend (`cohorts.Lending.of` the ClusterQueues and Cohorts, `cq`
    included: made once per cluster, since it sums every queue's cells)."""
    groups = list(resource_groups(cq))
    out = []
    for resource in wanted:
        group = next((g for g in groups if resource in g.covered), None)
        if group is None:
            if not ignored(resource, config, strategy_gate):
                out.append(Blocked(resource, False, ("spec", "resourceGroups")))
            continue
        flavors = [str(f.get("name")) for f in group.flavors if isinstance(f, dict)]
        if not any(_reachable(cq, lending, flavor, resource) for flavor in flavors):
            out.append(Blocked(resource, True, group.path))
    return out


def _reachable(cq: Json, lending: cohorts.Lending, flavor: str, resource: str) -> bool:
    """Whether any of `resource` in `flavor` could ever be the ClusterQueue's."""
    cell = cell_of(cq, flavor, resource)
    if cell is None:
        return False  # a malformed group: the schema says so
    if (cell.quantity(NOMINAL) or ZERO) > ZERO:
        return True
    limit = cell.quantity(BORROWING)
    if limit is not None and limit <= ZERO:
        return False
    lent = lending.to(cq, (flavor, resource))
    return lent is not None and lent > ZERO
