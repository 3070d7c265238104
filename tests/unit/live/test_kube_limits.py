"""The client's bounds, against real sockets on loopback (never an HTTP fake): how many times a
request is sent, how long a silent server is waited for, and what a broken kubeconfig does.

A server here never speaks HTTP: it hangs up at once, or never answers. That is all a test of
retries and deadlines needs to see from the other side.
"""

from __future__ import annotations

import base64
import socket
import sys
import threading
import time
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.errors import ClusterAccessError, ConfigError
from auditor.live.apierrors import DeadlineExceeded
from auditor.live.credentials import ContextMissing
from auditor.live.kube import KubeCluster, Limits


class Listener:
    """A TCP server on loopback that counts connections and hangs up, or holds them open."""

    def __init__(self, *, answer: bool) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.held: list[socket.socket] = []
        self.answer = answer  # False: keep the connection open and say nothing
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            if self.answer:
                conn.close()  # hang up before any answer: the client sees the connection drop
            else:
                self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def hangs_up() -> t.Iterator[Listener]:
    server = Listener(answer=True)
    yield server
    server.close()


@pytest.fixture
def silent() -> t.Iterator[Listener]:
    server = Listener(answer=False)
    yield server
    server.close()


def kubeconfig(
    path: Path,
    server: str,
    user: dict[str, t.Any] | None = None,
    cluster: dict[str, str] | None = None,
) -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user or {"token": "t"}}],
        "contexts": [{"name": "gpu-prod", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "gpu-prod",
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def connect(path: str, limits: Limits | None = None, **kw: t.Any) -> KubeCluster:
    return KubeCluster.connect("gpu-prod", kubeconfig=path, limits=limits, **kw)


def test_a_read_is_sent_three_times_with_backoff_and_a_write_once(
    hangs_up: Listener, tmp_path: Path
) -> None:
    pauses: list[float] = []
    cluster = connect(kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{hangs_up.port}"))
    cluster.sleep = pauses.append
    with pytest.raises(ClusterAccessError, match="unreachable"):
        cluster.request("GET", "/api/v1/namespaces", what="LIST Namespace")
    # urllib3's own Retry(3) would have made it 4 connections per try, 12 in all
    assert hangs_up.connections == 3
    [first, second] = pauses  # 0.5 s then 1 s, each up to a fifth longer (jitter)
    assert 0.5 <= first <= 0.6 and 1.0 <= second <= 1.2
    with pytest.raises(ClusterAccessError):
        cluster.request("PATCH", "/api/v1/namespaces/a", body={}, what="patch Namespace a")
    assert hangs_up.connections == 4


def test_a_silent_server_fails_the_request_at_the_clusters_deadline(
    silent: Listener, tmp_path: Path
) -> None:
    limits = Limits(read=30, deadline=1.5)
    cluster = connect(kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{silent.port}"), limits)
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match=r"LIST ClusterQueue not done: the 1.5s deadline"):
        cluster.request(
            "GET", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", what="LIST ClusterQueue"
        )
    assert time.monotonic() - started < 1.5 + 0.5
    with pytest.raises(DeadlineExceeded, match="LIST LocalQueue"):  # later ones: at once
        cluster.request("GET", "/apis/kueue.x-k8s.io/v1beta2/localqueues", what="LIST LocalQueue")
    assert time.monotonic() - started < 1.5 + 0.5
    assert silent.connections == 1  # a read that timed out is not sent again


def test_without_a_deadline_each_answer_is_waited_for_the_read_timeout(
    silent: Listener, tmp_path: Path
) -> None:
    cluster = connect(
        kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{silent.port}"), Limits(read=1)
    )
    started = time.monotonic()
    with pytest.raises(ClusterAccessError, match="Read timed out"):
        cluster.request("GET", "/api/v1/namespaces", what="LIST Namespace")
    assert 1 <= time.monotonic() - started < 2


# -- the kubeconfig: its faults are exit 2, before any request ---------------------------------


def test_a_context_the_kubeconfig_lacks_is_named(tmp_path: Path) -> None:
    path = kubeconfig(tmp_path / "kc", "https://127.0.0.1:1")
    with pytest.raises(ContextMissing, match="cluster gpu-staging: no context gpu-staging of") as e:
        KubeCluster.connect("gpu-staging", kubeconfig=path, context="gpu-staging")
    assert e.value.exit_code == 2


def test_client_key_data_that_is_not_base64_is_a_configuration_error(tmp_path: Path) -> None:
    user = {"client-certificate-data": "bm90IGEgY2VydA==", "client-key-data": "%%% not base64"}
    path = kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user)
    with pytest.raises(ConfigError, match="cluster gpu-prod: cannot use context") as e:
        connect(path)
    assert e.value.exit_code == 2


def test_a_certificate_authority_that_is_not_pem_is_a_configuration_error(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text("this is not a certificate\n")
    path = kubeconfig(
        tmp_path / "kc", "https://127.0.0.1:1", cluster={"certificate-authority": str(ca)}
    )
    with pytest.raises(ConfigError, match="is not a PEM certificate") as e:
        connect(path)
    assert e.value.exit_code == 2
    data = base64.b64encode(b"neither is this").decode()
    path = kubeconfig(
        tmp_path / "kc2", "https://127.0.0.1:1", cluster={"certificate-authority-data": data}
    )
    with pytest.raises(ConfigError, match="is not a PEM certificate"):
        connect(path)


def test_a_failing_exec_plugin_is_named_and_its_output_never_shown(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import sys\nsys.stderr.write('refreshing... token=SECRET-TOKEN-123\\n')\nsys.exit(7)\n"
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    path = kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", user)
    with pytest.raises(ConfigError, match=r"exec credential plugin of .* failed \(exit 7\)") as e:
        connect(path)
    assert e.value.exit_code == 2
    out, err = capfd.readouterr()
    assert "SECRET-TOKEN-123" not in out + err + str(e.value)
