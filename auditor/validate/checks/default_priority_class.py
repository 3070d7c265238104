"""A WorkloadPriorityClass named `default` gives its priority to every job that names none.

With WorkloadPriorityClassDefaulting (alpha from Kueue v0.18, off unless the Configuration's
featureGates turn it on), a job without a `kueue.x-k8s.io/priority-class` label gets the
WorkloadPriorityClass named `default`, if there is one (kubernetes-sigs/kueue#10798,
KEP-10765). A class created under that name for another reason then re-ranks every unlabelled
job of every tenant in preemption and admission order. The name and the gate are the release's
own (auditor/kueue/api/), so a cluster whose release lacks the gate is not warned.

Its rules, each with an example that passes and one that fails, are declared beside it in
default_priority_class.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import config as kueue_config
from auditor.kueue.workloads import PRIORITY_LABEL
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import (
    KUEUE,
    kueue_configuration,
    kueue_release,
    priority_value,
)

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
DEFAULT_PRIORITY_CLASS = RULES["default-workload-priority-class"]

ID = "default-priority-class"
RERUN = protocol.CLUSTER
GATE = "WorkloadPriorityClassDefaulting"


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    known = kueue_release(ctx)
    name = known.default_name("WorkloadPriorityClass")
    if name is None or not kueue_config.gate(kueue_configuration(ctx), known, GATE):
        return
    for level in ctx.of_kind("WorkloadPriorityClass"):
        if level.key.group == KUEUE and level.name == name:
            yield Finding.about(
                level,
                DEFAULT_PRIORITY_CLASS,
                f"with {GATE} on, Kueue {known.version} gives every job without a "
                f"{PRIORITY_LABEL} label this class's priority "
                f"({priority_value(level)}), in every tenant's namespace; rename the class "
                f"unless it is meant to rank unlabelled work, or leave {GATE} off",
                path=["metadata", "name"],
            )
