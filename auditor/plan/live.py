"""The plan against live usage: quota cuts below what is in use, and queues still holding work.

Reads each affected cluster once (LIST ClusterQueues, LocalQueues and Workloads), then judges the
plan's risky changes: a nominal quota cut below the queue's reservation warns how much is over and
which admitted Workloads the queue's policies expose first; so does a cut of a Cohort's own quota
(a pool lent to every queue below it) that leaves its tree short of what its members borrow;
removing a LocalQueue or ClusterQueue, or a namespace's admission, while Workloads are pending or
admitted there is an error. The admission policies the plan adds or tightens are judged against
what runs now too (policy_impact.py).
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field
from decimal import Decimal

from auditor import rules
from auditor.errors import ClusterAccessError
from auditor.k8s.objects import KUEUE_GROUP, Json, ResourceKey
from auditor.k8s.quantity import Quantity, is_binary, shown, value_of
from auditor.kueue import cohorts, quota, stop_policy
from auditor.kueue import workloads as kueue_workloads
from auditor.kueue.quota import Cell
from auditor.model import ClusterResult, Finding, Resource
from auditor.plan import policy_impact, removals
from auditor.plan.model import Change, ClusterPlan, Plan

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster
    from auditor.repo.profiles import ClusterProfile

_RULES = rules.of(__name__)
PLAN_REMOVES_QUEUE_IN_USE = _RULES["plan-removes-queue-in-use"]
PLAN_ADMISSION_IN_USE = _RULES["plan-admission-in-use"]
PLAN_QUOTA_BELOW_USAGE = _RULES["plan-quota-below-usage"]


@dataclass
class Workload:
    namespace: str
    name: str
    queue: str | None  # its LocalQueue
    cluster_queue: str | None
    priority: int
    state: kueue_workloads.QuotaState
    since: str  # when quota was reserved ("" when pending)
    usage: dict[Cell, Decimal] = field(default_factory=dict)

    @classmethod
    def from_live(cls, obj: Json, lq_to_cq: dict[tuple[str, str], str]) -> Workload | None:
        """None for a finished Workload: it holds no quota and blocks nothing."""
        if kueue_workloads.finished(obj):
            return None
        meta = obj["metadata"]
        return cls(
            namespace=meta["namespace"],
            name=meta["name"],
            queue=kueue_workloads.local_queue(obj),
            cluster_queue=kueue_workloads.cluster_queue_of(obj, lq_to_cq),
            priority=kueue_workloads.priority(obj),
            state=kueue_workloads.quota_state(obj),
            since=kueue_workloads.reserved_at(obj),
            usage=kueue_workloads.usage(obj),
        )

    def to_json(self) -> Json:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "state": self.state,
            "priority": self.priority,
            "clusterQueue": self.cluster_queue,
            "localQueue": self.queue,
        }


@dataclass
class LiveUsage:
    cluster_queues: dict[str, Json]
    workloads: list[Workload]

    @classmethod
    def read(cls, cluster: KubeCluster, kueue: str) -> LiveUsage:
        """One LIST each of ClusterQueues, LocalQueues and Workloads, in apiVersion `kueue`."""
        cqs = {o["metadata"]["name"]: o for o in cluster.list(kueue, "ClusterQueue")}
        lq_to_cq = {
            (o["metadata"]["namespace"], o["metadata"]["name"]): (o.get("spec") or {}).get(
                "clusterQueue", ""
            )
            for o in cluster.list(kueue, "LocalQueue")
        }
        found = (Workload.from_live(o, lq_to_cq) for o in cluster.list(kueue, "Workload"))
        return cls(cqs, [w for w in found if w is not None])

    def in_use(self, cq: str, cell: Cell) -> Decimal:
        """What the queue holds of a flavor's resource: its status, or its Workloads' sum."""
        live = self.cluster_queues.get(cq) or {}
        seen = [quota.used(live, cell, listed).value for listed in quota.STATUS_FIELDS]
        summed = sum(
            (w.usage.get(cell, Decimal(0)) for w in self.workloads if w.cluster_queue == cq),
            Decimal(0),
        )
        return max([summed, *seen])


# -- judging the plan -----------------------------------------------------------------------


def needs_live(change: Change) -> bool:
    return (
        (
            change.category == "quota"
            and change.key.kind in quota.QUOTA_KINDS
            and change.action == "decreased"
            and bool(change.path and change.path.endswith(quota.NOMINAL))
        )
        or (
            change.category == "object"
            and change.action == "removed"
            and change.key.kind in ("ClusterQueue", "LocalQueue")
        )
        or (change.category == "admission" and change.action == "loses")
    )


def check(plan: Plan, connect: t.Callable[[ClusterProfile], KubeCluster]) -> None:
    """Add live findings to the plan; a cluster that cannot be read makes it incomplete."""
    from auditor.live.credentials import ContextMissing  # the client loads only for a live plan

    plan.live = True
    results = {r.name: r for r in plan.report.clusters}
    for cluster in plan.clusters:
        result = results.setdefault(cluster.name, ClusterResult(cluster.name))
        risky = [c for c in cluster.changes if needs_live(c)]
        if not risky and not policy_impact.changed(cluster):
            continue
        try:
            kube = connect(cluster.profile)
            usage = LiveUsage.read(kube, cluster.profile.kueue_api) if risky else None
            # what the policies the change adds or tightens would refuse of what runs now
            refused, unjudged = policy_impact.findings(cluster, kube)
        except (ClusterAccessError, ContextMissing) as exc:  # that cluster alone is unread
            result.status = "incomplete"
            result.errors.append(str(exc))
            continue
        cluster.live_checked = not unjudged
        if unjudged:  # never clean for what could not be judged
            result.status = "incomplete"
            result.errors.extend(unjudged)
        plan.report.findings.extend(refused)
        for change in risky:
            assert usage is not None
            found = list(_judge(cluster, change, usage))
            removals.weigh(plan.report.findings, cluster.name, change, found)
            plan.report.findings.extend(found)


def _judge(plan: ClusterPlan, change: Change, usage: LiveUsage) -> t.Iterator[Finding]:
    if change.category == "quota" and change.key.kind == "Cohort":
        yield from _cohort_cut(plan, change, usage)
    elif change.category == "quota":
        yield from _quota_cut(plan, change, usage)
    elif change.key.kind == "ClusterQueue":
        busy = [w for w in usage.workloads if w.cluster_queue == change.key.name]
        if busy:
            yield _blocked(plan, change, busy, usage, change.key.name)
    elif change.key.kind == "LocalQueue":
        busy = [
            w
            for w in usage.workloads
            if w.namespace == change.key.namespace and w.queue == change.key.name
        ]
        if busy:
            yield _blocked(plan, change, busy, usage, busy[0].cluster_queue)
    else:
        busy = [w for w in usage.workloads if w.namespace == change.key.name]
        if busy:
            queues = sorted({w.cluster_queue for w in busy if w.cluster_queue})
            yield _blocked(plan, change, busy, usage, ", ".join(queues) or None)


def _counts(workloads: list[Workload]) -> str:
    parts = [
        f"{n} {s}"
        for s in kueue_workloads.QUOTA_STATES
        if (n := sum(w.state == s for w in workloads))
    ]
    return " and ".join(parts) + f" Workload{'s' if len(workloads) > 1 else ''}"


def _blocked(
    plan: ClusterPlan, change: Change, busy: list[Workload], usage: LiveUsage, cq: str | None
) -> Finding:
    key = change.key
    what = (
        f"namespace {key.name} loses admission" if key.kind == "Namespace" else f"{key} is removed"
    )
    held = cq and stop_policy.holds(stop_policy.policy_of(usage.cluster_queues.get(cq) or {}))
    if held:
        advice = f"admission is held on {cq}; wait until they finish (or drain them) first"
    elif cq:
        advice = (
            f"hold admission first (`kueue-gitops hold {cq} --cluster {plan.name}`), "
            "let them finish, then make this change"
        )
    else:
        advice = (
            "hold admission on their ClusterQueue first, let them finish, then make this change"
        )
    return _finding(
        plan,
        change,
        rule=PLAN_REMOVES_QUEUE_IN_USE if key.kind != "Namespace" else PLAN_ADMISSION_IN_USE,
        message=f"{what} while it still has {_counts(busy)} ({_names(busy)}); {advice}",
        extra={"workloads": [w.to_json() for w in busy]},
    )


def _names(workloads: list[Workload], limit: int = 5) -> str:
    listed = ", ".join(f"{w.namespace}/{w.name}" for w in workloads[:limit])
    return listed + (f" and {len(workloads) - limit} more" if len(workloads) > limit else "")


def _quota_cut(plan: ClusterPlan, change: Change, usage: LiveUsage) -> t.Iterator[Finding]:
    cq = plan.head.objects.get(change.key)
    if cq is None or change.cell is None:
        return
    used = usage.in_use(change.key.name, change.cell)
    cut_to = value_of(change.after if change.after is not None else 0)
    if used <= cut_to:
        return
    flavor, resource = change.cell
    binary = is_binary(change.before, change.after)
    over = used - cut_to
    victims = _first_exposed(usage, {change.key.name}, change.cell, over)
    policy = _exposure(plan, cq)
    yield _finding(
        plan,
        change,
        rule=PLAN_QUOTA_BELOW_USAGE,
        message=f"{change.key.name} {flavor} {resource} nominalQuota "
        f"{change.before} → {change.after if change.after is not None else 'none'} is below the "
        f"{shown(used, binary=binary)} in use ({shown(over, binary=binary)} over); {policy}"
        + (
            f"; first exposed: {', '.join(_victim(w, change.cell, binary) for w in victims)}"
            if victims
            else ""
        ),
        extra={
            "inUse": shown(used, binary=binary),
            "over": shown(over, binary=binary),
            "exposedWorkloads": [w.to_json() for w in victims],
        },
    )


def _first_exposed(usage: LiveUsage, cqs: set[str], cell: Cell, over: Decimal) -> list[Workload]:
    """The Workloads of `cqs` Kueue would evict first until `over` is freed."""
    holders = kueue_workloads.victim_order(
        (
            w
            for w in usage.workloads
            if w.cluster_queue in cqs and w.state != "pending" and w.usage.get(cell)
        ),
        priority=lambda w: w.priority,
        since=lambda w: w.since,
    )
    chosen, freed = [], Decimal(0)
    for w in holders:
        if freed >= over:
            break
        chosen.append(w)
        freed += w.usage[cell]
    return chosen


def _cohort_cut(plan: ClusterPlan, change: Change, usage: LiveUsage) -> t.Iterator[Finding]:
    """A cut of a Cohort's own quota, weighed over its whole tree: what the queues in it draw
    from the pool beyond what they keep, against what the pool holds after the cut (the cut
    counted in full at the root: Cohort lendingLimits between are ignored, as in Lending)."""
    if change.cell is None:
        return
    holders = [
        r.body
        for key, r in plan.head.objects.items()
        if key.kind in quota.QUOTA_KINDS and key.group == KUEUE_GROUP
    ]
    tree = cohorts.Forest.of(holders).root(change.key.name)

    def held(obj: Json, cell: Cell) -> Quantity:
        return Quantity(usage.in_use(str(obj["metadata"]["name"]), cell))

    after = cohorts.pool(holders, tree, change.cell, held)
    cut = value_of(change.before or 0) - value_of(change.after or 0)
    before_over = max(after.drawn.value - after.quota.value - cut, Decimal(0))
    over = after.over.value - before_over
    if over <= 0:
        return
    flavor, resource = change.cell
    binary = is_binary(change.before, change.after)
    victims = _first_exposed(usage, set(after.borrowers), change.cell, over)
    borrowing = f" ({', '.join(after.borrowers)} borrowing)" if after.borrowers else ""
    yield _finding(
        plan,
        change,
        rule=PLAN_QUOTA_BELOW_USAGE,
        message=f"Cohort {change.key.name} {flavor} {resource} nominalQuota {change.before} → "
        f"{change.after if change.after is not None else 'none'} leaves cohort tree {tree} "
        f"{shown(over, binary=binary)} short: its queues draw "
        f"{shown(after.drawn.value, binary=binary)} from a pool that would hold "
        f"{shown(after.quota.value, binary=binary)}{borrowing}; "
        f"{_reclaim(holders, tree, after.borrowers)}"
        + (
            f"; first exposed: {', '.join(_victim(w, change.cell, binary) for w in victims)}"
            if victims
            else ""
        ),
        extra={
            "inUse": shown(after.drawn.value, binary=binary),
            "over": shown(over, binary=binary),
            "exposedWorkloads": [w.to_json() for w in victims],
        },
    )


def _reclaim(holders: list[Json], tree: str, borrowers: tuple[str, ...]) -> str:
    """Who may take back what the tree's borrowers hold beyond the pool."""
    forest = cohorts.Forest.of(holders)
    reclaimers = [
        f"{cq['metadata']['name']} (reclaimWithinCohort: {policy})"
        for cq in holders
        if cq.get("kind") == "ClusterQueue"
        and forest.tree_of(cq) == tree
        and cq["metadata"]["name"] not in borrowers
        and (policy := _policy(cq, "reclaimWithinCohort")) != "Never"
    ]
    if reclaimers:
        return "the excess may be reclaimed by " + ", ".join(reclaimers)
    return (
        "no policy reclaims it: the borrowing Workloads keep running, and new borrowing in "
        f"the tree of {tree} waits until its queues draw less than the pool holds"
    )


