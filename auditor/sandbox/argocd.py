"""Run a real Argo CD in one sandbox, syncing this repository into every sandbox.

Argo CD is the pinned release built from testenv/tools/argocd (one binary; the environment
variable ARGOCD_BINARY_NAME picks the daemon). It runs as a small installation does, with these
local substitutions:
- the daemons are local processes on loopback ports, not pods: Redis (the distribution's
  `redis-server`, found by sandbox/services.py), the repo-server, the application controller
  and the ApplicationSet controller (no API server or UI: nothing here needs them), all
  stopped by `sandbox down`;
- they authenticate to the host sandbox with a client certificate in `system:masters`, and each
  sandbox is registered as a cluster Secret named after its repository cluster (what the
  ApplicationSets' `destination.name` says), with its CA and a client certificate;
- the repository is served from a local bare clone (`file://`, no git server) holding the
  current commit on `main`, plus the uncommitted changes of the working tree, if any, as one
  commit on top (so what is tested is what is on disk; repo/gitsource.snapshot makes it);
- the committed argocd/ objects are applied as they are, pointed at that clone by
  `auditor.repo.argocd.for_url`, the same as `kueue-gitops generate argocd --repo-url`.

Watching and driving the running Argo CD (its Applications, refreshes, sync windows, scratch
commits) is sandbox/argocd_control.py's.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import time
import typing as t
from dataclasses import asdict, dataclass, field
from pathlib import Path

from auditor.errors import ConfigError, SandboxError
from auditor.k8s.objects import Json
from auditor.repo import argocd as repo_argocd
from auditor.repo import gitsource
from auditor.sandbox import pki, services
from auditor.sandbox.build import ARGOCD_MODULE, TOOLS, ensure_tool, module_dir
from auditor.sandbox.services import READY_TIMEOUT, free_port

if t.TYPE_CHECKING:
    from auditor.repo.layout import Repository
    from auditor.sandbox.controlplane import Sandbox

NAMESPACE = "argocd"
API = "argoproj.io/v1alpha1"
USER = "argocd-controller"
MANAGER = "kueue-gitops-sandbox"
BRANCH = "main"  # the revision argocd/applicationsets.yaml names
REDIS = "redis"
REPO_SERVER = "argocd-repo-server"
CONTROLLER = "argocd-application-controller"
APPSET_CONTROLLER = "argocd-applicationset-controller"
DAEMONS = (REDIS, REPO_SERVER, CONTROLLER, APPSET_CONTROLLER)
# How often Argo CD polls the repository without a refresh (upstream's default is 180s).
RECONCILIATION = "20s"
RENDERERS = ("kustomize", "helm")  # built from testenv/tools/, at the releases Argo CD runs
HACK_SCRIPTS = ("git-verify-wrapper.sh", "gpg-wrapper.sh")  # the repo-server runs them


@dataclass
class ArgoState:
    """What `start` set up, kept in the host sandbox's folder for tests, bench and CLI."""

    host: str
    clusters: dict[str, str]  # repository cluster -> sandbox name
    repo: str  # the bare clone's path
    commit: str
    ports: dict[str, int] = field(default_factory=dict)
    started_seconds: float = 0.0

    @property
    def url(self) -> str:
        return f"file://{self.repo}"


def state_file(box: Sandbox) -> Path:
    return box.dir / "argocd" / "state.json"


def state(box: Sandbox) -> ArgoState | None:
    path = state_file(box)
    return ArgoState(**json.loads(path.read_text())) if path.is_file() else None


# -- the served repository ---------------------------------------------------------------------


def serve_repository(root: Path, bare: Path) -> str:
    """A bare clone of `root` at `bare` whose `main` is the current commit, with the working
    tree's uncommitted changes as one more commit (repo/gitsource.snapshot); that commit."""
    try:
        return gitsource.snapshot(root, bare, BRANCH)
    except ConfigError as exc:
        raise SandboxError(f"Argo CD cannot serve {root}: {exc}") from exc


# -- start and stop ----------------------------------------------------------------------------


