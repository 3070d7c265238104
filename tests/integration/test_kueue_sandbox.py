"""The sandbox with a real Kueue: webhooks, conversion, admission, and Pods from real Jobs."""

from __future__ import annotations

import base64
import os
import typing as t
from pathlib import Path

import pytest

from auditor.errors import ClusterAccessError
from auditor.kueue import admission
from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox
from tests.conftest import run_line
from tests.estate import ESTATE
from tests.integration.waiting import eventually

KUEUE = "kueue.x-k8s.io/v1beta2"


def test_v1beta1_and_v1beta2_both_work_through_kueues_conversion_webhook(
    kueue_sandbox: Sandbox,
) -> None:
    cluster = kueue_sandbox.connect()
    crd = cluster.get(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", "clusterqueues.kueue.x-k8s.io"
    )
    conversion = crd["spec"]["conversion"]
    assert conversion["strategy"] == "Webhook"
    assert b"BEGIN CERTIFICATE" in base64.b64decode(
        conversion["webhook"]["clientConfig"]["caBundle"]
    )
    # Written in v1beta1 (spec.cohort), read in v1beta2 (spec.cohortName), and back.
    cluster.create(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta1",
            "kind": "ClusterQueue",
            "metadata": {"name": "written-in-v1beta1"},
            "spec": {"cohort": "legacy", "namespaceSelector": {}},
        }
    )
    try:
        assert cluster.get(KUEUE, "ClusterQueue", "written-in-v1beta1")["spec"]["cohortName"] == (
            "legacy"
        )
        old = cluster.get("kueue.x-k8s.io/v1beta1", "ClusterQueue", "team-a-cq")
        assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1"
        assert old["spec"]["cohort"] == "ai-shared"
    finally:
        cluster.delete(KUEUE, "ClusterQueue", "written-in-v1beta1")


def test_kueues_validating_webhook_rejects_what_only_it_checks(kueue_sandbox: Sandbox) -> None:
    # The CRD schema allows limits on a root Cohort; Kueue's webhook does not.
    body = {
        "apiVersion": KUEUE,
        "kind": "Cohort",
        "metadata": {"name": "root-with-limit"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {
                            "name": "cpu-only",
                            "resources": [
                                {"name": "cpu", "nominalQuota": "1", "borrowingLimit": "1"}
                            ],
                        }
                    ],
                }
            ]
        },
    }
    with pytest.raises(
        ClusterAccessError, match=r"vcohort\.kb\.io.*must be nil when parent is empty"
    ):
        kueue_sandbox.connect().create(body)


def test_a_queued_job_is_suspended_then_admitted_and_its_pod_created(
    kueue_sandbox: Sandbox,
) -> None:
    cluster = kueue_sandbox.connect()
    ns = "kueue-sandbox-job"
    _namespace_with_queue(cluster, ns)
    created = cluster.create(_job(ns, "one-gpu", suspend=False))
    # Kueue's mutating webhook suspended it on creation, though it was submitted running.
    assert created["spec"]["suspend"] is True
    workload = eventually(
        lambda: _admitted_workload(cluster, ns), what=f"a Workload admitted in {ns}"
    )
    assert workload["status"]["admission"]["clusterQueue"] == "team-a-cq"
    # kube-controller-manager's Job controller creates the Pod once Kueue unsuspends the Job.
    pods = eventually(lambda: cluster.list_in("v1", "Pod", ns), what=f"the Job's Pods in {ns}")
    assert [p["metadata"]["labels"]["job-name"] for p in pods] == ["one-gpu"]
    # kube-scheduler binds it to the a100 node (Kueue gave it the flavor's labels and
    # tolerations) and kwok, playing that node's kubelet, reports it Running.
    name = pods[0]["metadata"]["name"]
    running = eventually(
        lambda: (
            (pod := cluster.get("v1", "Pod", name, ns))["status"].get("phase") == "Running" and pod
        ),
        what=f"Pod {name} Running on a simulated node",
    )
    assert running["spec"]["nodeName"] == "a100-0"
    cluster.delete("v1", "Namespace", ns, propagation="Background")
    # gone before later tests read team-a-cq's usage (a bound Pod is deleted gracefully)
    eventually(
        lambda: ns not in {n["metadata"]["name"] for n in cluster.list("v1", "Namespace")},
        what=f"namespace {ns} deleted",
    )


def test_sandbox_up_with_kueue_and_down_stops_every_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_SANDBOXES", str(tmp_path))
    name = f"kueue-cli-{os.getpid()}"
    up = run_line(["kueue-gitops", "--repo", str(ESTATE), "sandbox", "up", "--with-kueue", name])
    box = Sandbox(name, root=tmp_path)
    try:
        assert up.exit_code == 0, up.output
        assert "with Kueue" in up.output
        state = box.state()
        assert state is not None
        assert set(state.pids) == {"etcd", "kube-apiserver", "kube-controller-manager", "kueue"}
        assert box.running()
    finally:
        down = run_line(["kueue-gitops", "--repo", str(ESTATE), "sandbox", "down", name])
    assert down.exit_code == 0
    assert "stopped kueue, kube-controller-manager, kube-apiserver, etcd" in down.output
    for pid in state.pids.values():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _namespace_with_queue(cluster: KubeCluster, ns: str) -> None:
    # A platform scratch namespace, as verify makes them: the repository's admission policies
    # leave those to the platform (its LocalQueue is not one the repository declares).
    labels = {
        "platform.example.com/kueue": "enabled",
        "platform.example.com/tenant": "team-a",
        admission.SCRATCH_LABEL: "kueue-sandbox-test",
    }
    cluster.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": labels}}
    )
    cluster.create(
        {
            "apiVersion": KUEUE,
            "kind": "LocalQueue",
            "metadata": {"name": "batch", "namespace": ns},
            "spec": {"clusterQueue": "team-a-cq"},
        }
    )


def _job(ns: str, name: str, *, suspend: bool) -> dict[str, t.Any]:
    gpu = {"nvidia.com/gpu": "1"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {"kueue.x-k8s.io/queue-name": "batch"},
        },
        "spec": {
            "suspend": suspend,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": gpu, "limits": gpu},
                        }
                    ],
                }
            },
        },
    }


def _admitted_workload(cluster: KubeCluster, ns: str) -> dict[str, t.Any] | None:
    for w in cluster.list_in(KUEUE, "Workload", ns):
        for c in (w.get("status") or {}).get("conditions") or []:
            if c["type"] == "Admitted" and c["status"] == "True":
                return w
    return None
