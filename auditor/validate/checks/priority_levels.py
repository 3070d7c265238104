"""Business priority never becomes preemption authority.

A pod PriorityClass a tenant may use (its profile lists it, or it is the global default) must
have `preemptionPolicy: Never`: with the default, PreemptLowerPriority, the scheduler evicts
other tenants' Pods behind Kueue's back. Every class a tenant may use, pod or workload, must be
below each of the platform's own levels (`priority.platformLevels` in the cluster profile, or the
classes no tenant lists), and WorkloadPriorityClass values must rise in the order the profile
declares (`priority.workloadOrder`), or a rename silently reorders who preempts whom.

Its rules, each with an example that passes and one that fails, are declared beside it in
priority_levels.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import (
    PRIORITY_KINDS,
    named,
    platform_floor,
    priority_value,
    tenant_levels,
)

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
PRIORITY_CLASS_PREEMPTS = RULES["priority-class-preempts"]
PRIORITY_ABOVE_PLATFORM = RULES["priority-above-platform"]
PRIORITY_ORDER = RULES["priority-order"]

ID = "priority-levels"
RERUN = protocol.CLUSTER


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    floor = platform_floor(ctx)
    for use, (kind, group) in PRIORITY_KINDS.items():
        usable = tenant_levels(ctx, use)
        for name, resource in sorted(named(ctx, kind, group).items()):
            default = use == "pod" and resource.body.get("globalDefault") is True
            if name not in usable and not default:
                continue
            who = "tenants may use it" if name in usable else "it is the global default"
            policy = resource.body.get("preemptionPolicy", "PreemptLowerPriority")
            if use == "pod" and policy != "Never":
                yield Finding.about(
                    resource,
                    PRIORITY_CLASS_PREEMPTS,
                    f"PriorityClass {name} has preemptionPolicy {policy} and {who}: the "
                    "scheduler would evict other Pods for them, outside Kueue's quota and "
                    "preemption rules; set preemptionPolicy: Never",
                    path=["preemptionPolicy"],
                )
            value = priority_value(resource)
            if floor is not None and value is not None and value >= floor[0]:
                yield Finding.about(
                    resource,
                    PRIORITY_ABOVE_PLATFORM,
                    f"{kind} {name} has value {value} and {who}, but the platform's "
                    f"{floor[1]} is {floor[0]}: tenant levels must stay below every platform "
                    "level; lower the value",
                    path=["value"],
                )
    yield from _order(ctx)


def _order(ctx: CheckContext) -> t.Iterator[Finding]:
    kind, group = PRIORITY_KINDS["workload"]
    defined = named(ctx, kind, group)
    previous: tuple[str, int] | None = None
    for name in ctx.cluster.priority_order:
        resource = defined.get(name)
        value = priority_value(resource) if resource is not None else None
        if resource is None or value is None:
            continue  # a missing level is priority-level-missing's, a bad value the schema's
        if previous is not None and value <= previous[1]:
            yield Finding.about(
                resource,
                PRIORITY_ORDER,
                f"WorkloadPriorityClass {name} has value {value}, not above {previous[0]} "
                f"({previous[1]}), though {ctx.cluster.file} orders it higher "
                "(priority.workloadOrder); fix the value or the order",
                path=["value"],
            )
        previous = (name, value)
