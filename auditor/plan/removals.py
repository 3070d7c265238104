"""Removals that delete work: a ClusterQueue, LocalQueue or admitted Namespace that goes.

Argo CD deletes what a sync prunes. A deleted LocalQueue strands the Jobs pending in it, a deleted
ClusterQueue evicts everything it admitted, and a deleted namespace takes its Jobs with it; the
platform never deletes queues or pending Jobs through a sync. Offline, each such removal is an
error at the line the object had in base. `plan diff --live` weighs it (auditor/plan/live.py): a
queue that still holds Workloads gets plan-removes-queue-in-use, with their count, instead; an idle
one keeps this error, saying it holds none now.
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.model import Finding
from auditor.plan.model import Change, ClusterPlan

_RULES = rules.of(__name__)
PLAN_REMOVES_QUEUE = _RULES["plan-removes-queue"]

QUEUES = ("ClusterQueue", "LocalQueue")


def findings(plan: ClusterPlan) -> t.Iterator[Finding]:
    profile = plan.base.profile
    for key, old in sorted(plan.base.objects.items()):
        if key in plan.head.objects:
            continue
        labels = (old.body.get("metadata") or {}).get("labels")
        admitted = key.kind == "Namespace" and profile is not None and profile.admits(labels)
        if key.kind not in QUEUES and not admitted:
            continue
        shown = f"{key.kind} {key.namespace + '/' if key.namespace else ''}{key.name}"
        what = (
            f"admitted namespace {key.name} is removed: Argo CD would delete it with every Job "
            "and Workload in it"
            if admitted
            else f"{shown} is removed: Argo CD would delete it, "
            + (
                "evicting every Workload it admitted"
                if key.kind == "ClusterQueue"
                else "stranding the Jobs pending in it"
            )
        )
        yield Finding.about(
            old,
            PLAN_REMOVES_QUEUE,
            f"{what}; queues and admitted namespaces are never deleted by a sync: keep the "
            "object (hold admission with `kueue-gitops hold` to retire it)",
            cluster=plan.name,
        )


def weigh(found: list[Finding], cluster: str, change: Change, live: list[Finding]) -> None:
    """After `plan diff --live` judged a change: the offline removal error of the same object gives
    way to a live finding about it, or says that the object holds nothing now."""
    key = change.key
    for finding in [f for f in found if f.rule is PLAN_REMOVES_QUEUE and f.cluster == cluster]:
        if (finding.kind, finding.namespace, finding.name) != (key.kind, key.namespace, key.name):
            continue
        if live:
            found.remove(finding)
        elif "holds no Workloads" not in finding.message:
            finding.message += " (live: it holds no Workloads now)"
