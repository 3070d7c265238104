"""Run a Kueue release from before v0.15 in a sandbox: v1beta1 only, no conversion webhook.

What differs from sandbox/kueue.py, read from the release and tried on the pinned API server:
- Its Configuration is config.kueue.x-k8s.io/v1beta1, without featureGates: the visibility
  server (which binds a fixed port) is turned off by flag.
- Its internal certificate management waits for the serving certificate in a fixed folder,
  /tmp/k8s-webhook-server/serving-certs, which two sandboxes on one host would share. So it is
  turned off: the sandbox's CA issues the serving certificate into the Configuration's certDir,
  and the webhook configurations call https://127.0.0.1:<port><path> with that CA as caBundle.
- Its one ClusterRole holds the secrets rules too (no separate Role).
- Its /readyz can pass before the webhook handlers answer, so readiness is a dry-run create that
  goes through the ClusterQueue webhooks.
"""

from __future__ import annotations

import base64
import copy
import shutil
import time
import typing as t

import yaml

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import KUEUE_GROUP, RBAC_API, RBAC_GROUP, Json
from auditor.kueue import NAMESPACE
from auditor.sandbox import kueue, pki
from auditor.sandbox.build import KueueRelease, Toolchain
from auditor.sandbox.services import READY_TIMEOUT, free_port

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster
    from auditor.sandbox.controlplane import Sandbox

CONFIG_API = "config.kueue.x-k8s.io/v1beta1"


def is_legacy(release: KueueRelease) -> bool:
    return "v1beta2" not in release.served


def start(
    box: Sandbox,
    toolchain: Toolchain,
    release: KueueRelease,
    *,
    configuration: Json | None = None,
    timeout: float = READY_TIMEOUT,
    log: t.Callable[[str], None] | None = None,
) -> float:
    """Start `release` (from `configuration`, overlaid) and kube-controller-manager in `box`."""
    say = log or (lambda _m: None)
    started = time.monotonic()
    admin = box.connect()
    webhook_port, health_port = free_port(), free_port()
    certs = box.dir / "kueue" / "certs"
    certs.mkdir(parents=True, exist_ok=True)
    ca = pki.CertificateAuthority(box.pki)
    serving = ca.issue("kueue-webhook", "kueue-webhook", server=True)
    shutil.copyfile(serving.cert, certs / "tls.crt")
    shutil.copyfile(serving.key, certs / "tls.key")
    bundle = base64.b64encode(ca.cert_path.read_bytes()).decode()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    for body in [namespace, *_rbac(release), *_webhooks(release, webhook_port, bundle)]:
        admin.apply(body, manager=kueue.MANAGER)
    config = box.dir / "kueue" / "config.yaml"
    config.write_text(yaml.safe_dump(overlay(configuration, str(certs), webhook_port, health_port)))
    say(f"sandbox {box.name}: starting kube-controller-manager and Kueue {release.version}")
    kueue.spawn_controller_manager(box, toolchain)
    box.spawn(
        "kueue",
        [
            str(release.binary),
            f"--config={config}",
            f"--kubeconfig={box.credentials(kueue.KUEUE_USER, kueue.KUEUE_GROUPS)}",
            "--feature-gates=VisibilityOnDemand=false",
        ],
    )
    deadline = started + timeout
    kueue.wait(box, "Kueue /readyz", deadline, lambda: kueue.kueue_ready(health_port))
    kueue.wait(box, "Kueue's webhooks", deadline, lambda: _webhooks_answer(admin))
    kueue.wait(
        box, "kube-controller-manager", deadline, lambda: kueue.controller_manager_ready(admin)
    )
    took = round(time.monotonic() - started, 2)
    say(f"sandbox {box.name}: Kueue {release.version} and the controllers ready after {took}s")
    return took


def overlay(configuration: Json | None, cert_dir: str, webhook_port: int, health_port: int) -> Json:
    """The repository's Configuration with the local process's addresses laid over it."""
    config = copy.deepcopy(configuration or {"apiVersion": CONFIG_API, "kind": "Configuration"})
    config.update(
        namespace=NAMESPACE,
        health={
            **(config.get("health") or {}),
            "healthProbeBindAddress": f"127.0.0.1:{health_port}",
        },
        metrics={**(config.get("metrics") or {}), "bindAddress": f"127.0.0.1:{free_port()}"},
        webhook={"host": "127.0.0.1", "port": webhook_port, "certDir": cert_dir},
        leaderElection={**(config.get("leaderElection") or {}), "leaderElect": False},
        internalCertManagement={"enable": False},
    )
    config.pop("pprofBindAddress", None)
    return config


def _rbac(release: KueueRelease) -> list[Json]:
    [role] = [d for d in yaml.safe_load_all(release.config("role.yaml").read_text()) if d]
    role["metadata"] = {"name": "kueue-manager-role"}
    return [
        role,
        {
            "apiVersion": RBAC_API,
            "kind": "ClusterRoleBinding",
            "metadata": role["metadata"],
            "roleRef": {
                "apiGroup": RBAC_GROUP,
                "kind": "ClusterRole",
                "name": "kueue-manager-role",
            },
            "subjects": [kueue.KUEUE_SUBJECT],
        },
    ]


def _webhooks(release: KueueRelease, port: int, bundle: str) -> list[Json]:
    """Upstream's webhook configurations for the groups the sandbox serves, called on loopback."""
    out = []
    for config in yaml.safe_load_all(release.config("manifests.yaml").read_text()):
        if not config:
            continue
        kind = "mutating" if config["kind"].startswith("Mutating") else "validating"
        config["metadata"] = {"name": f"kueue-{kind}-webhook-configuration"}
        hooks = [
            h
            for h in config["webhooks"]
            if {g for rule in h["rules"] for g in rule["apiGroups"]} <= kueue.WEBHOOK_GROUPS
        ]
        for hook in hooks:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
        config["webhooks"] = hooks
        out.append(config)
    return out


def _webhooks_answer(admin: KubeCluster) -> bool:
    """A dry-run create of a ClusterQueue goes through Kueue's mutating and validating hooks."""
    probe = {
        "apiVersion": f"{KUEUE_GROUP}/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": "kueue-gitops-sandbox-probe"},
        "spec": {"namespaceSelector": {}},
    }
    try:
        admin.apply(probe, manager=kueue.MANAGER, dry_run=True)
    except ClusterAccessError:
        return False
    return True
