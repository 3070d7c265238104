"""Preemption other than `Never` only where every tenant of the ClusterQueue has proven it safe.

A preempted job is killed and started again later. That is harmless only for jobs that resume
from checkpoints and write their output idempotently, so a ClusterQueue may preempt only when
each tenant whose profile lists it on this cluster declares both `checkpointingValidated` and
`idempotentOutputValidated` (and it has at least one tenant).

Its rules, with an example that passes and one that fails each, are in the catalogue:
auditor/rules/queues.py (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor.model import Finding
from auditor.validate.checks._common import KUEUE, queue_tenants, spec_of

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

ID = "preemption"
CATEGORY = "preemption"
RULES = ("preemption-unvalidated",)

POLICIES: tuple[tuple[str, ...], ...] = (
    ("reclaimWithinCohort",),
    ("withinClusterQueue",),
    ("borrowWithinCohort", "policy"),
)


def _policy(preemption: dict[str, t.Any], path: tuple[str, ...]) -> t.Any:
    value: t.Any = preemption
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    tenants_of = queue_tenants(ctx)
    for cq in ctx.of_kind("ClusterQueue"):
        preemption = spec_of(cq).get("preemption")
        if cq.key.group != KUEUE or not isinstance(preemption, dict):
            continue
        active = [p for p in POLICIES if _policy(preemption, p) not in (None, "Never")]
        if not active:
            continue
        tenants = tenants_of.get(cq.name, [])
        unsafe = [tenant.name for tenant in tenants if not tenant.preemption_safe]
        if tenants and not unsafe:
            continue
        why = (
            f"tenant(s) {', '.join(unsafe)} have not declared checkpointingValidated and "
            "idempotentOutputValidated in their profiles"
            if unsafe
            else f"no tenant profile lists this ClusterQueue on {ctx.cluster.name}, so nobody "
            "has declared its jobs survive preemption"
        )
        fields = ", ".join(f"{'.'.join(p)}: {_policy(preemption, p)}" for p in active)
        yield Finding.about(
            cq,
            "preemption-unvalidated",
            f"ClusterQueue {cq.name} preempts ({fields}) but {why}; set Never until they do",
            CATEGORY,
            path=["spec", "preemption", *active[0]],
        )
