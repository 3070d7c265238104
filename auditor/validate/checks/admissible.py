"""ClusterQueues no ordinary Job can be admitted to, and the LocalQueues that lead to them.

Every pod of a real Job asks for cpu and memory. A ClusterQueue that covers only the GPUs it was
given quota for (what `tenant add --quota a100.nvidia.com/gpu=8` used to write), or covers cpu
with no quota and nothing to borrow, looks clean to every schema and to drift, and leaves every
Job pending forever ("resource memory unavailable in ClusterQueue"). When that is so is Kueue's
flavor assigner's rule, kept in auditor/kueue/admissible.py; ClusterQueues whose quota Kueue
itself writes (MultiKueue quota automation) are left out.

Its rules, each with an example that passes and one that fails, are declared beside it in
admissible.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import admissible, cohorts, multikueue
from auditor.kueue import config as kueue_config
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE, kueue_configuration, kueue_release, spec_of

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
QUEUE_ADMITS_NO_JOB = RULES["queue-admits-no-job"]

ID = "admissible"
RERUN = protocol.CLUSTER


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    holders = [r for r in ctx.of_kind("ClusterQueue", "Cohort") if r.key.group == KUEUE]
    bodies = [r.body for r in holders]
    config = kueue_configuration(ctx)
    known = kueue_release(ctx)
    gate = kueue_config.gate(config, known, admissible.GATE)
    automated = multikueue.automated(bodies, config, known)
    lending = cohorts.Lending.of(bodies)  # once per cluster: it sums every queue's cells
    why_by_queue: dict[str, str] = {}
    for queue in holders:
        if queue.kind != "ClusterQueue" or queue.name in automated:
            continue
        found = admissible.blocked(queue.body, lending, config, gate)
        if not found:
            continue
        why = "; ".join(_why(b, queue.body) for b in found)
        why_by_queue[queue.name] = why
        yield Finding.about(
            queue,
            QUEUE_ADMITS_NO_JOB,
            f"ClusterQueue {queue.name} can admit no ordinary Job (its pods ask for "
            f"{' and '.join(admissible.EVERY_POD)}): {why}; Kueue keeps such Workloads pending "
            "forever. Cover cpu and memory in a resource group with quota, or in a cohort that "
            "lends them",
            path=list(found[0].path),
        )
    for local in ctx.of_kind("LocalQueue"):
        target = str(spec_of(local).get("clusterQueue", ""))
        if local.key.group == KUEUE and target in why_by_queue:
            yield Finding.about(
                local,
                QUEUE_ADMITS_NO_JOB,
                f"LocalQueue {local.namespace}/{local.name} sends its Jobs to ClusterQueue "
                f"{target}, which can admit none of them: {why_by_queue[target]}",
                path=["spec", "clusterQueue"],
            )


def _why(found: admissible.Blocked, cq: dict[str, t.Any]) -> str:
    if not found.covered:
        return (
            f'no resource group covers {found.resource} (Kueue: "resource {found.resource} '
            'unavailable in ClusterQueue")'
        )
    cohort = cohorts.cohort_of(cq)
    source = f"its cohort {cohort} lends none" if cohort else "it is in no cohort to borrow from"
    return f"{found.resource} has no quota in any flavor of its resource group and {source}"
