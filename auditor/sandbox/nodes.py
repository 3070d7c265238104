"""Simulated node pools in a sandbox: kube-scheduler binds Pods, kwok plays the kubelet.

The nodes come from the cluster profile (auditor.kueue.capacity.simulated_nodes): one per flavor
with the flavor's nodeLabels, taints and the capacity the profile declares. kwok
(sigs.k8s.io/kwok) marks them Ready and moves the Pods bound to them through their life with
the stages below: Running once bound, Succeeded after the time in the Pod's
`kueue-gitops.io/sandbox-run-for` annotation (never, without it, like the pause image), and on
deletion Failed, then gone, as a kubelet that killed the containers reports. No container runs:
a Pod's command, image and probes mean nothing here, only its requests, selectors and
tolerations, which kube-scheduler (from the pinned Kubernetes) honours as on a real cluster.
"""

from __future__ import annotations

import ssl
import time
import typing as t

import yaml

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import RBAC_API, RBAC_GROUP, Json
from auditor.kueue import capacity
from auditor.repo.layout import Repository
from auditor.sandbox import services
from auditor.sandbox.build import TOOLS, Toolchain, ensure_tool
from auditor.sandbox.services import READY_TIMEOUT, free_port

if t.TYPE_CHECKING:
    from auditor.sandbox.controlplane import Sandbox

KWOK_USER = "kwok-controller"
SCHEDULER_USER = "system:kube-scheduler"  # bound to its roles by the API server's bootstrap RBAC
NOT_READY = "node.kubernetes.io/not-ready"
MANAGED = "kwok.x-k8s.io/node"  # the annotation kwok selects the nodes it plays by
MANAGER = "kueue-gitops-sandbox"
_DELETING = {"key": ".metadata.deletionTimestamp", "operator": "Exists"}
_NOT_DELETING = {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}
_READY = '.status.conditions.[] | select( .type == "Ready" ) | .status'


def _stage(name: str, kind: str, match: list[Json], nxt: Json, delay: Json | None = None) -> Json:
    spec: Json = {
        "resourceRef": {"apiGroup": "v1", "kind": kind},
        "selector": {"matchExpressions": match},
        "next": nxt,
    }
    if delay:
        spec["delay"] = delay
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": spec,
    }


def _phase(*phases: str) -> Json:
    return {"key": ".status.phase", "operator": "In", "values": list(phases)}


_NODE_READY = """
conditions:
{{ $now := Now }}
- {type: Ready, status: "True", reason: KubeletReady, message: simulated by kwok,
   lastHeartbeatTime: {{ $now | Quote }}, lastTransitionTime: {{ $now | Quote }}}
{{ range list "MemoryPressure" "DiskPressure" "PIDPressure" "NetworkUnavailable" }}
- {type: {{ . }}, status: "False", reason: Simulated,
   lastHeartbeatTime: {{ $now | Quote }}, lastTransitionTime: {{ $now | Quote }}}
{{ end }}
addresses:
- {type: InternalIP, address: {{ NodeIP | Quote }}}
- {type: Hostname, address: {{ .metadata.name | Quote }}}
nodeInfo:
  architecture: amd64
  operatingSystem: linux
  kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
phase: Running
"""

_CONTAINERS = """
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  ready: %(ready)s
  restartCount: 0
  started: %(ready)s
  state: %(state)s
{{ end }}
"""

_POD_RUNNING = (
    """
{{ $now := Now }}
phase: Running
startTime: {{ $now | Quote }}
hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
conditions:
- {type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }}}
- {type: Ready, status: "True", lastTransitionTime: {{ $now | Quote }}}
- {type: ContainersReady, status: "True", lastTransitionTime: {{ $now | Quote }}}
"""
    + _CONTAINERS % {"ready": "true", "state": "{running: {startedAt: {{ Now | Quote }}}}"}
)


def _ended(phase: str, code: int, why: str) -> str:
    state = (
        f"{{terminated: {{exitCode: {code}, reason: {why}, "
        "startedAt: {{ Now | Quote }}, finishedAt: {{ Now | Quote }}}}"
    )
    ready = (
        '\nconditions:\n- {type: Ready, status: "False", reason: PodCompleted}'
        '\n- {type: ContainersReady, status: "False", reason: PodCompleted}'
    )
    return f"phase: {phase}{ready}\n" + _CONTAINERS % {"ready": "false", "state": state}


def stages() -> list[Json]:
    """How kwok plays the kubelet for the sandbox's nodes and the Pods bound to them."""
    run_for = f'.metadata.annotations["{capacity.RUN_FOR}"]'
    return [
        _stage(
            "node-ready",
            "Node",
            [{"key": _READY, "operator": "NotIn", "values": ["True"]}],
            {"statusTemplate": _NODE_READY},
        ),
        _stage(
            "pod-running",
            "Pod",
            [_NOT_DELETING, {"key": ".spec.nodeName", "operator": "Exists"}, _phase("Pending")],
            {"statusTemplate": _POD_RUNNING},
        ),
        _stage(
            "pod-succeeded",
            "Pod",
            [_NOT_DELETING, _phase("Running"), {"key": run_for, "operator": "Exists"}],
            {"statusTemplate": _ended("Succeeded", 0, "Completed")},
            {"durationMilliseconds": 0, "durationFrom": {"expressionFrom": run_for}},
        ),
        # A deleted Pod's containers are killed first (the Job controller then counts it and
        # lets it go), as a kubelet reports before the Pod object is removed.
        _stage(
            "pod-killed",
            "Pod",
            [_DELETING, _phase("Pending", "Running")],
            {"statusTemplate": _ended("Failed", 137, "Error")},
        ),
        _stage("pod-removed", "Pod", [_DELETING, _phase("Succeeded", "Failed")], {"delete": True}),
    ]


