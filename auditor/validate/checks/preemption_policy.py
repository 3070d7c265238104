"""Preemption authority stays narrow: tenants' queues preempt only lower priority work.

`reclaimWithinCohort: Any` evicts borrowed work of any priority, and `withinClusterQueue:
LowerOrNewerEqualPriority` evicts equal-priority work that merely arrived earlier; a
ClusterQueue may use them only where its cluster profile allows it by name
(`preemption.allow.<queue>`). Preempting while borrowing (`borrowWithinCohort`) must name a
`maxPriorityThreshold` below the platform's own priority levels, so borrowed capacity can never
evict work the platform ranks above every tenant.

Its rules, each with an example that passes and one that fails, are declared beside it in
preemption_policy.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import preemption
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE, platform_floor

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
PREEMPTION_POLICY_TOO_BROAD = RULES["preemption-policy-too-broad"]
BORROW_PREEMPTION_UNBOUNDED = RULES["borrow-preemption-unbounded"]

ID = "preemption-policy"
# Its findings about a ClusterQueue depend on it, the priority classes and the profile
# (protocol.Rerun).
RERUN = protocol.per_object_of("ClusterQueue")
NARROW = ("Never", "LowerPriority")


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    floor = platform_floor(ctx)
    for cq in ctx.of_kind("ClusterQueue"):
        if cq.key.group != KUEUE:
            continue
        allowed = ctx.cluster.preemption_allowed.get(cq.name, {})
        for path in (preemption.RECLAIM, preemption.WITHIN):
            value = preemption.setting(cq.body, path)
            if value is None or value in NARROW or allowed.get(path[0]) == value:
                continue
            yield Finding.about(
                cq,
                PREEMPTION_POLICY_TOO_BROAD,
                f"ClusterQueue {cq.name} sets {preemption.shown(path, value)}, which evicts more "
                f"than lower-priority work; use Never or LowerPriority, or allow it for this "
                f"queue in {ctx.cluster.file} (preemption.allow.{cq.name}.{path[0]})",
                path=["spec", "preemption", *path],
            )
        if preemption.setting(cq.body, preemption.BORROW) in (None, preemption.NEVER):
            continue
        threshold = preemption.setting(cq.body, preemption.THRESHOLD)
        if threshold is None:
            why = "sets no maxPriorityThreshold, so it can evict work of any lower priority"
        elif floor is not None and (not isinstance(threshold, int) or threshold >= floor[0]):
            why = f"has maxPriorityThreshold {threshold}, not below {floor[1]} ({floor[0]})"
        else:
            continue
        bound = f" below {floor[0]}" if floor else ""
        yield Finding.about(
            cq,
            BORROW_PREEMPTION_UNBOUNDED,
            f"ClusterQueue {cq.name} preempts while borrowing but {why}; set "
            f"borrowWithinCohort.maxPriorityThreshold{bound}, to the highest level borrowed "
            "capacity may evict",
            path=["spec", "preemption", *preemption.THRESHOLD],
        )
