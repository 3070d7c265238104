"""Run Kueue's controller manager and kube-controller-manager against a running sandbox.

Kueue starts from the Configuration the repository keeps for the cluster (clusters/<c>/kueue/,
passed in by the caller), or from Kueue's own defaults without one, with the addresses, ports,
paths and leader election a local process needs laid over it (`overlay`).

Kueue runs as it does on a cluster, with three local substitutions:
- It manages its own certificates (internalCertManagement), as the default install does. Its
  webhook configurations and the CRDs' conversion stanzas name the Service
  `kueue-webhook-service`, which here is an ExternalName Service for `localhost`: the API server
  resolves such a Service to its external name and the webhook's port, so it calls Kueue on
  loopback while verifying the certificate for `kueue-webhook-service.kueue-system.svc`, the
  name Kueue signs. (Turning internal certificates off would make Kueue read its metrics
  certificate from the fixed path /etc/kueue/metrics/certs, which one host cannot give to two
  sandboxes.)
- It authenticates with a client certificate of its own and is authorized by upstream's
  ClusterRole, read from the pinned module, bound to that identity.
- Only the webhooks of batch/v1 Jobs are installed: other integrations' CRDs are not there.

kube-controller-manager runs the controllers that probe Jobs need: the Job controller creates
Pods (they stay Pending: no scheduler, no kubelet), the garbage collector removes a Job's Pods and
Workload, the namespace controller empties deleted namespaces, and the built-in roles get their
aggregated rules.
"""

from __future__ import annotations

import base64
import copy
import time
import typing as t
from pathlib import Path

import yaml

from auditor.errors import ClusterAccessError, SandboxError
from auditor.k8s.objects import CRD_API, KUEUE_GROUP, RBAC_API, RBAC_GROUP
from auditor.kueue import CONTROLLER, NAMESPACE
from auditor.kueue import release as kueue_release
from auditor.kueue.config import API_VERSION
from auditor.sandbox import services
from auditor.sandbox.build import KueueRelease, Toolchain
from auditor.sandbox.services import READY_TIMEOUT, free_port

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster
    from auditor.sandbox.controlplane import Sandbox

