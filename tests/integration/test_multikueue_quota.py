"""MultiKueue manager quota automation on the real Kueue v0.19.2 (KEP-9988): a manager sandbox
running Kueue with the MultiKueueManagerQuotaAutomation gate on, dispatching to a worker sandbox
(the release's CRDs, the worker's queues), writes the manager ClusterQueue's quota as the
workers' sum under field manager `kueue`; drift reads that as Kueue's, accepted and not counted,
and what `generate argocd` writes leaves exactly those fields to Kueue."""

from __future__ import annotations

import base64
import copy
import os
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.drift import engine, managed, reading
from auditor.k8s.objects import Json
from auditor.kueue import multikueue
from auditor.model import Report
from auditor.repo import manifests
from auditor.repo.profiles import ClusterProfile
from auditor.sandbox import Sandbox, Toolchain, releases
from tests.integration.conftest import repo_kueue_config
from tests.integration.waiting import eventually

RELEASE = "v0.19.2"
KUEUE = "kueue.x-k8s.io/v1beta2"
WORKER_QUOTA = {"cpu": ("6", "7"), "memory": ("24Gi", "28Gi")}  # two worker queues, summed


def embedded(box: Sandbox) -> str:
    """The sandbox's admin kubeconfig with its files inlined: MultiKueue refuses file paths."""
    doc = yaml.safe_load(box.kubeconfig.read_text())
    cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]

    def data(path: str) -> str:
        return base64.b64encode(Path(path).read_bytes()).decode()

    cluster["certificate-authority-data"] = data(cluster.pop("certificate-authority"))
    user["client-certificate-data"] = data(user.pop("client-certificate"))
    user["client-key-data"] = data(user.pop("client-key"))
    return yaml.safe_dump(doc)


def queue(name: str, resources: dict[str, str], **spec: t.Any) -> Json:
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": sorted(resources),
                    "flavors": [
                        {
                            "name": "default",
                            "resources": [
                                {"name": r, "nominalQuota": q} for r, q in sorted(resources.items())
                            ],
                        }
                    ],
                }
            ],
            **spec,
        },
    }


def local(namespace: str, name: str, cluster_queue: str) -> Json:
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cluster_queue},
    }


NAMESPACES = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("a", "b")
]
FLAVOR = {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "default"}}
MANAGER_FILE = f"""\
apiVersion: {KUEUE}
kind: MultiKueueCluster
metadata: {{name: worker}}
spec:
  clusterSource:
    kubeConfig: {{location: worker-kubeconfig, locationType: Secret}}
---
apiVersion: {KUEUE}
kind: MultiKueueConfig
metadata: {{name: to-worker}}
spec:
  clusters: [worker]
  quotaManagement: Automated
---
apiVersion: {KUEUE}
kind: AdmissionCheck
metadata: {{name: multikueue}}
spec:
  controllerName: {multikueue.CONTROLLER}
  parameters: {{apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: to-worker}}
---
{yaml.safe_dump(queue("manager-cq", {"cpu": "0", "memory": "0"},
                      admissionChecksStrategy={"admissionChecks": [{"name": "multikueue"}]}))}
---
{yaml.safe_dump(local("a", "batch", "manager-cq"))}
---
{yaml.safe_dump(local("b", "batch", "manager-cq"))}
"""  # fmt: skip


