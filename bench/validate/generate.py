"""Generate a validation corpus: thousands of tenants on two clusters, in a temporary repository.

    python bench/validate/generate.py DIR [--tenants N]

Each tenant gets, on each cluster, a Namespace, a LocalQueue and a RoleBinding (one file each);
every 20 tenants share a ClusterQueue. Queues and namespaces carry Argo CD's
`Prune=false,Delete=false`, as the repository's own do (the prune-guard check asks for it).
The cluster profiles, flavors, cohort and priority classes are this repository's own;
schemas/ is copied so `validate` runs offline.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ("gpu-prod", "gpu-staging")
PLATFORM_FILES = (
    "profile.yaml",
    "resourceflavors.yaml",
    "cohorts.yaml",
    "priorityclasses.yaml",
    "rbac.yaml",
)
PER_QUEUE = 20

NAMESPACE = """apiVersion: v1
kind: Namespace
metadata:
  name: {t}
  annotations:
    argocd.argoproj.io/sync-options: Prune=false,Delete=false
  labels:
    platform.example.com/kueue: enabled
    platform.example.com/tenant: {t}
"""
LOCALQUEUE = """apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: batch
  namespace: {t}
  annotations:
    argocd.argoproj.io/sync-options: Prune=false,Delete=false
spec:
  clusterQueue: {cq}
"""
ROLEBINDING = """apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {t}-submitters
  namespace: {t}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kueue-gitops:tenant-submitter
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: Group
    name: example-org:{t}
"""
CLUSTERQUEUE = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: {cq}
  annotations:
    argocd.argoproj.io/sync-options: Prune=false,Delete=false
spec:
  cohortName: ai-shared
  namespaceSelector:
    matchLabels:
      platform.example.com/kueue: enabled
    matchExpressions:
      - key: platform.example.com/tenant
        operator: In
        values: [{tenants}]
  resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu]
      flavors:
        - name: a100
          resources:
            - name: cpu
              nominalQuota: "1"
            - name: memory
              nominalQuota: 1Gi
            - name: nvidia.com/gpu
              nominalQuota: "0"
"""
PROFILE = """apiVersion: kueue-gitops.io/v1alpha1
kind: TenantProfile
metadata:
  name: {t}
spec:
  owners: ["@example-org/{t}"]
  group: example-org:{t}
  clusters:
{clusters}  priorityClasses:
    workload: [batch-low]
    pod: [tenant-batch]
"""


def generate(out: Path, tenants: int) -> int:
    """Write the corpus into `out`; return the number of Kubernetes objects written."""
    names = [f"t{i:05d}" for i in range(tenants)]
    objects = 0
    for cluster in CLUSTERS:
        folder = out / "clusters" / cluster
        folder.mkdir(parents=True)
        for name in PLATFORM_FILES:
            shutil.copyfile(ROOT / "clusters" / cluster / name, folder / name)
            if name != "profile.yaml":
                docs = yaml.safe_load_all((folder / name).read_text())
                objects += sum(isinstance(d, dict) for d in docs)
        queues = []
        for start in range(0, tenants, PER_QUEUE):
            group = names[start : start + PER_QUEUE]
            cq = f"cq-{start // PER_QUEUE}"
            queues.append(CLUSTERQUEUE.format(cq=cq, tenants=", ".join(group)))
        (folder / "clusterqueues.yaml").write_text("".join(queues))
        objects += len(queues)
    for i, t in enumerate(names):
        cq = f"cq-{i // PER_QUEUE}"
        clusters = "".join(
            f"    {c}:\n      namespaces: [{t}]\n      clusterQueues: [{cq}]\n" for c in CLUSTERS
        )
        base = out / "tenants" / t
        base.mkdir(parents=True)
        (base / "profile.yaml").write_text(PROFILE.format(t=t, clusters=clusters))
        for cluster in CLUSTERS:
            (base / cluster).mkdir()
            for file, template in (
                ("namespace.yaml", NAMESPACE),
                ("localqueues.yaml", LOCALQUEUE),
                ("rbac.yaml", ROLEBINDING),
            ):
                (base / cluster / file).write_text(template.format(t=t, cq=cq))
                objects += 1
    shutil.copytree(ROOT / "schemas", out / "schemas")
    return objects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tenants", type=int, default=1700)
    args = parser.parse_args()
    print(f"{generate(args.out, args.tenants)} objects in {args.out}")


if __name__ == "__main__":
    main()