SERVICE = "kueue-webhook-service"
SECRET = "kueue-webhook-server-cert"
# Kueue's identity as upstream installs it, the ServiceAccount kueue-controller-manager, held
# here by a client certificate (the API server takes the account's user name and groups from
# it): RBAC binds the account, and drift trusts it as a profile's drift.trustedSubjects does on
# a real cluster, so a repository's drift against its sandbox is clean.
KUEUE_ACCOUNT = CONTROLLER
KUEUE_USER = f"system:serviceaccount:{NAMESPACE}:{KUEUE_ACCOUNT}"
KUEUE_GROUPS = ("system:serviceaccounts", f"system:serviceaccounts:{NAMESPACE}")
KUEUE_SUBJECT = {"kind": "ServiceAccount", "name": KUEUE_ACCOUNT, "namespace": NAMESPACE}
KCM_USER = "system:kube-controller-manager"  # bound to its role by the API server's bootstrap RBAC
MANAGER = "kueue-gitops-sandbox"
# Webhooks of the API groups the sandbox's Kueue serves (the batch/v1 Job integration only).
WEBHOOK_GROUPS = {KUEUE_GROUP, "batch"}
WEBHOOK_CONFIGURATIONS = {"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}
KCM_CONTROLLERS = (
    "job-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    # Takes the not-ready taint off simulated nodes once Ready (and puts it back when kwok's
    # lease renewals stop), as on a cluster: sandbox/nodes.py.
    "node-lifecycle-controller",
    # Fills the rules of aggregated ClusterRoles (the built-in admin, edit, view), as on every
    # cluster: without it a tenant bound to `edit` may do nothing at all.
    "clusterrole-aggregation-controller",
)


def start(
    box: Sandbox,
    toolchain: Toolchain,
    release: KueueRelease | None = None,
    *,
    configuration: dict[str, t.Any] | None = None,
    timeout: float = READY_TIMEOUT,
    log: t.Callable[[str], None] | None = None,
) -> float:
    """Start Kueue `release` (default: the control plane's; from `configuration`, overlaid)
    and kube-controller-manager in `box`; return the seconds until both serve."""
    say = log or (lambda _m: None)
    release = release or toolchain.kueue
    converted = _converted(release)
    started = time.monotonic()
    admin = box.connect()
    webhook_port, health_port = free_port(), free_port()
    _install(admin, release, converted, webhook_port)
    folder = box.dir / "kueue"
    folder.mkdir(exist_ok=True)
    (folder / "certs").mkdir(exist_ok=True)
    config = folder / "config.yaml"
    settings = overlay(configuration, folder, webhook_port, health_port)
    config.write_text(yaml.safe_dump(settings))
    say(f"sandbox {box.name}: starting kube-controller-manager and Kueue {release.version}")
    spawn_controller_manager(box, toolchain)
    box.spawn(
        "kueue",
        [
            str(release.binary),
            f"--config={config}",
            f"--kubeconfig={box.credentials(KUEUE_USER, KUEUE_GROUPS)}",
        ],
    )
    deadline = started + timeout
    wait(box, "Kueue's certificate", deadline, lambda: _mount_secret(admin, folder / "certs"))
    wait(box, "Kueue /readyz", deadline, lambda: kueue_ready(health_port))
    wait(box, "Kueue's CA in the CRDs", deadline, lambda: _ca_injected(admin, converted))
    wait(box, "conversion through Kueue", deadline, lambda: _converts(admin))
    wait(box, "kube-controller-manager", deadline, lambda: controller_manager_ready(admin))
    took = round(time.monotonic() - started, 2)
    say(f"sandbox {box.name}: Kueue and kube-controller-manager ready after {took}s")
    return took


def spawn_controller_manager(box: Sandbox, toolchain: Toolchain) -> None:
    box.spawn(
        "kube-controller-manager",
        [
            str(toolchain.binary("kube-controller-manager")),
            f"--kubeconfig={box.credentials(KCM_USER)}",
            f"--controllers={','.join(KCM_CONTROLLERS)}",
            "--use-service-account-credentials=true",  # each controller under its own role
            f"--service-account-private-key-file={box.pki / 'service-account.key'}",
            f"--root-ca-file={box.pki / 'ca.crt'}",
            "--leader-elect=false",
            "--secure-port=0",
        ],
    )


def _converted(release: KueueRelease) -> list[str]:
    """The CRDs upstream's install serves through Kueue's conversion webhook (their versions
    differ), as the release's own kustomization says (auditor/kueue/api/<release>.json)."""
    known = kueue_release.get(release.version)
    if known is None:
        raise SandboxError(
            f"this tool carries no knowledge of Kueue {release.version}: "
            f"{kueue_release.add_command(release.version)}"
        )
    return known.converted


def _install(
    admin: KubeCluster, release: KueueRelease, converted: list[str], webhook_port: int
) -> None:
    """Namespace, the ExternalName Service, RBAC, webhooks and conversion stanzas, as admin."""
    for body in [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": SERVICE, "namespace": NAMESPACE},
            "spec": {
                "type": "ExternalName",
                "externalName": "localhost",
                "ports": [{"name": "webhook", "port": webhook_port}],
            },
        },
        # Kueue's certificate rotator fills this Secret; upstream installs it empty too.
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": SECRET, "namespace": NAMESPACE},
        },
        *_rbac(release),
        *_webhooks(release, webhook_port),
    ]:
        admin.apply(body, manager=MANAGER)
    for plural in converted:
        admin.patch(
            CRD_API,
            "CustomResourceDefinition",
            f"{plural}.{KUEUE_GROUP}",
            {"spec": {"conversion": _conversion(webhook_port)}},
            manager=MANAGER,
        )


def _conversion(port: int) -> dict[str, t.Any]:
    return {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"service": _service_ref("/convert", port)},
        },
    }


def _service_ref(path: str, port: int) -> dict[str, t.Any]:
    return {"name": SERVICE, "namespace": NAMESPACE, "path": path, "port": port}


def _upstream(release: KueueRelease, name: str) -> list[dict[str, t.Any]]:
    return [d for d in yaml.safe_load_all(release.config(name).read_text()) if d]


def _rbac(release: KueueRelease) -> list[dict[str, t.Any]]:
    """Upstream's manager ClusterRole and secrets Role, bound to Kueue's client identity."""
    [role] = _upstream(release, "role.yaml")
    [secrets] = _upstream(release, "manager_secrets_role.yaml")
    role["metadata"] = {"name": "kueue-manager-role"}
    # Upstream's install prefixes the webhook configurations' names with `kueue-`, and (from
    # v0.19) the role's resourceNames that point at them alike; _webhooks names them so.
    for rule in role.get("rules") or []:
        if set(rule.get("resources") or ()) & WEBHOOK_CONFIGURATIONS and "resourceNames" in rule:
            rule["resourceNames"] = [f"kueue-{n}" for n in rule["resourceNames"]]
    secrets["metadata"] = {"name": "kueue-manager-secrets-role", "namespace": NAMESPACE}
    subject = [KUEUE_SUBJECT]
    bindings = [
        {
            "apiVersion": RBAC_API,
            "kind": body["kind"] + "Binding",
            "metadata": body["metadata"],
            "roleRef": {
                "apiGroup": RBAC_GROUP,
                "kind": body["kind"],
                "name": body["metadata"]["name"],
            },
            "subjects": subject,
        }
        for body in (role, secrets)
    ]
    return [role, secrets, *bindings]


