"""A real kube-apiserver behind Shopify's toxiproxy (built from its pinned module,
testenv/tools/toxiproxy): answers that trickle, stall, crawl, lag, close slowly or are reset.

Each fault is bounded by a short --timeout and held to what docs/usage.md ("Deadlines and
crashes") says: exit 3 naming the cluster, the deadline held to within a few seconds, nothing
claimed of what was not read (no finding invented); Ctrl-C and SIGTERM end a read in progress
with 130 and 143. A plain HTTP server stands in only for what no real part produces: an
endpoint that answers 404 to everything.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import typing as t
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from auditor.errors import ClusterAccessError
from auditor.live.kube import KubeCluster, Limits
from auditor.sandbox import Sandbox, Toolchain
from auditor.sandbox.build import TOOLS, ensure_tool
from auditor.sandbox.services import free_port
from tests.conftest import ROOT, own_context, run_line, start_sandbox
from tests.integration.drift_live import CLUSTER, servable_repo, sync
from tests.integration.waiting import eventually

Json = dict[str, t.Any]
TIMEOUT = 8.0  # each fault's --timeout
# What a run needs besides its cluster's reads: start-up, loading the repository, the report.
MARGIN = 8.0


class Toxiproxy:
    """The toxiproxy server, driven through its HTTP API."""

    def __init__(self, binary: Path, logs: Path) -> None:
        self.port = free_port()
        self.log = open(logs / "toxiproxy.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [str(binary), "-host", "127.0.0.1", "-port", str(self.port)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        eventually(self._answers, what="toxiproxy answering", seconds=20)

    def _answers(self) -> bool:
        with contextlib.suppress(OSError):
            return self.call("GET", "/version") is not None
        return False

    def call(self, method: str, path: str, body: Json | None = None) -> t.Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=data, method=method
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            text = answer.read()
        return json.loads(text) if text.strip().startswith((b"{", b"[")) else text

    def proxy(self, name: str, upstream: str, port: int) -> None:
        """A proxy listening on loopback `port`, to `upstream`: a new one, its connections
        and toxics gone (toxiproxy 2.5 can panic adding a toxic to a link that outlived a
        toxic's removal, so no link outlives a test)."""
        with contextlib.suppress(urllib.error.HTTPError):  # none yet
            self.call("DELETE", f"/proxies/{name}")
        self.call("POST", "/proxies", {"name": name, "listen": f"127.0.0.1:{port}",
                                       "upstream": upstream})  # fmt: skip

    def toxic(
        self,
        proxy: str,
        kind: str,
        attributes: dict[str, int] | None = None,
        *,
        stream: str = "downstream",
        **more: int,
    ) -> None:
        self.call(
            "POST",
            f"/proxies/{proxy}/toxics",
            {"type": kind, "stream": stream, "attributes": {**(attributes or {}), **more}},
        )

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()


@dataclass
class Faulty:
    box: Sandbox
    repo: Path
    toxiproxy: Toxiproxy
    kubeconfig: Path  # the sandbox's, through the proxy
    port: int  # the proxy's
    upstream: str  # the sandbox's kube-apiserver
    offline: list[tuple[str, str, int]]  # validate's findings without --server-side
    handshake: int  # bytes a client receives for a TLS handshake and a small answer
    proxy: str = "kube-apiserver"


def _seen(finding: Json) -> tuple[str, str, int]:
    return (finding["rule"], finding.get("file") or "", finding.get("line") or 0)


def through(kubeconfig: Path, server: str, dest: Path) -> Path:
    """`kubeconfig` with its cluster's server replaced by `server`."""
    doc = yaml.safe_load(kubeconfig.read_text())
    for cluster in doc["clusters"]:
        cluster["cluster"]["server"] = server
    dest.write_text(yaml.safe_dump(doc))
    return dest


@pytest.fixture(scope="module")
def toxiproxy_binary() -> Path:
    return ensure_tool(ROOT / "testenv", "toxiproxy", TOOLS["toxiproxy"], log=print)


@pytest.fixture(scope="module")
def faulty_setup(
    toolchain: Toolchain,
    sandboxes_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
    toxiproxy_binary: Path,
) -> t.Iterator[Faulty]:
    box = start_sandbox(toolchain, sandboxes_dir, "faults")
    proxy = None
    try:
        repo = servable_repo(tmp_path_factory.mktemp("faults-repo"), box.connect())
        sync(box, repo)
        proxy = Toxiproxy(toxiproxy_binary, tmp_path_factory.mktemp("toxiproxy"))
        state = box.state()
        assert state is not None
        port, upstream = free_port(), f"127.0.0.1:{state.api_port}"
        proxy.proxy("kube-apiserver", upstream, port)
        kubeconfig = through(
            box.kubeconfig, f"https://127.0.0.1:{port}", repo.parent / "through-toxiproxy"
        )
        calibration = KubeCluster.connect(CLUSTER, kubeconfig=str(kubeconfig))
        calibration.request("GET", "/version")
        handshake = received(os.getpid(), port)  # its connection is kept alive
        calibration.api.close()  # type: ignore[no-untyped-call]
        offline = run_line(["kueue-gitops", "--repo", str(repo), "validate", "--cluster",
                            CLUSTER, "-o", "json"])  # fmt: skip
        found = [_seen(f) for f in json.loads(offline.stdout)["findings"]]
        yield Faulty(box, repo, proxy, kubeconfig, port, upstream, found, handshake)
    finally:
        if proxy is not None:
            proxy.stop()
        box.down()


@pytest.fixture
def faulty(faulty_setup: Faulty) -> Faulty:
    """The sandbox behind a new proxy: no toxic or connection left from the test before."""
    faulty_setup.toxiproxy.proxy(faulty_setup.proxy, faulty_setup.upstream, faulty_setup.port)
    return faulty_setup


COMMANDS = {
    "drift": ["drift", "--cluster", CLUSTER],
    "status": ["status", "--cluster", CLUSTER],
    "validate-server-side": ["validate", "--server-side", "--cluster", CLUSTER, "--jobs", "1"],
}


def timed(repo: Path, kubeconfig: Path, command: str, timeout: float = TIMEOUT) -> tuple[
    int, Json, str, float
]:  # fmt: skip
    """One command with -o json and --timeout: its exit code, report, stderr and seconds."""
    started = time.monotonic()
    result = run_line(
        [
            *("kueue-gitops", "--repo", str(repo), *COMMANDS[command]),
            *own_context(kubeconfig),
            *("-o", "json", "--timeout", f"{timeout:g}"),
        ]
    )
    took = time.monotonic() - started
    print(f"{command}: exit {result.exit_code} after {took:.1f}s (--timeout {timeout:g})")
    report = json.loads(result.stdout) if result.stdout.startswith("{") else {}
    return result.exit_code, report, result.stderr, took


def incomplete_naming_the_cluster(
    code: int, report: Json, stderr: str, offline: list[tuple[str, str, int]] | None = None
) -> str:
    """Exit 3, the cluster incomplete, nothing claimed of it (but validate's `offline`
    findings): the errors' text (status, which has nothing to show of a cluster it could not
    read, says so in one line)."""
    assert code == 3, (report, stderr)
    if not report:
        [line] = stderr.splitlines()
        assert line.startswith(f"Error: cluster {CLUSTER}")
        return line
    assert report["status"] == "incomplete"
    claimed = [_seen(f) for f in report["findings"] if f.get("cluster") == CLUSTER]
    assert [f for f in claimed if f not in (offline or [])] == []
    [cluster] = report["clusters"]
    assert cluster["name"] == CLUSTER and cluster["status"] == "incomplete"
    text = " ".join(cluster["errors"])
    assert f"cluster {CLUSTER}" in text
    return text


# -- answers slower than the deadline: exit 3 at the deadline ----------------------------------


def started(faulty: Faulty, command: str, *extra: str) -> subprocess.Popen[str]:
    """`command` as a user runs it, against the proxy, once its TLS handshake is done and its
    first answer under way (the proxy has passed it more bytes than a handshake and a small
    answer take): the proxy adds a second to each answer until then, so the run is still
    reading when it has."""
    faulty.toxiproxy.toxic(faulty.proxy, "latency", latency=1000)
    argv = [sys.executable, "-m", "auditor", "--repo", str(faulty.repo), *COMMANDS[command]]
    argv += [*own_context(faulty.kubeconfig), "-o", "json", *extra]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        eventually(
            lambda: received(proc.pid, faulty.port) > faulty.handshake,
            what=f"{command}'s first answers through the proxy",
            seconds=30,
        )
    except BaseException:
        proc.kill()
        raise
    return proc


def received(pid: int, port: int) -> int:
    """The bytes process `pid` has received on its connections to loopback `port` (ss)."""
    out = subprocess.run(
        ["ss", "-tinpH", "dst", f"127.0.0.1:{port}"], capture_output=True, text=True, check=True
    ).stdout
    total, mine = 0, False
    for line in out.splitlines():
        if not line.startswith(("\t", " ")):  # a connection; its details follow indented
            mine = f"pid={pid}," in line
        elif mine:
            found = re.search(r"bytes_received:(\d+)", line)
            total += int(found[1]) if found else 0
    return total


def trickle(faulty: Faulty) -> None:
    """From now on every byte one second apart (headers and body): no read ever times out,
    and no answer ever ends."""
    faulty.toxiproxy.toxic(faulty.proxy, "slicer", average_size=1, size_variation=0,
                           delay=1_000_000)  # fmt: skip


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_answer_arriving_a_byte_a_second_ends_at_the_deadline(
    faulty: Faulty, command: str
) -> None:
    """Before, drift, status and validate --server-side with --timeout 10 ran on for minutes."""
    began = time.monotonic()
    proc = started(faulty, command, "--timeout", f"{TIMEOUT:g}")
    trickle(faulty)
    try:
        out, err = proc.communicate(timeout=TIMEOUT + MARGIN + 30)
    finally:
        proc.kill()
    took = time.monotonic() - began
    print(f"{command}: exit {proc.returncode} after {took:.1f}s (--timeout {TIMEOUT:g})")
    report = json.loads(out) if out.startswith("{") else {}
    text = incomplete_naming_the_cluster(proc.returncode, report, err, faulty.offline)
    assert f"the {TIMEOUT:g}s deadline for the cluster passed" in text
    assert took < TIMEOUT + MARGIN


def test_a_connection_crawling_at_a_kilobyte_a_second_ends_at_the_deadline(
    faulty: Faulty,
) -> None:
    faulty.toxiproxy.toxic(faulty.proxy, "bandwidth", rate=1)  # KB/s
    code, report, stderr, took = timed(faulty.repo, faulty.kubeconfig, "drift")
    text = incomplete_naming_the_cluster(code, report, stderr)
    assert "deadline" in text
    assert took < TIMEOUT + MARGIN


@pytest.mark.parametrize(
    ("toxic", "attributes"),
    [("timeout", {"timeout": 0}), ("latency", {"latency": 60_000})],
    ids=["stalled", "latency-60s"],
)
def test_a_server_silent_from_the_start_is_unreachable_within_the_connect_timeout(
    faulty: Faulty, toxic: str, attributes: dict[str, int]
) -> None:
    """No byte comes back (toxiproxy's timeout toxic with no timeout holds the connection
    open; a minute's latency): the TLS handshake gets the 5 s to connect, then the cluster is
    unreachable, well inside the deadline."""
    faulty.toxiproxy.toxic(faulty.proxy, toxic, attributes)
    code, report, stderr, took = timed(faulty.repo, faulty.kubeconfig, "drift", timeout=60)
    text = incomplete_naming_the_cluster(code, report, stderr)
    assert "is unreachable: no answer in time" in text and "timeout=5.0" in text
    assert took < 5 + MARGIN


def test_a_server_that_stalls_mid_audit_ends_at_the_deadline(faulty: Faulty) -> None:
    """The data stops once the run is reading, the connection stays open: each read waits
    its 30 s read timeout, but the cluster's deadline ends it first."""
    began = time.monotonic()
    proc = started(faulty, "drift", "--timeout", f"{TIMEOUT:g}")
    faulty.toxiproxy.toxic(faulty.proxy, "timeout", timeout=0)
    try:
        out, err = proc.communicate(timeout=TIMEOUT + MARGIN + 30)
    finally:
        proc.kill()
    took = time.monotonic() - began
    text = incomplete_naming_the_cluster(proc.returncode, json.loads(out), err)
    assert f"the {TIMEOUT:g}s deadline for the cluster passed" in text
    assert took < TIMEOUT + MARGIN


# -- faults the run survives, or reports at once -----------------------------------------------


@pytest.mark.parametrize(
    ("toxic", "attributes"),
    [("latency", {"latency": 50, "jitter": 50}), ("slow_close", {"delay": 5_000})],
)
def test_a_slow_but_working_connection_audits_clean(
    faulty: Faulty, toxic: str, attributes: dict[str, int]
) -> None:
    """Latency well inside the deadline, a slow close: the audit finishes, exit 0."""
    faulty.toxiproxy.toxic(faulty.proxy, toxic, attributes)
    code, report, stderr, _ = timed(faulty.repo, faulty.kubeconfig, "drift", timeout=60)
    assert (code, report["status"], report["findings"]) == (0, "clean", []), stderr


def test_connections_reset_make_the_cluster_unreachable_at_once(faulty: Faulty) -> None:
    faulty.toxiproxy.toxic(faulty.proxy, "reset_peer", stream="upstream", timeout=0)
    code, report, stderr, took = timed(faulty.repo, faulty.kubeconfig, "drift", timeout=60)
    text = incomplete_naming_the_cluster(code, report, stderr)
    assert "unreachable" in text
    assert took < 20  # three tries with backoff, not the 60s deadline


# -- signals: 130 and 143, at once, with a report that says it is incomplete -------------------


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_a_read_in_progress(faulty: Faulty, sig: signal.Signals, code: int) -> None:
    """Before: Ctrl-C exited 1 ("findings") with `Aborted!`, only once the answer in flight
    had ended, and left the report empty."""
    proc = started(faulty, "drift", "--timeout", "120")
    trickle(faulty)
    try:
        time.sleep(1)  # let the answer in flight trickle: the signal is not what ends it
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == code, err
    assert took < 3, took
    assert "Traceback" not in err and "Aborted!" not in err
    assert f"interrupted by signal {int(sig)} ({sig.name})" in err
    report = json.loads(out)  # whole: a report, marked incomplete
    assert report["status"] == "incomplete" and report["findings"] == []
    assert "interrupted" in report["clusters"][0]["errors"][0]


# -- not a Kubernetes API server: named as such, nothing invented -------------------------------


class _Answers(http.server.BaseHTTPRequestHandler):
    """Answers every request alike: 404 as a wrong URL or a proxy's error page does, or an
    empty JSON object as a misconfigured gateway might."""

    status, body, content_type = 404, b"404 page not found\n", "text/plain"

    def _answer(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

    def log_message(self, *args: t.Any) -> None:
        pass


class _EmptyJson(_Answers):
    status, body, content_type = 200, b"{}", "application/json"


@contextlib.contextmanager
def serving(handler: type[_Answers]) -> t.Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_endpoint_answering_404_to_everything_is_not_a_kubernetes_api_server(
    faulty: Faulty, tmp_path: Path, command: str
) -> None:
    """Before: drift exit 1 with every repository object "missing", validate --server-side
    exit 1 with every object "rejected" (a 404 during discovery read as "not served")."""
    with serving(_Answers) as url:
        kubeconfig = through(faulty.box.kubeconfig, url, tmp_path / "kc")
        code, report, stderr, took = timed(faulty.repo, kubeconfig, command, timeout=30)
    text = incomplete_naming_the_cluster(code, report, stderr, faulty.offline)
    assert f"{url} is not a Kubernetes API server" in text
    assert took < 15


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_discovery_that_cannot_be_read_is_incomplete_naming_what_answered(
    faulty: Faulty, tmp_path: Path, command: str
) -> None:
    with serving(_EmptyJson) as url:
        kubeconfig = through(faulty.box.kubeconfig, url, tmp_path / "kc")
        code, report, stderr, took = timed(faulty.repo, kubeconfig, command, timeout=30)
    text = incomplete_naming_the_cluster(code, report, stderr, faulty.offline)
    assert f"discovery could not be read: {url}/api" in text
    assert "answered {}, not an " in text
    assert took < 15


# -- throttling: API Priority and Fairness's real 429s -----------------------------------------

AUDITOR = "kueue-gitops-auditor"  # bound to the repo's read-only auditor role by the repo
FLOWCONTROL = "flowcontrol.apiserver.k8s.io/v1"


@pytest.fixture(scope="module")
def throttling(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path]]:
    """A sandbox with API Priority and Fairness on, where the auditor's requests go to a
    priority level of no share (the least concurrency there is) that rejects (429) what it
    cannot take at once."""
    box = Sandbox("throttled", root=sandboxes_dir)
    try:
        box.up(toolchain, priority_and_fairness=True)
    except Exception as exc:
        box.down()
        pytest.fail(f"the sandbox with API Priority and Fairness could not start: {exc}")
    try:
        repo = servable_repo(tmp_path_factory.mktemp("throttled-repo"), box.connect())
        sync(box, repo)
        admin = box.connect()
        name = "kueue-gitops-test-throttled"
        admin.create({
            "apiVersion": FLOWCONTROL, "kind": "PriorityLevelConfiguration",
            "metadata": {"name": name},
            "spec": {"type": "Limited", "limited": {
                "nominalConcurrencyShares": 0, "lendablePercent": 0, "borrowingLimitPercent": 0,
                "limitResponse": {"type": "Reject"}}},
        })  # fmt: skip
        everything = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                      "clusterScope": True, "namespaces": ["*"]}  # fmt: skip
        admin.create({
            "apiVersion": FLOWCONTROL, "kind": "FlowSchema", "metadata": {"name": name},
            "spec": {
                "priorityLevelConfiguration": {"name": name}, "matchingPrecedence": 100,
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": AUDITOR}}],
                           "resourceRules": [everything],
                           "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}],
            },
        })  # fmt: skip
        yield box, repo
    finally:
        box.down()


