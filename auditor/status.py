"""What a cluster holds right now: queues, their quotas, and which namespaces may submit."""

from __future__ import annotations

import itertools
import typing as t
from dataclasses import dataclass

from auditor.kueue import quota
from auditor.live.kube import KubeCluster
from auditor.repo.profiles import ClusterProfile


@dataclass
class LiveStatus:
    cluster_queues: list[dict[str, t.Any]]
    local_queues: list[dict[str, t.Any]]
    namespaces: list[dict[str, t.Any]]


def read(cluster: KubeCluster, profile: ClusterProfile) -> LiveStatus:
    return LiveStatus(
        cluster.list(profile.kueue_api, "ClusterQueue"),
        cluster.list(profile.kueue_api, "LocalQueue"),
        cluster.list("v1", "Namespace"),
    )


def _cell_text(cell: quota.QuotaCell) -> str:
    fields = cell.fields
    text = f"{cell.resource}={fields.get(quota.NOMINAL)}"
    if quota.BORROWING in fields:
        text += f"(+{fields[quota.BORROWING]})"
    if quota.LENDING in fields:
        text += f"(lend {fields[quota.LENDING]})"
    return text


def _quota_summary(cq: dict[str, t.Any]) -> str:
    by_flavor = itertools.groupby(quota.cells(cq), key=lambda c: (c.path[:5], c.flavor))
    return "; ".join(
        f"{flavor}: {' '.join(_cell_text(c) for c in found)}" for (_, flavor), found in by_flavor
    )


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