def start(
    host: Sandbox,
    clusters: t.Mapping[str, Sandbox],
    repo: Repository,
    testenv: Path,
    *,
    timeout: float = READY_TIMEOUT,
    log: t.Callable[[str], None] | None = None,
) -> ArgoState:
    """Start Argo CD in `host`, register `clusters` (repository cluster -> its sandbox), serve
    the repository and apply argocd/; return what was set up once every daemon answers."""
    say = log or (lambda _m: None)
    if repo.root is None:
        raise SandboxError("Argo CD serves a working tree; open the repository from a folder")
    started = time.monotonic()
    binary = ensure_tool(testenv, "argocd", TOOLS["argocd"], log=say)
    redis = services.redis_server()
    folder = host.dir / "argocd"
    for sub in ("tls", "ssh", "gnupg", "bin"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    hack = module_dir(testenv, "tools/argocd", ARGOCD_MODULE) / "hack"
    for script in HACK_SCRIPTS:
        target = folder / "bin" / script
        shutil.copyfile(hack / script, target)
        target.chmod(target.stat().st_mode | stat.S_IXUSR)
    for renderer in RENDERERS:  # the repo-server runs them from its PATH, as upstream's image
        (folder / "bin" / renderer).unlink(missing_ok=True)
        (folder / "bin" / renderer).symlink_to(
            ensure_tool(testenv, renderer, TOOLS[renderer], log=say)
        )
    commit = serve_repository(repo.root, folder / "repo.git")
    say(f"argocd: serving {repo.root} at {commit[:12]} from {folder / 'repo.git'}")
    st = ArgoState(host.name, {c: b.name for c, b in clusters.items()}, str(folder / "repo.git"),
                   commit)  # fmt: skip
    st.ports = {name: free_port() for name in (
        "redis", "repo-server", "repo-server-metrics", "controller-metrics",
        "appset-metrics", "appset-probe", "appset-webhook")}  # fmt: skip

    admin = host.connect()
    host.install_crd_sets(testenv, ["argocd"])
    for body in _bootstrap(clusters):
        admin.apply(body, manager=MANAGER)
    _spawn_all(host, binary, redis, folder, st)
    _wait_ready(host, st, started + timeout)
    for body in sorted(
        repo_argocd.for_url(repo, st.url),
        key=lambda b: b.get("kind") != "AppProject",  # projects before what names them
    ):
        admin.apply(body, manager=MANAGER)
    st.started_seconds = round(time.monotonic() - started, 2)
    state_file(host).write_text(json.dumps(asdict(st), indent=2) + "\n")
    say(f"argocd: up in {host.name} after {st.started_seconds}s, syncing {sorted(clusters)}")
    return st


def _bootstrap(clusters: t.Mapping[str, Sandbox]) -> list[Json]:
    """The namespace, argocd-cm and one cluster Secret per sandbox."""
    objects: list[Json] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "argocd-cm",
                "namespace": NAMESPACE,
                "labels": {"app.kubernetes.io/part-of": "argocd"},  # Argo CD reads only these
            },
            # No in-cluster destination: every cluster is one of the Secrets below, by name.
            "data": {"timeout.reconciliation": RECONCILIATION, "cluster.inClusterEnabled": "false"},
        },
    ]
    for cluster, box in sorted(clusters.items()):
        pair = pki.CertificateAuthority(box.pki).issue(
            USER, USER, organizations=("system:masters",)
        )
        tls = {
            "caData": _b64(box.pki / "ca.crt"),
            "certData": _b64(pair.cert),
            "keyData": _b64(pair.key),
        }
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "name": f"cluster-{cluster}",
                    "namespace": NAMESPACE,
                    "labels": {"argocd.argoproj.io/secret-type": "cluster"},
                },
                "stringData": {
                    "name": cluster,
                    "server": box.server,
                    "config": json.dumps({"tlsClientConfig": tls}),
                },
            }
        )
    return objects


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def _spawn_all(host: Sandbox, binary: Path, redis: str, folder: Path, st: ArgoState) -> None:
    p = st.ports
    kubeconfig = host.credentials(USER, ("system:masters",))
    env = {
        "KUBECONFIG": str(kubeconfig),
        "PATH": f"{folder / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "ARGOCD_TLS_DATA_PATH": str(folder / "tls"),
        "ARGOCD_SSH_DATA_PATH": str(folder / "ssh"),
        "ARGOCD_GNUPGHOME": str(folder / "gnupg"),
        "ARGOCD_GPG_ENABLED": "false",
    }
    redis_addr = f"127.0.0.1:{p['redis']}"
    repo_server = f"127.0.0.1:{p['repo-server']}"
    # Redis keeps only a cache: nothing is saved to disk.
    host.spawn(REDIS, [redis, "--bind", "127.0.0.1", "--port", str(p["redis"]),
                       "--save", "", "--appendonly", "no"])  # fmt: skip
    daemons: dict[str, list[str]] = {
        REPO_SERVER: [
            "--address", "127.0.0.1", "--port", str(p["repo-server"]),
            "--metrics-address", "127.0.0.1", "--metrics-port", str(p["repo-server-metrics"]),
            "--disable-tls", "--client-ca-path=",  # the default CA path contradicts no TLS
            "--redis", redis_addr,
        ],
        CONTROLLER: [
            "--namespace", NAMESPACE, "--repo-server", repo_server, "--repo-server-plaintext",
            "--redis", redis_addr, "--metrics-port", str(p["controller-metrics"]),
        ],
        APPSET_CONTROLLER: [
            "--namespace", NAMESPACE, "--argocd-repo-server", repo_server,
            "--repo-server-plaintext",
            "--metrics-addr", f"127.0.0.1:{p['appset-metrics']}",
            "--probe-addr", f"127.0.0.1:{p['appset-probe']}",
            "--webhook-addr", f"127.0.0.1:{p['appset-webhook']}",
        ],
    }  # fmt: skip
    for name, args in daemons.items():
        host.spawn(name, [str(binary), *args], env={**env, "ARGOCD_BINARY_NAME": name})


def _wait_ready(host: Sandbox, st: ArgoState, deadline: float) -> None:
    p = st.ports
    checks = {
        REDIS: lambda: services.redis_ping(p["redis"]),
        REPO_SERVER: lambda: services.port_open(p["repo-server"]),
        CONTROLLER: lambda: services.http_ok(f"http://127.0.0.1:{p['controller-metrics']}/metrics"),
        APPSET_CONTROLLER: lambda: services.http_ok(
            f"http://127.0.0.1:{p['appset-metrics']}/metrics"
        ),
    }
    for name, ready in checks.items():
        host.wait_until(f"Argo CD's {name}", deadline, ready, DAEMONS)
