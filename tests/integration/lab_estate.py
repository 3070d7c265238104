"""A small estate built inline for the planner's tests (never the repository's own clusters/ and
tenants/): cluster `lab` on Kueue v0.19.2 with one GPU flavor, two tenants' ClusterQueues in one
cohort, and their LocalQueues `batch`. `lab_estate(root, ...)` writes it; the quotas and the
Configuration's extra lines are the test's to choose."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import ROOT

PROFILE = """\
apiVersion: kueue-gitops.io/v1alpha1
kind: ClusterProfile
metadata:
  name: lab
spec:
  context: lab
  owners: ["@example-org/platform"]
  kueue:
    apiVersions: [v1beta2]
    version: v0.19.2
  admissionLabel:
    key: platform.example.com/kueue
    value: enabled
  tenantLabel: platform.example.com/tenant
  capacity:
    a100: {cpu: "128", memory: 1Ti, nvidia.com/gpu: "16"}
"""

CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: kueue-manager-config
  namespace: kueue-system
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    namespace: kueue-system
    manageJobsWithoutQueueName: false
    integrations:
      frameworks:
        - batch/job
{extra}"""

FLAVOR = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: a100
spec:
  nodeLabels:
    platform.example.com/pool: gpu
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: low
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: high
value: 1000
"""

CQ = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: {tenant}-cq
spec:
  cohortName: lab-shared
  queueingStrategy: BestEffortFIFO
  namespaceSelector:
    matchLabels:
      platform.example.com/tenant: {tenant}
  preemption:
    reclaimWithinCohort: {reclaim}
    withinClusterQueue: LowerPriority
  resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu]
      flavors:
        - name: a100
          resources:
            - name: cpu
              nominalQuota: "64"
            - name: memory
              nominalQuota: 512Gi
            - name: nvidia.com/gpu
              nominalQuota: "{gpus}"
{limit}"""

TENANT = """\
apiVersion: kueue-gitops.io/v1alpha1
kind: TenantProfile
metadata:
  name: {tenant}
spec:
  owners: ["@example-org/{tenant}"]
  group: example-org:{tenant}
  clusters:
    lab:
      namespaces: [{tenant}]
      clusterQueues: [{tenant}-cq]
  priorityClasses:
    workload: [low, high]
  flavors: [a100]
"""

NAMESPACE = """\
apiVersion: v1
kind: Namespace
metadata:
  name: {tenant}
  labels:
    platform.example.com/kueue: enabled
    platform.example.com/tenant: {tenant}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: batch
  namespace: {tenant}
spec:
  clusterQueue: {tenant}-cq
"""


def lab_estate(
    root: Path,
    gpus: dict[str, int],
    *,
    borrowing: dict[str, int] | None = None,
    reclaim: str = "Any",
    config: str = "",
) -> Path:
    """Write the estate under `root` (GPU quota per tenant; a borrowing limit per tenant when
    given; `config`: lines added to Kueue's Configuration) and return `root`."""
    lab = root / "clusters" / "lab"
    (lab / "kueue").mkdir(parents=True, exist_ok=True)
    (lab / "profile.yaml").write_text(PROFILE)
    (lab / "kueue" / "manager-config.yaml").write_text(
        CONFIG.format(extra=textwrap.indent(config, "    "))
    )
    (lab / "resourceflavors.yaml").write_text(FLAVOR)
    docs = []
    for tenant, n in gpus.items():
        limit = (borrowing or {}).get(tenant)
        extra = f'              borrowingLimit: "{limit}"\n' if limit is not None else ""
        docs.append(CQ.format(tenant=tenant, gpus=n, reclaim=reclaim, limit=extra))
        folder = root / "tenants" / tenant / "lab"
        folder.mkdir(parents=True, exist_ok=True)
        (root / "tenants" / tenant / "profile.yaml").write_text(TENANT.format(tenant=tenant))
        (folder / "namespace.yaml").write_text(NAMESPACE.format(tenant=tenant))
    (lab / "clusterqueues.yaml").write_text("---\n".join(docs))
    if not (root / "testenv").exists():
        (root / "testenv").symlink_to(ROOT / "testenv")  # the pinned Kueue releases
    return root
