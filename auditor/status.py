"""What a cluster holds right now: queues, their quotas, and which namespaces may submit."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.live.kube import KubeCluster
from auditor.repo.profiles import ClusterProfile

KUEUE = "kueue.x-k8s.io/v1beta2"


@dataclass
class LiveStatus:
    cluster_queues: list[dict[str, t.Any]]
    local_queues: list[dict[str, t.Any]]
    namespaces: list[dict[str, t.Any]]


def read(cluster: KubeCluster) -> LiveStatus:
    return LiveStatus(
        cluster.list(KUEUE, "ClusterQueue"),
        cluster.list(KUEUE, "LocalQueue"),
        cluster.list("v1", "Namespace"),
    )


def _quota_summary(cq: dict[str, t.Any]) -> str:
    parts = []
    for group in cq.get("spec", {}).get("resourceGroups", []):
        for flavor in group.get("flavors", []):
            res = []
            for r in flavor.get("resources", []):
                text = f"{r['name']}={r.get('nominalQuota')}"
                if "borrowingLimit" in r:
                    text += f"(+{r['borrowingLimit']})"
                if "lendingLimit" in r:
                    text += f"(lend {r['lendingLimit']})"
                res.append(text)
            parts.append(f"{flavor['name']}: {' '.join(res)}")
    return "; ".join(parts)


def render_text(status: LiveStatus, profile: ClusterProfile) -> str:
    key = profile.admission_label[0]
    lines = [f"cluster {profile.name}", "", "ClusterQueues:"]
    for cq in status.cluster_queues:
        spec, st = cq.get("spec", {}), cq.get("status", {})
        lines.append(
            f"  {cq['metadata']['name']:<16} cohort={spec.get('cohortName', '-'):<10} "
            f"stopPolicy={spec.get('stopPolicy', 'None'):<5} "
            f"pending={st.get('pendingWorkloads', 0)} admitted={st.get('admittedWorkloads', 0)}"
        )
        lines.append(f"    {_quota_summary(cq)}")
    lines += ["", "LocalQueues:"]
    for lq in status.local_queues:
        meta = lq["metadata"]
        lines.append(
            f"  {meta['namespace']}/{meta['name']:<12} -> {lq.get('spec', {}).get('clusterQueue')}"
        )
    lines += ["", f"Namespaces ({key}):"]
    for ns in status.namespaces:
        labels = ns["metadata"].get("labels") or {}
        mark = labels.get(key)
        state = "ADMITS WORK" if profile.admits(labels) else "no admission"
        lines.append(f"  {ns['metadata']['name']:<16} {key}={mark or '(absent)':<10} {state}")
    return "\n".join(lines)
