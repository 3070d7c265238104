"""Which kubeconfig context reaches a cluster: kubectl's rules over the cluster profile's."""

from __future__ import annotations

from auditor.live.kube import KubeCluster, Limits
from auditor.repo.profiles import ClusterProfile


def connect(
    profile: ClusterProfile,
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    deadline: float | None = None,
) -> KubeCluster:
    """--context wins; --kubeconfig alone means its current context; else the profile's.

    `deadline`: seconds for every request to this cluster, counted from now (None: no limit
    but each request's own timeouts).
    """
    if context is None and kubeconfig is None:
        context = profile.context
    return KubeCluster.connect(
        profile.name, kubeconfig=kubeconfig, context=context, limits=Limits(deadline=deadline)
    )
