"""Which credentials reach a cluster: kubectl's rules over the cluster profile's context.

Each cluster is reached through its profile's context, looked up in --kubeconfig or else in
$KUBECONFIG (several files joined with ':' are merged, as kubectl merges them), else in
~/.kube/config. --context replaces the profile's context; the CLI allows it only when one
cluster is named, so a run over several clusters never reads one through another's context.

Inside a cluster (the in-cluster audit), KUEUE_GITOPS_IN_CLUSTER names the cluster the pod runs
in: that cluster is reached as the pod's ServiceAccount, unless a kubeconfig is given; any
other cluster in the run has no credentials (a configuration error for that cluster alone).
"""

from __future__ import annotations

import os

from auditor.live.credentials import ContextMissing
from auditor.live.kube import KubeCluster, Limits
from auditor.repo.profiles import ClusterProfile

IN_CLUSTER = "KUEUE_GITOPS_IN_CLUSTER"
# Where kubelet mounts the ServiceAccount's token and CA; a test points this elsewhere.
ACCOUNT_DIR = "KUEUE_GITOPS_SERVICEACCOUNT_DIR"
DEFAULT_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def connect(
    profile: ClusterProfile,
    *,
    kubeconfig: str | None = None,
    context: str | None = None,
    deadline: float | None = None,
) -> KubeCluster:
    """The cluster of `profile`, through its context (or `context`) in `kubeconfig`.

    `deadline`: seconds for every request to this cluster, counted from now (None: no limit
    but each request's own timeouts).
    """
    limits = Limits(deadline=deadline)
    home = os.environ.get(IN_CLUSTER)
    if home and kubeconfig is None and context is None:
        if home != profile.name:
            raise ContextMissing(
                f"cluster {profile.name}: this audit runs inside cluster {home} ({IN_CLUSTER}) "
                f"and has no credentials for {profile.name}"
            )
        account_dir = os.environ.get(ACCOUNT_DIR) or DEFAULT_ACCOUNT_DIR
        return KubeCluster.in_cluster(profile.name, account_dir=account_dir, limits=limits)
    return KubeCluster.connect(
        profile.name, kubeconfig=kubeconfig, context=context or profile.context, limits=limits
    )
