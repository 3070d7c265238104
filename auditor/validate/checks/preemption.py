"""Preemption only of work whose tenants have recorded that it survives being preempted.

A preempted job is killed and started again later: harmless only for jobs that resume from
checkpoints and write their output idempotently. Both sides of every preemption edge count
(auditor.kueue.preemption): `withinClusterQueue` evicts the queue's own tenants, reclaiming and
borrowing within the cohort evict the tenants of the tree's other queues that can borrow. Each
tenant whose work a queue can evict needs both records in its profile (`preemption.checkpointing`
and `preemption.idempotentOutput`: what was validated, a reference, the date, an expiry); a
record that has expired is an error, one that expires within EXPIRY_WARNING a warning. A
preempting queue no tenant profile lists is an error too: nobody answers for its jobs.

Its rules, each with an example that passes and one that fails, are declared beside it in
preemption.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import datetime
import typing as t

from auditor import rules
from auditor.kueue import preemption
from auditor.model import Finding, Resource
from auditor.repo.profiles import TenantProfile
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE, about_profile, queue_tenants

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
PREEMPTION_UNVALIDATED = RULES["preemption-unvalidated"]
PREEMPTION_EVIDENCE_EXPIRED = RULES["preemption-evidence-expired"]
PREEMPTION_EVIDENCE_EXPIRING = RULES["preemption-evidence-expiring"]

ID = "preemption"
RERUN = protocol.CLUSTER
EXPIRY_WARNING = datetime.timedelta(days=30)


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    tenants_of = queue_tenants(ctx)
    holders = [r for r in ctx.of_kind("ClusterQueue", "Cohort") if r.key.group == KUEUE]
    queues = {r.name: r for r in holders if r.kind == "ClusterQueue"}
    by_queue: dict[str, list[preemption.Edge]] = {}
    for edge in preemption.edges(r.body for r in holders):
        by_queue.setdefault(edge.preemptor, []).append(edge)
    victims: dict[str, tuple[TenantProfile, list[str]]] = {}  # tenant -> (it, queues evicting)
    for name, edges in by_queue.items():
        cq = queues[name]
        if not tenants_of.get(name):
            yield _orphan(ctx, cq, edges)
        unsafe: dict[str, list[str]] = {}  # tenant -> the policies that can evict its work
        first: preemption.Edge | None = None
        for edge in edges:
            for tenant in (p for v in edge.victims for p in tenants_of.get(v, [])):
                victims.setdefault(tenant.name, (tenant, []))[1].append(name)
                if tenant.missing_evidence():
                    unsafe.setdefault(tenant.name, []).append(edge.shown)
                    first = first or edge
        if first is not None:
            yield _unvalidated(ctx, cq, first, unsafe)
    for tenant, evicting in sorted(victims.values(), key=lambda v: v[0].name):
        yield from _expiry(ctx, tenant, sorted(set(evicting)))


def _orphan(ctx: CheckContext, cq: Resource, edges: list[preemption.Edge]) -> Finding:
    fields = ", ".join(e.shown for e in edges)
    return Finding.about(
        cq,
        PREEMPTION_UNVALIDATED,
        f"ClusterQueue {cq.name} preempts ({fields}) but no tenant profile lists this "
        f"ClusterQueue on {ctx.cluster.name}, so nobody has declared its jobs survive "
        "preemption; set Never until they do",
        path=["spec", "preemption", *edges[0].policy],
    )


def _unvalidated(
    ctx: CheckContext, cq: Resource, at: preemption.Edge, unsafe: dict[str, list[str]]
) -> Finding:
    tenants = ctx.tenants
    parts = [
        f"{name} (through {', '.join(dict.fromkeys(via))}; it has no "
        f"{' or '.join(f'preemption.{a}' for a in tenants[name].missing_evidence())} record)"
        for name, via in sorted(unsafe.items())
    ]
    return Finding.about(
        cq,
        PREEMPTION_UNVALIDATED,
        f"ClusterQueue {cq.name} can evict the work of {'; '.join(parts)}: record in the "
        "tenant's profile what was validated, a reference, the date and an expiry, or set "
        "those policies to Never",
        path=["spec", "preemption", *at.policy],
    )


def _expiry(ctx: CheckContext, tenant: TenantProfile, evicting: list[str]) -> t.Iterator[Finding]:
    queues = ", ".join(evicting)
    for record in tenant.evidence.values():
        left = record.expires - ctx.today
        if left > EXPIRY_WARNING:
            continue
        rule = PREEMPTION_EVIDENCE_EXPIRED if left.days <= 0 else PREEMPTION_EVIDENCE_EXPIRING
        when = "expired on" if left.days <= 0 else f"expires in {left.days} day(s), on"
        yield about_profile(
            ctx,
            tenant,
            rule,
            f"{tenant.name}'s preemption.{record.aspect} evidence ({record.reference}) {when} "
            f"{record.expires}, and ClusterQueue(s) {queues} on {ctx.cluster.name} can evict "
            "its work: validate it again and record the new date and expiry, or stop "
            "preempting its work",
            (*record.path, "expires"),
        )
