"""A stopPolicy other than `None` holds admission: warn, so nobody merges a hold by accident.

`Hold` stops new admissions (running work finishes, reservations are dropped); `HoldAndDrain`
also evicts what is running. The `hold` runbook sets them on purpose; anywhere else a reviewer
should see it.

Passes (tenants/team-a/gpu-prod/localqueues.yaml)::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata: {name: batch, namespace: team-a}
    spec: {clusterQueue: team-a-cq, stopPolicy: None}

Fails (tenants/team-a/gpu-prod/localqueues.yaml)::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata: {name: batch, namespace: team-a}
    spec: {clusterQueue: team-a-cq, stopPolicy: HoldAndDrain}
"""

from __future__ import annotations

import typing as t

from auditor.model import Finding
from auditor.validate.checks._common import KUEUE, spec_of

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

ID = "stop-policy"
CATEGORY = "stop-policy"
LEVELS = {"stop-policy-holds": "warning"}

EFFECT = {
    "Hold": "no new workloads are admitted; running ones finish, reservations are released",
    "HoldAndDrain": "no new workloads are admitted and running ones are evicted",
}


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    for resource in ctx.of_kind("ClusterQueue", "LocalQueue"):
        policy = spec_of(resource).get("stopPolicy")
        if resource.key.group != KUEUE or policy in (None, "None"):
            continue
        effect = EFFECT.get(str(policy), "the queue is stopped")
        yield Finding.about(
            resource,
            "stop-policy-holds",
            f"stopPolicy {policy} holds admission on {resource.kind} {resource.name}: {effect}; "
            "set None (or remove the field) to resume",
            CATEGORY,
            path=["spec", "stopPolicy"],
        )
