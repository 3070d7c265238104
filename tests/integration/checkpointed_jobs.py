"""A GPU Job in a tenant's LocalQueue that writes checkpoints, for the preemption and upgrade
tests."""

from __future__ import annotations

import typing as t

Json = dict[str, t.Any]
CHECKPOINT = "kueue-gitops.io/checkpoint"
IMAGE = "registry.k8s.io/e2e-test-images/busybox:1.36.1-1"


def job(namespace: str, name: str, priority: str, gpus: int, seconds: int) -> Json:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "kueue.x-k8s.io/queue-name": "batch",
                "kueue.x-k8s.io/priority-class": priority,
            },
            "annotations": {CHECKPOINT: f"s3://checkpoints/{namespace}/{name}/latest"},
        },
        "spec": {
            "suspend": True,
            "backoffLimit": 3,
            "template": {
                # kwok completes the Pod after this long; a real node would run `sleep`
                "metadata": {"annotations": {"kueue-gitops.io/sandbox-run-for": f"{seconds}s"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "train",
                            "image": IMAGE,
                            "command": ["sleep", str(seconds)],
                            "resources": {
                                "requests": {"nvidia.com/gpu": str(gpus)},
                                "limits": {"nvidia.com/gpu": str(gpus)},
                            },
                        }
                    ],
                },
            },
        },
    }
