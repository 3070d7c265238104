"""What upgrade-check asks the live cluster: is Kueue's controller current, do its admission
webhooks and its conversion webhook answer, what do its CRDs store.

The webhooks are probed with server-side dry-run creates, which go through every mutating and
validating webhook and store nothing. A webhook that refuses the object still answered; only a
call that fails ("failed calling webhook") means it is down.
"""

from __future__ import annotations

import typing as t

from auditor.errors import ClusterAccessError
from auditor.k8s import conditions
from auditor.k8s.objects import ADMISSION_API, CRD_API, KUEUE_GROUP, Json
from auditor.live.apierrors import KindNotServed, NotFound, WebhookFailed

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

PROBE = "kueue-gitops-upgrade-check"
SAMPLE = 20  # objects of each kind read back one by one in each served version
NAMESPACE = "default"  # a namespaced probe's namespace: every cluster has it
WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
_POD = {
    "restartPolicy": "Never",
    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
}
# Minimal valid specs: each passes the schema, so a failure is the webhook's.
_SPECS: dict[str, Json] = {
    "ResourceFlavor": {"spec": {}},
    "ClusterQueue": {"spec": {"namespaceSelector": {}}},
    "Cohort": {"spec": {}},
    "LocalQueue": {"spec": {"clusterQueue": PROBE}},
    "WorkloadPriorityClass": {"value": 0},
    "Workload": {
        "spec": {
            "queueName": PROBE,
            "podSets": [{"name": "main", "count": 1, "template": {"spec": _POD}}],
        }
    },
}


def kueue_crds(cluster: KubeCluster) -> list[Json]:
    crds = cluster.list(CRD_API, "CustomResourceDefinition")
    return [c for c in crds if (c.get("spec") or {}).get("group") == KUEUE_GROUP]


def storage(crd: Json) -> str:
    return str(next(v["name"] for v in crd["spec"]["versions"] if v.get("storage")))


def served(crd: Json) -> list[str]:
    return [v["name"] for v in crd["spec"]["versions"] if v.get("served")]


def kind_of(crd: Json) -> str:
    return str(crd["spec"]["names"]["kind"])


def stale_queues(cluster: KubeCluster, api: str) -> list[str]:
    """ClusterQueues whose Active condition was not written for their current spec."""
    out = []
    for cq in cluster.list(api, "ClusterQueue"):
        active = conditions.condition(cq, "Active")
        generation = cq["metadata"].get("generation")
        seen = active.get("observedGeneration")
        if not active or (seen is not None and seen != generation):
            out.append(str(cq["metadata"]["name"]))
    return out


def deployment_unavailable(cluster: KubeCluster, name: str, namespace: str) -> str | None:
    """Why the Deployment is not available, None when it is or does not exist (a sandbox)."""
    try:
        found = cluster.get("apps/v1", "Deployment", name, namespace)
    except NotFound:
        return None
    status = found.get("status") or {}
    if int(status.get("availableReplicas") or 0) >= 1:
        return None
    replicas = status.get("availableReplicas") or 0
    return f"Deployment {namespace}/{name} has {replicas} available replicas"


def webhook_kinds(cluster: KubeCluster, crds: list[Json]) -> list[str]:
    """The Kueue kinds a live webhook configuration covers."""
    plurals = {c["spec"]["names"]["plural"]: kind_of(c) for c in crds}
    kinds: set[str] = set()
    for kind in WEBHOOK_KINDS:
        for config in cluster.list(ADMISSION_API, kind):
            for hook in config.get("webhooks") or []:
                for rule in hook.get("rules") or []:
                    if KUEUE_GROUP in (rule.get("apiGroups") or []):
                        kinds |= {plurals[r] for r in rule.get("resources") or [] if r in plurals}
    return sorted(kinds)


def dry_run_create(cluster: KubeCluster, crd: Json) -> str | None:
    """None when Kueue's webhooks answered a dry-run create of the kind; else why not."""
    kind = kind_of(crd)
    body: Json = {
        "apiVersion": f"{KUEUE_GROUP}/{storage(crd)}",
        "kind": kind,
        "metadata": {"name": PROBE},
        **_SPECS.get(kind, {"spec": {}}),
    }
    namespaced = crd["spec"].get("scope") == "Namespaced"
    if namespaced:
        body["metadata"]["namespace"] = NAMESPACE
    path = cluster.path(body["apiVersion"], kind, NAMESPACE if namespaced else None)
    try:
        cluster.request("POST", path, query=[("dryRun", "All")], body=body, what=f"dry-run {kind}")
    except WebhookFailed as exc:
        return str(exc)
    except ClusterAccessError:  # answered (a refusal is the webhook working), or not reachable
        return None
    return None


def unreadable_versions(cluster: KubeCluster, crd: Json) -> dict[str, str]:
    """Served versions in which the stored objects cannot all be read back (conversion)."""
    if ((crd["spec"].get("conversion") or {}).get("strategy") or "None") != "Webhook":
        return {}
    out = {}
    for version in served(crd):
        api = f"{KUEUE_GROUP}/{version}"
        try:
            found = cluster.list(api, kind_of(crd))
            # A LIST may come from the API server's cache, converted when it was filled: read
            # some back one by one, from etcd, through the webhook as it is now.
            for obj in found[:SAMPLE]:
                meta = obj["metadata"]
                cluster.get(api, kind_of(crd), meta["name"], meta.get("namespace"))
        except KindNotServed:
            continue
        except ClusterAccessError as exc:
            out[version] = str(exc)
    return out


def count(cluster: KubeCluster, crd: Json) -> int:
    return len(cluster.list(f"{KUEUE_GROUP}/{storage(crd)}", kind_of(crd)))
