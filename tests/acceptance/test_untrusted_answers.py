"""drift against API servers that answer wrongly, and credentials that fail, through the command
as a user runs it (a process of its own: its memory is measured, its fleet forks as it does).

A fake API server on loopback (tests/fake_apiserver.py) answers what no real one does; a
cluster read from it is never reported clean or deleted when its answer was not one. In a run
over several clusters, one cluster's failed credential plugin is that cluster's alone.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
import typing as t
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import peak_memory
from tests.fake_apiserver import Answer, FakeApiServer, empty_list, kubeconfig

CQ_API = "kueue.x-k8s.io/v1beta2"  # what gpu-prod's profile reads
RB_API = "rbac.authorization.k8s.io/v1"
TIMEOUT = 5  # each run's --timeout
MIB = 2**20
# What drift over the estate may hold at most with a bomb at its door (docs/contracts.md): the
# process as it loads the estate (~60 MiB), and one answer at its limit (64 MiB) twice over.
MEMORY_CEILING = 256 * MIB


@dataclass
class Run:
    code: int
    report: dict[str, t.Any]
    stderr: str
    seconds: float
    max_rss: int  # bytes, the process's peak

    def cluster(self, name: str) -> dict[str, t.Any]:
        return next(c for c in self.report["clusters"] if c["name"] == name)

    def findings(self, cluster: str) -> list[dict[str, t.Any]]:
        return [f for f in self.report["findings"] if f.get("cluster") == cluster]


def drift(repo: Path, config: Path, *clusters: str) -> Run:
    """`kueue-gitops drift -o json` over `clusters`, in a process of its own, measured."""
    argv = [sys.executable, "-m", "auditor", "--repo", str(repo), "drift", "--no-cache",
            "--kubeconfig", str(config), "--timeout", str(TIMEOUT), "-o", "json"]  # fmt: skip
    for name in clusters:
        argv += ["--cluster", name]
    out, err = config.with_suffix(".out"), config.with_suffix(".err")
    started = time.monotonic()
    with out.open("w") as stdout, err.open("w") as stderr:
        ran = peak_memory.run(argv, stdout=stdout, stderr=stderr, seconds=120)
    seconds = time.monotonic() - started
    text = out.read_text()
    report = json.loads(text) if text.startswith("{") else {}
    return Run(ran.code, report, err.read_text(), seconds, ran.peak)


@pytest.fixture
def server() -> t.Iterator[FakeApiServer]:
    fake = FakeApiServer()
    yield fake
    fake.close()


def test_drift_reads_a_plain_fake_server_completely(
    repo_copy: Path, server: FakeApiServer, tmp_path: Path
) -> None:
    """The fake server answers well: the cluster is read whole (every object missing)."""
    config = kubeconfig(tmp_path / "kc", {"gpu-prod": {"server": server.url}})
    run = drift(repo_copy, config, "gpu-prod")
    assert run.code == 1, run.stderr
    assert run.cluster("gpu-prod")["status"] == "ok"
    assert any(f["kind"] == "ClusterQueue" for f in run.findings("gpu-prod"))


def status(code: int, reason: str, message: str) -> dict[str, t.Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}  # fmt: skip


BINDING = {"apiVersion": RB_API, "kind": "RoleBinding",
           "metadata": {"name": "team-a-admin", "namespace": "team-a"}}  # fmt: skip
WRONG = {
    "another-kind": (
        {**empty_list(CQ_API, "ClusterQueue"), "items": [BINDING]},
        {**empty_list(RB_API, "RoleBinding"), "items": [{**BINDING, "kind": "ClusterQueue"}]},
    ),
    "status-under-200": (
        status(500, "InternalError", "etcd leader changed"),
        status(403, "Forbidden", "rolebindings is forbidden"),
    ),
    "no-items": (
        {"kind": "ClusterQueueList", "apiVersion": CQ_API, "metadata": {}},
        {"kind": "RoleBindingList", "apiVersion": RB_API, "metadata": {}},
    ),
    "another-api-version": (
        empty_list("kueue.x-k8s.io/v1beta1", "ClusterQueue"),
        empty_list("rbac.authorization.k8s.io/v1beta1", "RoleBinding"),
    ),
}


@pytest.mark.parametrize("wrong", list(WRONG.values()), ids=list(WRONG))
def test_a_wrong_answer_leaves_its_kind_not_compared_never_deleted(
    repo_copy: Path, server: FakeApiServer, tmp_path: Path, wrong: tuple[t.Any, t.Any]
) -> None:
    """Issue 46: such answers under HTTP 200 made drift call every ClusterQueue and RoleBinding
    deleted (exit 1). They are not answers: the kinds are named unread, the cluster is
    incomplete (exit 3), and its other kinds are still compared."""
    queues, bindings = wrong
    server.answers[server.list_path(CQ_API, "ClusterQueue")] = Answer.of(queues)
    server.answers[server.list_path(RB_API, "RoleBinding")] = Answer.of(bindings)
    config = kubeconfig(tmp_path / "kc", {"gpu-prod": {"server": server.url}})
    run = drift(repo_copy, config, "gpu-prod")
    assert run.code == 3, run.stderr
    cluster = run.cluster("gpu-prod")
    assert cluster["status"] == "incomplete"
    unread = " ".join(cluster["errors"])
    assert "LIST ClusterQueue (kueue.x-k8s.io/v1beta2) failed" in unread, unread
    assert "LIST RoleBinding (rbac.authorization.k8s.io/v1) failed" in unread, unread
    kinds = {f["kind"] for f in run.findings("gpu-prod")}
    assert not kinds & {"ClusterQueue", "RoleBinding"}, kinds
    assert "ResourceFlavor" in kinds  # the kinds answered well are compared


def test_a_decompression_bomb_makes_the_cluster_incomplete_within_a_memory_ceiling(
    repo_copy: Path, server: FakeApiServer, tmp_path: Path
) -> None:
    """Issue 46: 2 MiB of gzip grew the process past 3 GiB. Read to the limit and no further:
    the cluster is incomplete naming the answer, and the process stays under the ceiling."""
    member = gzip.compress(b" " * (16 * MIB), compresslevel=9)
    body = member * 128  # 2 GiB decompressed
    assert len(body) <= 2 * MIB + 128 * 64
    headers = (("Content-Type", "application/json"), ("Content-Encoding", "gzip"))
    server.answers[server.list_path(CQ_API, "ClusterQueue")] = Answer(body, headers=headers)
    config = kubeconfig(tmp_path / "kc", {"gpu-prod": {"server": server.url}})
    run = drift(repo_copy, config, "gpu-prod")
    assert run.code == 3, run.stderr
    [error] = run.cluster("gpu-prod")["errors"]
    assert "LIST ClusterQueue answered with more than 64 MiB once decompressed (gzip)" in error
    assert run.max_rss < MEMORY_CEILING, f"{run.max_rss / MIB:.0f} MiB"


def plugin(tmp_path: Path, how: str) -> dict[str, t.Any]:
    """A kubeconfig user whose exec credential plugin hangs (a script whose child holds its
    pipes), fails (exit 1), or is not there."""
    script = tmp_path / f"login-{how}"
    body = {"hangs": "sleep 600 &\nwait\n", "fails": "echo 'token: s3cret' >&2\nexit 1\n"}
    if how in body:
        script.write_text("#!/bin/sh\n" + body[how])
        script.chmod(0o755)
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(script),
                     "interactiveMode": "Never"}}  # fmt: skip


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("hangs", f"no answer within the cluster's {TIMEOUT}s deadline (--timeout)"),
        ("fails", "failed (exit 1)"),
        ("missing", "failed (its command cannot be run)"),
    ],
)
def test_one_clusters_failed_credential_plugin_leaves_the_others_reported(
    repo_copy: Path, server: FakeApiServer, tmp_path: Path, how: str, says: str
) -> None:
    """Issue 46: one cluster's hung plugin ended the fleet's run with exit 2 and no report.
    Now that cluster is incomplete (exit 3, as for any cluster that cannot be read), within
    its deadline, and the other is reported as read."""
    config = kubeconfig(
        tmp_path / "kc",
        {
            "gpu-prod": {"server": server.url},
            "gpu-staging": {"server": server.url, "user": plugin(tmp_path, how)},
        },
    )
    run = drift(repo_copy, config, "gpu-prod", "gpu-staging")
    assert run.code == 3, run.stderr
    assert run.cluster("gpu-prod")["status"] == "ok"
    assert any(f["kind"] == "ClusterQueue" for f in run.findings("gpu-prod"))
    staging = run.cluster("gpu-staging")
    assert staging["status"] == "incomplete"
    [error] = staging["errors"]
    assert "the exec credential plugin of context gpu-staging" in error and says in error, error
    assert "s3cret" not in run.stderr + json.dumps(run.report)
    assert not run.findings("gpu-staging")
    assert run.seconds < TIMEOUT + 25, run.seconds  # the deadline, loading the estate twice
