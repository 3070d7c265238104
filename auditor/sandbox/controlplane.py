"""Start and stop one sandbox: etcd and kube-apiserver on random loopback ports.

Each sandbox lives in its own folder (state, certificates, logs, etcd data), so two can run side
by side. `up` starts detached processes and records their pids; `down` stops exactly those.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import time
import typing as t
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from auditor import cache
from auditor.errors import SandboxError
from auditor.k8s.objects import Json
from auditor.live.kube import KubeCluster
from auditor.sandbox import crds, kueue, kueue_legacy, nodes, pki, services
from auditor.sandbox.build import (
    ALWAYS_CRD_SETS,
    KUEUE_MODULE,
    KueueRelease,
    Toolchain,
    crd_set_files,
)
from auditor.sandbox.services import READY_TIMEOUT, free_port

ADMIN_USER = "kueue-gitops-admin"


def sandboxes_root() -> Path:
    env = os.environ.get("KUEUE_GITOPS_SANDBOXES")
    return Path(env) if env else cache.area("sandboxes")


@dataclass
class SandboxState:
    name: str
    api_port: int
    etcd_port: int
    etcd_peer_port: int
    pids: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    ready_seconds: float = 0.0
    versions: dict[str, str] = field(default_factory=dict)


class Sandbox:
    """A handle on one named sandbox, running or not."""

    def __init__(self, name: str = "default", root: Path | None = None) -> None:
        self.name = name
        self.dir = (root or sandboxes_root()) / name
        self.pki = self.dir / "pki"
        self.logs = self.dir / "logs"
        self.kubeconfig = self.dir / "kubeconfig"
        self.context = name  # named like a cluster, so a profile's context finds it

    # -- state --------------------------------------------------------------------------------

    @property
    def state_file(self) -> Path:
        return self.dir / "state.json"

    def state(self) -> SandboxState | None:
        if not self.state_file.exists():
            return None
        return SandboxState(**json.loads(self.state_file.read_text()))

    def running(self) -> bool:
        st = self.state()
        return bool(st and st.pids and all(services.alive(pid) for pid in st.pids.values()))

    @property
    def server(self) -> str:
        st = self.state()
        if st is None:
            raise SandboxError(f"sandbox {self.name} is not up")
        return f"https://127.0.0.1:{st.api_port}"

    # -- lifecycle ----------------------------------------------------------------------------

    @services.again_on_taken_port
    def up(
        self,
        toolchain: Toolchain,
        *,
        timeout: float = READY_TIMEOUT,
        log: t.Callable[[str], None] | None = None,
        crd_sets: t.Sequence[str] = (),
        with_kueue: bool = False,
        kueue_config: dict[str, t.Any] | None = None,
        node_pools: t.Sequence[Json] = (),
        kueue_release: KueueRelease | None = None,
        priority_and_fairness: bool = False,
    ) -> SandboxState:
        """Start etcd and kube-apiserver with `kueue_release`'s CRDs (default: the control
        plane's Kueue); with Kueue, run it too, and with `node_pools`, simulate those nodes
        (sandbox/nodes.py). `priority_and_fairness`: API Priority and Fairness on, as on a
        real cluster (off by default: it throttles nothing a sandbox's few clients send, and
        the fault tests that want its 429s configure it)."""
        say = log or (lambda _m: None)
        release = kueue_release or toolchain.kueue
        if self.running():
            raise SandboxError(f"sandbox {self.name} is already up; `sandbox down` it first")
        self.down()
        shutil.rmtree(self.dir, ignore_errors=True)  # every `up` is a fresh, empty cluster
        self.dir.mkdir(parents=True)
        self.logs.mkdir(exist_ok=True)
        started = time.monotonic()
        state = SandboxState(
            self.name,
            free_port(),
            free_port(),
            free_port(),
            started=time.time(),
            versions={**toolchain.versions, KUEUE_MODULE: release.version},
        )
        ca = pki.CertificateAuthority(self.pki)
        serving = ca.issue("apiserver", "kube-apiserver", server=True)
        admin = ca.issue("admin", ADMIN_USER, organizations=("system:masters",))
        sa = pki.service_account_keys(self.pki)

        state.pids["etcd"] = self._spawn(
            "etcd",
            [
                str(toolchain.binary("etcd")),
                "--name",
                "sandbox",
                "--data-dir",
                str(self.dir / "etcd"),
                "--listen-client-urls",
                f"http://127.0.0.1:{state.etcd_port}",
                "--advertise-client-urls",
                f"http://127.0.0.1:{state.etcd_port}",
                "--listen-peer-urls",
                f"http://127.0.0.1:{state.etcd_peer_port}",
                "--initial-advertise-peer-urls",
                f"http://127.0.0.1:{state.etcd_peer_port}",
                "--initial-cluster",
                f"sandbox=http://127.0.0.1:{state.etcd_peer_port}",
                "--unsafe-no-fsync",  # a throwaway store: durability buys nothing here
            ],
        )
        self._save(state)
        state.pids["kube-apiserver"] = self._spawn(
            "kube-apiserver",
            [
                str(toolchain.binary("kube-apiserver")),
                f"--etcd-servers=http://127.0.0.1:{state.etcd_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={state.api_port}",
                f"--cert-dir={self.dir / 'apiserver-certs'}",
                f"--tls-cert-file={serving.cert}",
                f"--tls-private-key-file={serving.key}",
                f"--client-ca-file={ca.cert_path}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={sa.cert}",
                f"--service-account-signing-key-file={sa.key}",
                "--service-account-issuer=https://kubernetes.default.svc",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--allow-privileged=true",
                f"--enable-priority-and-fairness={str(priority_and_fairness).lower()}",
                "--endpoint-reconciler-type=none",
            ],
        )
        self._save(state)
        self.write_kubeconfig(self.kubeconfig, admin, user=ADMIN_USER)
        try:
            self._wait_ready(ca.cert_path, admin, timeout)
            say(f"sandbox {self.name}: installing {len(release.crds)} Kueue {release.version} CRDs")
            crds.install(self.connect(), crds.load_crds(release.crds))
            self.install_crd_sets(toolchain.testenv, [*ALWAYS_CRD_SETS, *crd_sets])
            if with_kueue and kueue_legacy.is_legacy(release):
                kueue_legacy.start(self, toolchain, release, configuration=kueue_config, log=say)
            elif with_kueue:
                kueue.start(self, toolchain, release, configuration=kueue_config, log=say)
            if node_pools:
                nodes.start(self, toolchain, node_pools, log=say)
            state = self.state() or state  # the processes spawned since were recorded
        except BaseException:
            self.down()  # never leave half a sandbox running
            raise
        state.ready_seconds = round(time.monotonic() - started, 2)
        self._save(state)
        say(
            f"sandbox {self.name}: kube-apiserver ready at {self.server} "
            f"after {state.ready_seconds}s"
        )
        return state

    def down(self) -> list[str]:
        """Stop every process this sandbox started; return their names."""
        st = self.state()
        stopped: list[str] = []
        if st:
            for name, pid in reversed(list(st.pids.items())):
                if services.stop(pid):
                    stopped.append(name)
            self.state_file.unlink(missing_ok=True)
        return stopped

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> int:
        """Start one more process of this sandbox (with `env` added to ours); `down` stops it
        before the API server. One process a name: one still running under `name` is stopped
        first (its pid would be forgotten, and `down` would leave it running)."""
        st = self.state()
        assert st is not None
        if name in st.pids:
            services.stop(st.pids[name])
        st.pids[name] = self._spawn(name, argv, env)
        self._save(st)
        return st.pids[name]

    def process_alive(self, name: str) -> bool:
        st = self.state()
        return bool(st and name in st.pids and services.alive(st.pids[name]))

    def log_of(self, name: str) -> Path:
        """The log file of this sandbox's process `name`."""
        return self.logs / f"{name}.log"

    def wait_until(
        self,
        what: str,
        deadline: float,
        ready: t.Callable[[], bool],
        processes: t.Sequence[str],
    ) -> None:
        """Poll `ready` until `deadline` (monotonic), failing at once with its log when one of
        this sandbox's `processes` exits (services.wait_until)."""
        st = self.state()
        pids = st.pids if st else {}
        watched = [services.Watched(n, pids[n], self.log_of(n)) for n in processes if n in pids]
        services.wait_until(what, deadline, ready, watched, where=f"sandbox {self.name}")

    def install_crd_sets(self, testenv: Path, names: t.Iterable[str]) -> None:
        """Add CRD sets from `build.CRD_SETS` (e.g. Argo CD's) to this running sandbox."""
        for name in names:
            crds.install(self.connect(), crds.load_crds(crd_set_files(testenv, name)))

    def connect(self, kubeconfig: Path | None = None) -> KubeCluster:
        """A client for this sandbox, as its admin or as the identity in `kubeconfig`."""
        return KubeCluster.connect(self.name, kubeconfig=str(kubeconfig or self.kubeconfig))

    # -- credentials --------------------------------------------------------------------------

    def credentials(self, user: str, groups: tuple[str, ...] = ()) -> Path:
        """A kubeconfig for `user` in `groups`, authenticated by a client certificate."""
        ca = pki.CertificateAuthority(self.pki)
        stem = "user-" + "-".join([user, *groups]).replace(":", "_").replace("/", "_")
        pair = ca.issue(stem, user, organizations=groups)
        path = self.dir / f"{stem}.kubeconfig"
        self.write_kubeconfig(path, pair, user=user)
        return path

    def write_kubeconfig(self, path: Path, pair: pki.KeyPair, *, user: str) -> None:
        st = self.state()
        assert st is not None
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": self.context,
                    "cluster": {
                        "server": f"https://127.0.0.1:{st.api_port}",
                        "certificate-authority": str(self.pki / "ca.crt"),
                    },
                }
            ],
            "users": [
                {
                    "name": f"{self.name}:{user}",
                    "user": {
                        "client-certificate": str(pair.cert),
                        "client-key": str(pair.key),
                    },
                }
            ],
            "contexts": [
                {
                    "name": self.context,
                    "context": {"cluster": self.context, "user": f"{self.name}:{user}"},
                }
            ],
            "current-context": self.context,
        }
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        path.chmod(0o600)

    # -- internals ----------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> int:
        return services.spawn(argv, self.log_of(name), env)

    def _save(self, state: SandboxState) -> None:
        self.state_file.write_text(json.dumps(asdict(state), indent=2) + "\n")

    def _wait_ready(self, ca: Path, admin: pki.KeyPair, timeout: float) -> None:
        """kube-apiserver answers /readyz (as the admin); etcd and it still running."""
        ctx = ssl.create_default_context(cafile=str(ca))
        ctx.load_cert_chain(str(admin.cert), str(admin.key))
        self.wait_until(
            "kube-apiserver /readyz",
            time.monotonic() + timeout,
            lambda: services.http_ok(f"{self.server}/readyz", ctx),
            ("kube-apiserver", "etcd"),
        )


def merged_kubeconfig(boxes: t.Sequence[Sandbox], path: Path) -> Path:
    """One kubeconfig with every sandbox's cluster, user and context (each context named like
    its sandbox), as a person auditing a fleet from one file has it."""
    docs = [yaml.safe_load(box.kubeconfig.read_text()) for box in boxes]
    merged = {
        "apiVersion": "v1",
        "kind": "Config",
        **{
            part: [x for doc in docs for x in doc[part]]
            for part in ("clusters", "users", "contexts")
        },
        "current-context": boxes[0].context,
    }
    path.write_text(yaml.safe_dump(merged, sort_keys=False))
    path.chmod(0o600)
    return path