@pytest.fixture(scope="module")
def boxes(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[tuple[Sandbox, Sandbox]]:
    release = releases.release(toolchain, RELEASE, log=print)
    worker = Sandbox(f"mk-worker-{os.getpid()}", root=sandboxes_dir)
    manager = Sandbox(f"mk-manager-{os.getpid()}", root=sandboxes_dir)
    config = copy.deepcopy(repo_kueue_config("gpu-staging")) or {}
    config["featureGates"] = {**(config.get("featureGates") or {}), multikueue.GATE: True}
    try:
        worker.up(toolchain, kueue_release=release)  # the release's CRDs; no Kueue needed there
        manager.up(toolchain, with_kueue=True, kueue_config=config, kueue_release=release)
    except Exception as exc:
        worker.down()
        manager.down()
        pytest.fail(f"the MultiKueue sandboxes could not start: {exc}", pytrace=False)
    try:
        yield manager, worker
    finally:
        manager.down()
        worker.down()


def test_kueue_writes_the_workers_sum_as_its_own_and_drift_accepts_it(
    boxes: tuple[Sandbox, Sandbox],
) -> None:
    manager, worker = boxes
    remote = worker.connect()
    for body in [*NAMESPACES, FLAVOR,
                 queue("cq1", {r: q[0] for r, q in WORKER_QUOTA.items()}),
                 queue("cq2", {r: q[1] for r, q in WORKER_QUOTA.items()}),
                 local("a", "batch", "cq1"), local("b", "batch", "cq2")]:  # fmt: skip
        remote.create(body)
    admin = manager.connect()
    admin.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "worker-kubeconfig", "namespace": "kueue-system"},
            "stringData": {"kubeconfig": embedded(worker)},
        }
    )
    desired, problems = manifests.load_text(MANAGER_FILE, "clusters/mk/multikueue.yaml")
    assert problems == []
    for body in [*NAMESPACES, FLAVOR, *(r.body for r in desired)]:
        admin.create(copy.deepcopy(body))

    def summed() -> Json | None:
        live = admin.get(KUEUE, "ClusterQueue", "manager-cq")
        cells = live["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
        return (
            live
            if {c["name"]: c["nominalQuota"] for c in cells} == {"cpu": "13", "memory": "52Gi"}
            else None
        )

    live = eventually(
        summed,
        what="Kueue v0.19.2 to write manager-cq's quota as the workers' sum (13 CPUs, 52Gi)",
        seconds=90,
        seen=lambda: admin.get(KUEUE, "ClusterQueue", "manager-cq")["status"].get("conditions"),
    )
    path = (
        "spec",
        "resourceGroups",
        0,
        "flavors",
        "[default]",
        "resources",
        "[cpu]",
        "nominalQuota",
    )
    assert multikueue.owns(path)
    who = managed.changed_by(live, path)
    assert who is not None and who["manager"] == multikueue.FIELD_MANAGER, live["metadata"]
    # What managedFieldsManagers: [kueue] (generate argocd) hides: Kueue's writes to the spec are
    # the quota alone (the status is a subresource Argo CD does not compare).
    kueue_spec = [
        set((e.get("fieldsV1") or {}).get("f:spec") or {})
        for e in live["metadata"]["managedFields"]
        if e["manager"] == multikueue.FIELD_MANAGER and e.get("subresource") != "status"
    ]
    assert kueue_spec and all(fields <= {"f:resourceGroups"} for fields in kueue_spec), kueue_spec

    profile = ClusterProfile(
        name="mk", file="clusters/mk/profile.yaml", context="mk", owners=(),
        kueue_api_versions=("v1beta2",), admission_label=("platform.example.com/kueue", "enabled"),
        tenant_label=None, capacity={}, kueue_version=RELEASE,
    )  # fmt: skip
    config_map = {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "kueue-manager-config", "namespace": "kueue-system"},
        "data": {"controller_manager_config.yaml": yaml.safe_dump(
            {**(repo_kueue_config("gpu-staging") or {}), "featureGates": {multikueue.GATE: True}})},
    }  # fmt: skip
    config_resource = manifests.load_text(yaml.safe_dump(config_map), "clusters/mk/kueue.yaml")[0]
    resources = [*desired, *config_resource]
    for r in resources:
        r.cluster = "mk"
    read = reading.Live()
    read.read = {k for _, k in reading.kinds_to_read(profile, resources)}
    for r in resources:
        if r.kind != "ConfigMap":
            read.objects[r.key] = admin.get(r.api_version, r.kind, r.name, r.namespace)
    read.crds = admin.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    found = engine.compare_cluster(engine.RepoSide(profile, resources), read)
    owned = [f for f in found if f.rule.id == "drift-controller-owned"]
    assert {f.path for f in owned} >= {
        "spec.resourceGroups[0].flavors[default].resources[cpu].nominalQuota",
        "spec.resourceGroups[0].flavors[default].resources[memory].nominalQuota",
    }, [(f.rule.id, f.path, f.message) for f in found]
    assert all(f.suppressed is not None for f in owned)
    counted = Report("drift", [f for f in found if f.kind == "ClusterQueue"]).counted()
    assert counted == [], [(f.rule.id, f.path) for f in counted]