@contextlib.contextmanager
def crowded(box: Sandbox, seconds: float) -> t.Iterator[None]:
    """Clients of the auditor's priority level taking its seats for `seconds` (LISTs of the
    CRDs, megabytes each), so that what the audit sends meanwhile is rejected with 429 and a
    Retry-After."""
    kubeconfig = box.credentials(AUDITOR)
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    until = time.monotonic() + seconds
    rejected = [0]

    def crowd() -> None:
        cluster = KubeCluster.connect(AUDITOR, kubeconfig=str(kubeconfig),
                                      limits=Limits(attempts=1, throttled=0))  # fmt: skip
        while time.monotonic() < until:
            try:
                cluster.request("GET", crds, decode=False)
            except ClusterAccessError:
                rejected[0] += 1

    threads = [threading.Thread(target=crowd, daemon=True) for _ in range(6)]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        for thread in threads:
            thread.join(timeout=seconds + 60)
    assert rejected[0], "the crowd was never throttled: the priority level is not in effect"


def audited(box: Sandbox, repo: Path, timeout: float) -> tuple[int, Json, str, float]:
    kubeconfig = box.dir / f"user-{AUDITOR}.kubeconfig"  # crowded() wrote it
    argv = [sys.executable, "-m", "auditor", "--repo", str(repo), "drift", "--cluster", CLUSTER]
    argv += [*own_context(kubeconfig), "-o", "json", "--timeout", f"{timeout:g}"]
    began = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 60)
    took = time.monotonic() - began
    print(f"drift: exit {done.returncode} after {took:.1f}s (--timeout {timeout:g})")
    return done.returncode, json.loads(done.stdout), done.stderr, took


def test_throttling_is_waited_out_and_reported(throttling: tuple[Sandbox, Path]) -> None:
    """A few seconds of 429s with the deadline far off: the audit waits as the server asks
    (Retry-After) and finishes clean, saying how long the cluster throttled it. Before, 1.5 s
    of retries ended in exit 3."""
    box, repo = throttling
    # the crowd starts before the audit's process does: 12 s leave several seconds of 429s
    # after a start that takes seconds on a busy machine (6 s sometimes left none)
    with crowded(box, seconds=12):
        code, report, stderr, _ = audited(box, repo, timeout=60)
    assert (code, report["status"], report["findings"]) == (0, "clean", []), stderr
    [cluster] = report["clusters"]
    assert cluster["throttledSeconds"] >= 1, cluster


def test_throttling_past_the_deadline_ends_at_it(throttling: tuple[Sandbox, Path]) -> None:
    box, repo = throttling
    with crowded(box, seconds=TIMEOUT + MARGIN + 5):
        code, report, stderr, took = audited(box, repo, timeout=TIMEOUT)
    text = incomplete_naming_the_cluster(code, report, stderr)
    assert "429" in text and "still throttled after waiting" in text
    assert took < TIMEOUT + MARGIN