def _policy(cq: Json, name: str) -> str:
    return str(((cq.get("spec") or {}).get("preemption") or {}).get(name, "Never"))


def _victim(w: Workload, cell: Cell, binary: bool) -> str:
    amount = shown(w.usage[cell], binary=binary)
    return f"{w.namespace}/{w.name} (priority {w.priority}, {amount} {cell[1]})"


def _exposure(plan: ClusterPlan, cq: Resource) -> str:
    """Who may take the over-quota part back, under the queues' preemption policies."""
    spec = cq.body.get("spec") or {}
    cohort = cohorts.cohort_of(cq.body)
    reclaimers = [
        f"{other.name} (reclaimWithinCohort: {policy})"
        for key, other in sorted(plan.head.objects.items())
        if key.kind == "ClusterQueue"
        and key != cq.key
        and cohort
        and cohorts.cohort_of(other.body) == cohort
        and (
            policy := ((other.body.get("spec") or {}).get("preemption") or {}).get(
                "reclaimWithinCohort", "Never"
            )
        )
        != "Never"
    ]
    within = (spec.get("preemption") or {}).get("withinClusterQueue", "Never")
    parts = []
    if reclaimers:
        parts.append(
            f"the excess counts as borrowed from cohort {cohort} and may be reclaimed by "
            + ", ".join(reclaimers)
        )
    if within != "Never":
        parts.append(f"pending work in the queue may preempt it (withinClusterQueue: {within})")
    if not parts:
        return (
            "no policy preempts the running Workloads: they keep running, and new work in "
            f"{cq.name} waits until usage falls below the new quota"
        )
    return "; ".join(parts)


def _finding(
    plan: ClusterPlan,
    change: Change,
    *,
    rule: rules.Rule,
    message: str,
    extra: dict[str, t.Any],
) -> Finding:
    key: ResourceKey = change.key
    resource = plan.head.objects.get(key) or plan.base.objects.get(key)
    return Finding(
        rule,
        message,
        cluster=plan.name,
        api_version=resource.api_version if resource else None,
        kind=key.kind,
        namespace=key.namespace,
        name=key.name,
        file=change.file,
        line=change.line,
        path=change.path,
        extra=extra,
    )
