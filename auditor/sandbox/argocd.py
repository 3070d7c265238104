"""Run a real Argo CD in one sandbox, syncing this repository into every sandbox.

Argo CD is the pinned release built from testenv/tools/argocd (one binary; the environment
variable ARGOCD_BINARY_NAME picks the daemon). It runs as a small installation does, with these
local substitutions:
- the daemons are local processes on loopback ports, not pods: Redis (the distribution's
  `redis-server`), the repo-server, the application controller and the ApplicationSet
  controller (no API server or UI: nothing here needs them), all stopped by `sandbox down`;
- they authenticate to the host sandbox with a client certificate in `system:masters`, and each
  sandbox is registered as a cluster Secret named after its repository cluster (what the
  ApplicationSets' `destination.name` says), with its CA and a client certificate;
- the repository is served from a local bare clone (`file://`, no git server) holding the
  current commit on `main`, plus the uncommitted changes of the working tree, if any, as one
  commit on top (so what is tested is what is on disk);
- the committed argocd/ objects are applied as they are, pointed at that clone by
  `auditor.repo.argocd.retarget`, the same as `kueue-gitops generate argocd --repo-url`.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import time
import typing as t
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

from auditor.errors import ClusterAccessError, SandboxError
from auditor.k8s.objects import Json
from auditor.repo import argocd as repo_argocd
from auditor.sandbox import pki
from auditor.sandbox.build import ARGOCD_MODULE, TOOLS, ensure_tool, module_dir

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
READY_TIMEOUT = 60.0
HACK_SCRIPTS = ("git-verify-wrapper.sh", "gpg-wrapper.sh")  # the repo-server runs them
REFRESH = "argocd.argoproj.io/refresh"  # removed by the controller once it has compared
NUDGE = 15.0  # seconds before an Application never compared is asked to refresh


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


# -- Redis -------------------------------------------------------------------------------------


def redis_server(log: t.Callable[[str], None]) -> str:
    """`redis-server`, installed from the distribution's packages when missing and possible."""
    found = shutil.which("redis-server")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt and os.geteuid() == 0:
        log("Argo CD needs Redis: installing the distribution's redis-server package")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        install = [apt, "install", "-y", "--no-install-recommends", "redis-server"]
        if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
            subprocess.run([apt, "update"], env=env, capture_output=True, check=False)
            subprocess.run(install, env=env, capture_output=True, check=False)
        found = shutil.which("redis-server")
        if found:
            return found
    raise SandboxError(
        "Argo CD needs Redis and `redis-server` is not on PATH: install the distribution's "
        "package (Debian/Ubuntu: `sudo apt-get install redis-server`; Fedora: "
        "`sudo dnf install redis`), then run this again"
    )


# -- the served repository ---------------------------------------------------------------------