def _rbac() -> list[Json]:
    """What kwok needs: the nodes it plays and the Pods bound to them, with their status."""
    rules = [
        {
            "apiGroups": [""],
            "resources": ["nodes", "pods"],
            "verbs": ["get", "list", "watch", "patch", "update", "delete"],
        },
        {
            "apiGroups": [""],
            "resources": ["nodes/status", "pods/status"],
            "verbs": ["get", "patch", "update"],
        },
        {
            "apiGroups": ["", "events.k8s.io"],
            "resources": ["events"],
            "verbs": ["create", "patch", "update"],
        },
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "verbs": ["get", "list", "watch", "create", "update", "patch"],
        },
    ]
    meta = {"name": "kueue-gitops-sandbox-kwok"}
    return [
        {"apiVersion": RBAC_API, "kind": "ClusterRole", "metadata": meta, "rules": rules},
        {
            "apiVersion": RBAC_API,
            "kind": "ClusterRoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": meta["name"]},
            "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": KWOK_USER}],
        },
    ]


def pools_for(repo: Repository, cluster: str) -> list[Json]:
    """The nodes a repository cluster's profile declares: one per flavor with capacity."""
    loaded = repo.load([cluster]).for_cluster(cluster)
    flavors = [r.body for r in loaded if r.kind == "ResourceFlavor"]
    return capacity.simulated_nodes(flavors, repo.cluster(cluster).capacity)


def start(
    box: Sandbox,
    toolchain: Toolchain,
    nodes: t.Sequence[Json],
    *,
    timeout: float = READY_TIMEOUT,
    log: t.Callable[[str], None] | None = None,
) -> float:
    """Start kube-scheduler and kwok in `box`, create `nodes`; return the seconds until every
    node is Ready and the scheduler answers."""
    say = log or (lambda _m: None)
    started = time.monotonic()
    kwok = ensure_tool(toolchain.testenv, "kwok", TOOLS["kwok"], log=say)
    admin = box.connect()
    for body in _rbac():
        admin.apply(body, manager=MANAGER)
    folder = box.dir / "kwok"
    folder.mkdir(exist_ok=True)
    config = folder / "stages.yaml"
    config.write_text(yaml.safe_dump_all(stages(), sort_keys=False))
    port = free_port()
    say(f"sandbox {box.name}: starting kube-scheduler and kwok for {len(nodes)} node(s)")
    box.spawn(
        "kube-scheduler",
        [
            str(toolchain.binary("kube-scheduler")),
            f"--kubeconfig={box.credentials(SCHEDULER_USER)}",
            f"--authentication-kubeconfig={box.credentials(SCHEDULER_USER)}",
            f"--authorization-kubeconfig={box.credentials(SCHEDULER_USER)}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
            f"--secure-port={port}",
        ],
    )
    box.spawn(
        "kwok",
        [
            str(kwok),
            f"--kubeconfig={box.credentials(KWOK_USER)}",
            f"--config={config}",
            f"--manage-nodes-with-annotation-selector={MANAGED}=fake",
            "--node-lease-duration-seconds=40",  # renewed: the node lifecycle sees them alive
            "--node-ip=127.0.0.1",
        ],
    )
    for node in nodes:
        body = {**node, "metadata": {**node["metadata"], "annotations": {MANAGED: "fake"}}}
        admin.create(body)
    deadline = started + timeout
    names = [n["metadata"]["name"] for n in nodes]
    _wait(box, "kube-scheduler /healthz", deadline, lambda: _healthy(port))
    _wait(box, "every node Ready and schedulable", deadline, lambda: _all_ready(box, names))
    took = round(time.monotonic() - started, 2)
    say(f"sandbox {box.name}: {len(nodes)} simulated node(s) Ready after {took}s")
    return took


def _wait(box: Sandbox, what: str, deadline: float, ready: t.Callable[[], bool]) -> None:
    box.wait_until(what, deadline, ready, ("kwok", "kube-scheduler"))


def _healthy(port: int) -> bool:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # its serving certificate is self-signed, made at start
    return services.http_ok(f"https://127.0.0.1:{port}/healthz", ctx)


def _all_ready(box: Sandbox, names: list[str]) -> bool:
    try:
        live = {n["metadata"]["name"]: n for n in box.connect().list("v1", "Node")}
    except ClusterAccessError:
        return False
    return all(name in live and _schedulable(live[name]) for name in names)


def _schedulable(node: Json) -> bool:
    """Ready, and the node lifecycle controller took off the taint a new node starts with."""
    taints = (node.get("spec") or {}).get("taints") or []
    return capacity.ready(node) and not any(t.get("key") == NOT_READY for t in taints)
