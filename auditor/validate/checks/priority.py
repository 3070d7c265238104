"""Priority levels are the platform's: defined only in clusters/, and every level a tenant may use
exists on each cluster it runs on.

WorkloadPriorityClasses and PriorityClasses are cluster-wide, and a tenant that could define one
could outrank everybody. A level a tenant profile lists but the cluster lacks makes the tenant's
jobs fail at submission.

Its rules, each with an example that passes and one that fails, are declared beside it in
priority.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import PRIORITY_KINDS, about_profile, named

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
PRIORITY_CLASS_IN_TENANT_FOLDER = RULES["priority-class-in-tenant-folder"]
PRIORITY_LEVEL_MISSING = RULES["priority-level-missing"]

ID = "priority"
RERUN = protocol.CLUSTER

KINDS = PRIORITY_KINDS


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    for kind, group in KINDS.values():
        for resource in ctx.of_kind(kind):
            if resource.tenant and resource.key.group == group:
                yield Finding.about(
                    resource,
                    PRIORITY_CLASS_IN_TENANT_FOLDER,
                    f"{kind} {resource.name} is cluster-wide and platform-owned: define it in "
                    f"clusters/{ctx.cluster.name}/, not in a tenant folder",
                    path=["kind"],
                )
    defined_by_use = {use: named(ctx, kind, group) for use, (kind, group) in KINDS.items()}
    for tenant in ctx.tenants.values():
        if ctx.cluster.name not in tenant.clusters:
            continue
        levels = {"workload": tenant.workload_priority_classes, "pod": tenant.pod_priority_classes}
        for use, (kind, _) in KINDS.items():
            defined = defined_by_use[use]
            for i, level in enumerate(levels[use]):
                if level not in defined and not ctx.unrendered:  # unrendered: maybe unread
                    yield about_profile(
                        ctx,
                        tenant,
                        PRIORITY_LEVEL_MISSING,
                        f"{tenant.name} may use {kind} {level}, but {ctx.cluster.name} defines no "
                        f"such class (known: {', '.join(sorted(defined)) or 'none'}); jobs "
                        "requesting it would be rejected",
                        ("spec", "priorityClasses", use, i),
                    )