def _webhooks(release: KueueRelease, port: int) -> list[dict[str, t.Any]]:
    """Upstream's webhook configurations under the names Kueue injects its CA into."""
    out = []
    for config in _upstream(release, "manifests.yaml"):
        kind = "mutating" if config["kind"].startswith("Mutating") else "validating"
        config["metadata"] = {"name": f"kueue-{kind}-webhook-configuration"}
        hooks = [
            h
            for h in config["webhooks"]
            if {g for rule in h["rules"] for g in rule["apiGroups"]} <= WEBHOOK_GROUPS
        ]
        for hook in hooks:
            hook["clientConfig"] = {
                "service": _service_ref(hook["clientConfig"]["service"]["path"], port)
            }
        config["webhooks"] = hooks
        out.append(config)
    return out


def overlay(
    configuration: dict[str, t.Any] | None, folder: Path, webhook_port: int, health_port: int
) -> dict[str, t.Any]:
    """The repository's Configuration with what only a local process can say laid over it:
    loopback addresses on free ports, the certificate folder, no leader election, this
    sandbox's webhook Service and Secret; everything that decides admission is kept."""
    config = copy.deepcopy(configuration or {"apiVersion": API_VERSION, "kind": "Configuration"})
    config["namespace"] = NAMESPACE
    config["health"] = {
        **(config.get("health") or {}),
        "healthProbeBindAddress": f"127.0.0.1:{health_port}",
    }
    # Scraped by tests/integration/test_alert_metrics.py (bearer token, TokenReview + SAR).
    config["metrics"] = {
        **(config.get("metrics") or {}),
        "bindAddress": f"127.0.0.1:{free_port()}",
    }
    config["webhook"] = {
        "host": "127.0.0.1",
        "port": webhook_port,
        "certDir": str(folder / "certs"),
    }
    config["leaderElection"] = {**(config.get("leaderElection") or {}), "leaderElect": False}
    config["internalCertManagement"] = {
        "enable": True,
        "webhookServiceName": SERVICE,
        "webhookSecretName": SECRET,
    }
    config.pop("pprofBindAddress", None)
    config.pop("visibilityServer", None)
    # The visibility API server binds a fixed port and is not needed to admit work.
    config["featureGates"] = {**(config.get("featureGates") or {}), "VisibilityOnDemand": False}
    return config


# -- readiness ---------------------------------------------------------------------------------


def wait(box: Sandbox, what: str, deadline: float, ready: t.Callable[[], bool]) -> None:
    """Wait for `ready`, failing at once if Kueue or kube-controller-manager exits."""
    box.wait_until(what, deadline, ready, ("kueue", "kube-controller-manager"))


def _mount_secret(admin: KubeCluster, folder: Path) -> bool:
    """Write the certificate Secret into Kueue's certDir once it is filled.

    On a cluster the kubelet mounts this Secret into the pod; Kueue waits for the files.
    """
    data = admin.get("v1", "Secret", SECRET, NAMESPACE).get("data") or {}
    if not {"tls.crt", "tls.key"} <= data.keys():
        return False
    for key, value in data.items():
        (folder / key).write_bytes(base64.b64decode(value))
    return True


def kueue_ready(port: int) -> bool:
    """Kueue's health endpoint says ready (its webhooks serve, its caches synced)."""
    return services.http_ok(f"http://127.0.0.1:{port}/readyz")


def _ca_injected(admin: KubeCluster, converted: list[str]) -> bool:
    for plural in converted:
        crd = admin.get(CRD_API, "CustomResourceDefinition", f"{plural}.{KUEUE_GROUP}")
        bundle = crd["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle")
        if not bundle or b"CERTIFICATE" not in base64.b64decode(bundle):
            return False
    return True


def _converts(admin: KubeCluster) -> bool:
    """A v1beta1 read of a converted kind answers, so the API server reaches the webhook."""
    try:
        admin.request("GET", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues", what="conversion")
        admin.apply(_probe_cohort(), manager=MANAGER, dry_run=True)
    except ClusterAccessError:
        return False
    return True


def _probe_cohort() -> dict[str, t.Any]:
    # A dry-run create goes through the validating webhook of Cohorts (and stores nothing).
    return {
        "apiVersion": f"{KUEUE_GROUP}/v1beta1",
        "kind": "Cohort",
        "metadata": {"name": "kueue-gitops-sandbox-probe"},
        "spec": {},
    }


def controller_manager_ready(admin: KubeCluster) -> bool:
    """The service-account controller made `default` in `default`: the manager is working."""
    try:
        admin.get("v1", "ServiceAccount", "default", "default")
    except ClusterAccessError:
        return False
    return True
