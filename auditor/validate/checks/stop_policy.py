"""A stopPolicy other than `None` holds admission: warn, so nobody merges a hold by accident.

`Hold` stops new admissions (running work finishes, reservations are dropped); `HoldAndDrain`
also evicts what is running. The `hold` runbook sets them on purpose; anywhere else a reviewer
should see it.

Its rules, each with an example that passes and one that fails, are declared beside it in
stop_policy.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import KUEUE_GROUP
from auditor.kueue.stop_policy import EFFECT, FIELD, holds, policy_of
from auditor.model import Finding
from auditor.validate.checks import protocol

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
STOP_POLICY_HOLDS = RULES["stop-policy-holds"]

ID = "stop-policy"
# Its findings about a queue depend on it alone (protocol.Rerun).
RERUN = protocol.PER_OBJECT


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    for resource in ctx.of_kind("ClusterQueue", "LocalQueue"):
        policy = policy_of(resource.body)
        if resource.key.group != KUEUE_GROUP or not holds(policy):
            continue
        effect = EFFECT.get(str(policy), "the queue is stopped")
        yield Finding.about(
            resource,
            STOP_POLICY_HOLDS,
            f"stopPolicy {policy} holds admission on {resource.kind} {resource.name}: {effect}; "
            "set None (or remove the field) to resume",
            path=["spec", FIELD],
        )
