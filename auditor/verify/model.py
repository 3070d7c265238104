"""What one verify run works with: its constants, probes, tenants and check results."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from auditor.k8s.objects import Json
from auditor.k8s.quantity import Quantity
from auditor.kueue import admission
from auditor.rules import Rule

RUN_LABEL = admission.SCRATCH_LABEL  # kept out of the admission policies' workload rules
MANAGER = "kueue-gitops-verify"
PROBE_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled in a sandbox: no kubelet runs there
RUN_IMAGE = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"  # `sleep N`, where nodes are real
MAX_UNITS = 8  # a quota of at most this many whole units is probed one unit a Job


@dataclass
class Check:
    """One scenario's outcome, with the Workloads it looked at; failed, it is a finding of its
    rule (`verify-<name>`, declared in rules.yaml beside this module)."""

    rule: Rule
    passed: bool | None  # None: not applicable to this cluster's configuration
    summary: str
    cluster_queue: str | None = None
    workloads: list[Json] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.rule.id.removeprefix("verify-")

    def to_json(self) -> Json:
        status = "skipped" if self.passed is None else "passed" if self.passed else "failed"
        return {
            "check": self.name,
            "status": status,
            "summary": self.summary,
            "clusterQueue": self.cluster_queue,
            "workloads": self.workloads,
        }


@dataclass(frozen=True)
class Probe:
    """What every probe Job asks for: `unit` of one resource, pinned to one flavor."""

    flavor: str
    resource: str
    unit: Quantity
    node_selector: dict[str, str]
    tolerations: list[Json]

    def units(self, amount: Quantity) -> int:
        return max(0, math.floor(amount.value / self.unit.value))


@dataclass
class ScratchTenant:
    """A tenant's side of the run: its ClusterQueue and its scratch namespace."""

    name: str
    cq: Json
    namespace: str
    labels: dict[str, str]

    @property
    def cq_name(self) -> str:
        return str(self.cq["metadata"]["name"])
