"""The hand-made estate of tests/data/takeover/ as the take-over test uses it: a sandbox running
Kueue configured by hand (server-side applies, as kubectl would), the tenants' Jobs as they
submit them, and who may do what once the repository is synced."""

from __future__ import annotations

import string
import typing as t
from pathlib import Path

import yaml

from auditor.kueue import capacity
from auditor.kueue.workloads import owner_job
from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox
from tests.integration.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]
ESTATE = ROOT / "tests/data/takeover/estate.yaml"
KUEUE = "kueue.x-k8s.io/v1beta2"
MANAGER = "kubectl"
TEAM_LABEL = "company.io/team"
Json = dict[str, t.Any]


class Submission(t.NamedTuple):
    """One tenant's Job as the team submits it: where, which GPU flavor it tolerates, at which
    priority class (None: the queue's default)."""

    namespace: str
    group: str
    gpu: str
    priority: str | None


# Three priority classes in use; robotics names none.
SUBMISSIONS = (
    Submission("nlp", "oidc:team-nlp", "a100", "research-standard"),
    Submission("nlp-eval", "oidc:team-nlp", "a100", "research-low"),
    Submission("vision", "oidc:team-vision", "a100", "research-low"),
    Submission("speech", "oidc:team-speech", "h100", "production-high"),
    Submission("robotics", "oidc:team-robotics", "h100", None),
)


def configure_by_hand(box: Sandbox, version: str) -> KubeCluster:
    """The estate applied as its platform team applied it; the cluster-admin client."""
    admin = box.connect()
    text = string.Template(ESTATE.read_text()).substitute(version=version)
    for doc in yaml.safe_load_all(text):
        admin.apply(doc, manager=MANAGER)
    eventually(  # robotics works through `edit`, whose rules kube-controller-manager aggregates
        lambda: admin.get("rbac.authorization.k8s.io/v1", "ClusterRole", "edit").get("rules"),
        what="the built-in ClusterRole edit aggregated",
        seconds=60,
    )
    return admin


def job(sub: Submission, name: str) -> Json:
    """A GPU Job (cpu, memory, one GPU) for the tenant's LocalQueue `default`, tolerating its
    flavor's taint, at its priority class."""
    labels = {"kueue.x-k8s.io/queue-name": "default"}
    if sub.priority:
        labels["kueue.x-k8s.io/priority-class"] = sub.priority
    request = {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}
    toleration = {"key": "company.io/gpu", "operator": "Equal", "value": sub.gpu,
                  "effect": "NoSchedule"}  # fmt: skip
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": sub.namespace, "labels": labels},
        "spec": {
            "suspend": True,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "tolerations": [toleration],
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


def as_tenant(box: Sandbox, sub: Submission) -> KubeCluster:
    """A client of one of the team's people (a member of its group)."""
    return box.connect(box.credentials(f"{sub.group.split(':')[1]}-member", (sub.group,)))


def admitted(cluster: KubeCluster, namespace: str, job_name: str) -> Json:
    """The Workload of `job_name`, once Kueue admitted it (or the test fails saying its state)."""

    def workload() -> Json | None:
        for w in cluster.list_in(KUEUE, "Workload", namespace):
            if owner_job(w) == job_name:
                return w
        return None

    def admitted_now() -> Json | None:
        w = workload()
        conditions = ((w or {}).get("status") or {}).get("conditions") or []
        done = any(c["type"] == "Admitted" and c["status"] == "True" for c in conditions)
        return w if done else None

    return eventually(
        admitted_now,
        what=f"Kueue admits the Workload of Job {namespace}/{job_name}",
        seconds=90,
        seen=lambda: ((workload() or {}).get("status") or {}).get("conditions"),
    )


def submit_all(box: Sandbox, suffix: str) -> dict[Submission, str]:
    """Each team's Job, submitted by one of its people; Submission -> the Job's name."""
    names = {}
    for sub in SUBMISSIONS:
        name = f"{sub.namespace}-{suffix}"
        as_tenant(box, sub).create(job(sub, name))
        names[sub] = name
    return names


def nodes() -> list[Json]:
    """One kwok node per GPU flavor (16 GPUs each): the capacity import reads."""
    flavors = [d for d in yaml.safe_load_all(ESTATE.read_text()) if d["kind"] == "ResourceFlavor"]
    pool = {"cpu": "128", "memory": "1Ti", "nvidia.com/gpu": "16"}
    return capacity.simulated_nodes(flavors, {"a100": pool, "h100": pool})


def relabel(cluster: KubeCluster, name: str, team: str) -> None:
    """Create namespace `name` as a tenant's and move it to another team, as a platform
    administrator does by hand."""
    labels = {"company.io/gpu-access": "true", TEAM_LABEL: team}
    cluster.create({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "labels": labels}})  # fmt: skip
    cluster.patch("v1", "Namespace", name, {"metadata": {"labels": {TEAM_LABEL: "speech"}}})
