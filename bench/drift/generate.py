"""The generated repository the drift and fleet benchmarks sync and audit.

Each cluster gets the real gpu-prod platform files (its profile renamed, its context named like
the cluster) and M ClusterQueues; N tenant namespaces, each with a LocalQueue and a
RoleBinding, are spread over M tenants, tenant q on cluster q mod len(clusters). With
`with_schemas`, schemas/<cluster>/ is a copy of schemas/gpu-prod/ (drift then also checks each
repo object's shape against it, as it does in a real repository).
"""

from __future__ import annotations

import shutil
import typing as t
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "gpu-prod"  # the real cluster whose platform files and schemas are copied
KUEUE = "kueue.x-k8s.io/v1beta2"
PLATFORM_FILES = ("resourceflavors.yaml", "cohorts.yaml", "priorityclasses.yaml", "rbac.yaml")


def dump(path: Path, docs: list[dict[str, t.Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


def cluster_queue(name: str) -> dict[str, t.Any]:
    resources = [
        {"name": "cpu", "nominalQuota": "64"},
        {"name": "memory", "nominalQuota": "256Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "2"},
    ]
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "cohortName": "ai-shared",
            "namespaceSelector": {"matchLabels": {"bench.example.com/cq": name}},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [{"name": "a100", "resources": resources}],
                }
            ],
        },
    }


def tenant_objects(ns: str, tenant: str, cq: str) -> list[dict[str, t.Any]]:
    labels = {"platform.example.com/kueue": "enabled", "bench.example.com/cq": cq}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}},
        {
            "apiVersion": KUEUE,
            "kind": "LocalQueue",
            "metadata": {"name": "batch", "namespace": ns},
            "spec": {"clusterQueue": cq},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "submitters", "namespace": ns},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "kueue-gitops:tenant-submitter",
            },
            "subjects": [
                {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Group",
                    "name": f"example-org:{tenant}",
                }
            ],
        },
    ]


def platform(
    dest: Path, cluster: str, cq_names: list[str], *, with_schemas: bool, source: Path = ROOT
) -> None:
    folder = dest / "clusters" / cluster
    folder.mkdir(parents=True)
    for name in PLATFORM_FILES:
        shutil.copy(source / "clusters" / SOURCE / name, folder / name)
    profile = yaml.safe_load((source / "clusters" / SOURCE / "profile.yaml").read_text())
    profile["metadata"]["name"] = cluster
    profile["spec"]["context"] = cluster
    dump(folder / "profile.yaml", [profile])
    dump(folder / "clusterqueues.yaml", [cluster_queue(n) for n in cq_names])
    if with_schemas:
        shutil.copytree(source / "schemas" / SOURCE, dest / "schemas" / cluster)


def generate(
    dest: Path,
    tenants: int,
    queues: int,
    clusters: t.Sequence[str] = (SOURCE,),
    *,
    with_schemas: bool = False,
    source: Path = ROOT,
) -> Path:
    """Write the repository into `dest` (which must not exist yet) and return it; its platform
    files and schemas are those of SOURCE in the repository `source` (tests pass their frozen
    estate, the benchmarks this checkout)."""
    cq_names = [f"bench-cq-{i:03d}" for i in range(queues)]
    for cluster in clusters:
        platform(dest, cluster, cq_names, with_schemas=with_schemas, source=source)
    per_queue = -(-tenants // queues)
    for q, cq in enumerate(cq_names):
        tenant, cluster = f"bench-{q:03d}", clusters[q % len(clusters)]
        namespaces = [
            f"{tenant}-ns-{i:03d}" for i in range(per_queue) if q * per_queue + i < tenants
        ]
        profile: dict[str, t.Any] = {
            "apiVersion": "kueue-gitops.io/v1alpha1",
            "kind": "TenantProfile",
            "metadata": {"name": tenant},
            "spec": {
                "owners": [f"@example-org/{tenant}"],
                "group": f"example-org:{tenant}",
                "clusters": {cluster: {"namespaces": namespaces, "clusterQueues": [cq]}},
            },
        }
        dump(dest / "tenants" / tenant / "profile.yaml", [profile])
        docs = [obj for ns in namespaces for obj in tenant_objects(ns, tenant, cq)]
        dump(dest / "tenants" / tenant / cluster / "tenant.yaml", docs)
    return dest


def manifests_only(repo: Path, dest: Path) -> Path:
    """The same manifests for kubectl, without the profiles and schemas it cannot read."""
    for path in sorted(repo.glob("clusters/**/*.yaml")) + sorted(repo.glob("tenants/**/*.yaml")):
        if path.name != "profile.yaml":
            target = dest / path.relative_to(repo)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    return dest
