"""Jobs for the Kueue sandbox: GPU Jobs at a priority in a tenant's namespace, waiting for what
Kueue does with them, and removing them again (the sandbox is shared by the session)."""

from __future__ import annotations

import contextlib
import typing as t

from auditor.errors import ClusterAccessError
from auditor.kueue.workloads import owner_job
from auditor.live.kube import KubeCluster
from tests.integration.waiting import eventually

KUEUE = "kueue.x-k8s.io/v1beta2"
Json = dict[str, t.Any]
T = t.TypeVar("T")


def submit(cluster: KubeCluster, ns: str, name: str, priority: str, gpus: int = 1) -> None:
    """A suspended Job asking for `gpus` GPUs from LocalQueue `batch` at a priority class."""
    request = {"nvidia.com/gpu": str(gpus)}
    labels = {"kueue.x-k8s.io/queue-name": "batch", "kueue.x-k8s.io/priority-class": priority}
    cluster.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {
                "suspend": True,
                "backoffLimit": 0,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": "main",
                                "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": request, "limits": request},
                            }
                        ],
                    }
                },
            },
        }
    )


def workloads_by_job(cluster: KubeCluster, ns: str) -> dict[str, Json]:
    return {str(owner_job(w)): w for w in cluster.list_in(KUEUE, "Workload", ns)}


def remove_jobs(cluster: KubeCluster, ns: str, names: t.Iterable[str]) -> None:
    """Delete these Jobs and wait until their Workloads are gone (and their quota is free)."""
    names = set(names)
    for name in names:
        with contextlib.suppress(ClusterAccessError):  # never made
            cluster.delete("batch/v1", "Job", name, ns, propagation="Background")
    eventually(
        lambda: not names & set(workloads_by_job(cluster, ns)) or None,
        what=f"the Workloads of Jobs {sorted(names)} in {ns} gone",
        seconds=120,
        seen=lambda: sorted(names & set(workloads_by_job(cluster, ns))),
    )