def _git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode != 0:
        raise SandboxError(f"`git {' '.join(args)}` failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


def serve_repository(root: Path, bare: Path) -> str:
    """A bare clone of `root` at `bare` whose `main` is the current commit, with the working
    tree's uncommitted changes (untracked files included, ignored ones not) as one more commit;
    return the commit `main` names. Nothing is written into `root`'s own repository."""
    shutil.rmtree(bare, ignore_errors=True)
    head = _git("rev-parse", "HEAD", cwd=root)
    _git("clone", "--quiet", "--bare", "--no-hardlinks", str(root), str(bare))
    index = bare / "snapshot-index"
    env = {"GIT_DIR": str(bare), "GIT_WORK_TREE": str(root), "GIT_INDEX_FILE": str(index)}
    _git("read-tree", head, env=env)
    _git("add", "--all", env=env)
    tree = _git("write-tree", env=env)
    index.unlink(missing_ok=True)
    commit = head
    if tree != _git("rev-parse", f"{head}^{{tree}}", env=env):
        who = {
            "GIT_AUTHOR_NAME": "kueue-gitops sandbox",
            "GIT_AUTHOR_EMAIL": "sandbox@kueue-gitops.invalid",
            "GIT_COMMITTER_NAME": "kueue-gitops sandbox",
            "GIT_COMMITTER_EMAIL": "sandbox@kueue-gitops.invalid",
        }
        message = f"uncommitted changes of the working tree on top of {head[:12]}"
        commit = _git("commit-tree", tree, "-p", head, "-m", message, env={**env, **who})
    _git("update-ref", f"refs/heads/{BRANCH}", commit, env={"GIT_DIR": str(bare)})
    _git("symbolic-ref", "HEAD", f"refs/heads/{BRANCH}", env={"GIT_DIR": str(bare)})
    return commit


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
    redis = redis_server(say)
    folder = host.dir / "argocd"
    for sub in ("tls", "ssh", "gnupg", "bin"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    hack = module_dir(testenv, "tools/argocd", ARGOCD_MODULE) / "hack"
    for script in HACK_SCRIPTS:
        target = folder / "bin" / script
        shutil.copyfile(hack / script, target)
        target.chmod(target.stat().st_mode | stat.S_IXUSR)
    commit = serve_repository(repo.root, folder / "repo.git")
    say(f"argocd: serving {repo.root} at {commit[:12]} from {folder / 'repo.git'}")
    st = ArgoState(host.name, {c: b.name for c, b in clusters.items()}, str(folder / "repo.git"),
                   commit)  # fmt: skip
    st.ports = {name: _free_port() for name in (
        "redis", "repo-server", "repo-server-metrics", "controller-metrics",
        "appset-metrics", "appset-probe", "appset-webhook")}  # fmt: skip

    admin = host.connect()
    host.install_crd_sets(testenv, ["argocd"])
    for body in _bootstrap(clusters):
        admin.apply(body, manager=MANAGER)
    _spawn_all(host, binary, redis, folder, st)
    _wait_ready(host, st, started + timeout)
    for body in sorted(
        repo_argocd.retarget(repo_argocd.documents(repo), st.url),
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
        REDIS: lambda: _redis_ping(p["redis"]),
        REPO_SERVER: lambda: _open(p["repo-server"]),
        CONTROLLER: lambda: _metrics(p["controller-metrics"]),
        APPSET_CONTROLLER: lambda: _metrics(p["appset-metrics"]),
    }
    pending = dict(checks)
    while pending and time.monotonic() < deadline:
        for name in list(pending):
            if not host.process_alive(name):
                raise SandboxError(
                    f"{name} exited while starting in sandbox {host.name}; last lines of "
                    f"{host.logs / (name + '.log')}:\n{host._tail(name)}"
                )
            if pending[name]():
                del pending[name]
        time.sleep(0.2)
    if pending:
        raise SandboxError(f"Argo CD in sandbox {host.name}: {', '.join(pending)} not ready")


def _open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _metrics(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- observing ---------------------------------------------------------------------------------


def applications(host: Sandbox) -> dict[str, Json]:
    return {a["metadata"]["name"]: a for a in host.connect().list(API, "Application")}


def destination(app: Json) -> str:
    return str(((app.get("spec") or {}).get("destination") or {}).get("name") or "")


def sync_status(app: Json) -> tuple[str, str]:
    status = app.get("status") or {}
    return (
        str((status.get("sync") or {}).get("status") or "Unknown"),
        str((status.get("health") or {}).get("status") or "Unknown"),
    )


def refresh(host: Sandbox, name: str, kind: str = "normal") -> None:
    """Ask the controller to compare an Application again now (`hard`: regenerate manifests)."""
    host.connect().patch(
        API,
        "Application",
        name,
        {"metadata": {"annotations": {REFRESH: kind}}},
        namespace=NAMESPACE,
        manager=MANAGER,
    )


def compare_now(host: Sandbox, names: t.Collection[str], timeout: float = 120) -> dict[str, Json]:
    """Refresh `names` and return the Applications once each has compared after this call."""
    time.sleep(1.1)  # reconciledAt has whole seconds: start in a second of our own
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for name in names:
        refresh(host, name)

    def done(apps: dict[str, Json]) -> bool:
        return all(
            name in apps
            and REFRESH not in (apps[name]["metadata"].get("annotations") or {})
            and str((apps[name].get("status") or {}).get("reconciledAt", "")) >= since
            for name in names
        )

    return wait_for(host, done, timeout=timeout, what="a comparison after the change")


def hold_syncs(host: Sandbox, project: str) -> None:
    """A `deny` sync window on an AppProject, as in a change freeze: Argo CD still compares
    its Applications but runs no automated sync (selfHeal included) until `release_syncs`."""
    window = {"kind": "deny", "schedule": "* * * * *", "duration": "24h", "applications": ["*"]}
    _windows(host, project, [window])


def release_syncs(host: Sandbox, project: str) -> None:
    _windows(host, project, None)


def _windows(host: Sandbox, project: str, windows: list[Json] | None) -> None:
    patch = {"spec": {"syncWindows": windows}}
    host.connect().patch(API, "AppProject", project, patch, namespace=NAMESPACE, manager=MANAGER)


def terminate_operation(host: Sandbox, name: str) -> None:
    """Stop an Application's running sync (its automated retries too), as `argocd app
    terminate-op` does: the Application's status is no subresource, so a patch sets it."""
    host.connect().patch(
        API,
        "Application",
        name,
        {"status": {"operationState": {"phase": "Terminating"}}},
        namespace=NAMESPACE,
        manager=MANAGER,
    )


def refresh_generators(host: Sandbox) -> None:
    """Make the ApplicationSet controller read the repository again (a new folder, say)."""
    admin = host.connect()
    for appset in admin.list(API, "ApplicationSet"):
        admin.patch(
            API,
            "ApplicationSet",
            appset["metadata"]["name"],
            {"metadata": {"annotations": {"argocd.argoproj.io/application-set-refresh": "true"}}},
            namespace=NAMESPACE,
            manager=MANAGER,
        )


def wait_for(
    host: Sandbox,
    done: t.Callable[[dict[str, Json]], bool],
    *,
    timeout: float,
    what: str,
) -> dict[str, Json]:
    """Poll the Applications until `done` holds; SandboxError naming each one's state if not.

    An Application the controller first met before its AppProject reached the controller's
    cache stays Unknown, without a comparison, for good: every NUDGE seconds such ones are asked
    to refresh, as a user would press Refresh."""
    deadline = time.monotonic() + timeout
    nudged = time.monotonic()
    apps: dict[str, Json] = {}
    while time.monotonic() < deadline:
        try:
            apps = applications(host)
        except ClusterAccessError:
            apps = {}
        if done(apps):
            return apps
        if time.monotonic() - nudged > NUDGE:
            nudged = time.monotonic()
            for name, app in apps.items():
                if sync_status(app)[0] == "Unknown":
                    with contextlib.suppress(ClusterAccessError):
                        refresh(host, name)
        time.sleep(1)
    states = ", ".join(f"{n}: {'/'.join(sync_status(a))}" for n, a in sorted(apps.items()))
    raise SandboxError(f"Argo CD: {what} not reached in {timeout:.0f}s ({states or 'no apps'})")


def memory_mib(host: Sandbox) -> dict[str, float]:
    """Peak resident memory (VmHWM) of each Argo CD process and Redis, in MiB."""
    st = host.state()
    out: dict[str, float] = {}
    for name in DAEMONS:
        pid = (st.pids if st else {}).get(name)
        try:
            status = Path(f"/proc/{pid}/status").read_text() if pid else ""
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                out[name] = round(int(line.split()[1]) / 1024, 1)
    return out


def clone(served: ArgoState, work: Path) -> Path:
    """A working clone of the served repository at `work` (made once), up to date."""
    if not (work / ".git").is_dir():
        _git("clone", "--quiet", "--branch", BRANCH, served.repo, str(work))
    _git("pull", "--quiet", "--ff-only", cwd=work)
    return work


def push(served: ArgoState, work: Path, message: str, change: t.Callable[[Path], None]) -> str:
    """Commit `change` (made in a clone at `work`) to the served repository's main; return it.

    Tests and the demo use this for scratch commits: the repository itself is never touched."""
    clone(served, work)
    change(work)
    who = ["-c", "user.name=kueue-gitops sandbox", "-c", "user.email=sandbox@kueue-gitops.invalid"]
    _git("add", "--all", cwd=work)
    _git(*who, "commit", "--quiet", "-m", message, cwd=work)
    _git("push", "--quiet", "origin", BRANCH, cwd=work)
    return _git("rev-parse", "HEAD", cwd=work)
