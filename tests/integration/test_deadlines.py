"""A control plane that half-fails ends the audit at its deadline: exit 3, the kinds not read
named, other clusters reported. Each case breaks a sandbox of its own: etcd stopped behind a
running kube-apiserver, a kube-apiserver frozen (SIGSTOP) before or in the middle of the audit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.drift import audit
from auditor.live.kube import KubeCluster, Limits
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import own_context, run_line, start_sandbox
from tests.integration.conftest import unread_kinds
from tests.integration.drift_live import CLUSTER, servable_repo, sync

Json = dict[str, t.Any]
DEADLINE = 15.0
# What a run needs besides its clusters' reads: start-up, loading the repo, the report.
MARGIN = 10.0


@pytest.fixture
def synced(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> t.Iterator[tuple[Sandbox, Path]]:
    box = start_sandbox(toolchain, sandboxes_dir, f"deadline-{request.node.name[5:25]}")
    try:
        repo = servable_repo(tmp_path / "repo", box.connect())
        sync(box, repo)
        yield box, repo
    finally:
        _resume(box)
        box.down()


def _pid(box: Sandbox, process: str) -> int:
    state = box.state()
    assert state is not None
    return state.pids[process]


def _resume(box: Sandbox) -> None:
    state = box.state()
    for pid in state.pids.values() if state else []:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGCONT)


def timed_drift(repo: Path, box: Sandbox, *extra: str) -> tuple[int, Json, float]:
    started = time.monotonic()
    result = run_line(
        [
            *("kueue-gitops", "--repo", str(repo), "drift", "--cluster", CLUSTER),
            *own_context(box.kubeconfig),
            *("-o", "json", "--timeout", str(DEADLINE)),
            *extra,
        ]
    )
    return result.exit_code, json.loads(result.stdout), time.monotonic() - started


def test_etcd_stopped_behind_a_running_api_server_ends_at_the_deadline(
    synced: tuple[Sandbox, Path],
) -> None:
    box, repo = synced
    os.killpg(_pid(box, "etcd"), signal.SIGSTOP)  # the API server still answers discovery
    code, report, seconds = timed_drift(repo, box)
    print(f"etcd down: exit {code} after {seconds:.1f}s (deadline {DEADLINE:g}s)")
    assert code == 3 and report["status"] == "incomplete"
    assert seconds < DEADLINE + MARGIN
    [cluster] = report["clusters"]
    assert "deadline" in cluster["errors"][0]
    not_read = set(unread_kinds(cluster["errors"]))
    assert {"Namespace", "ClusterQueue", "LocalQueue", "ClusterRole"} <= not_read
    assert report["findings"] == []


def test_a_frozen_api_server_ends_at_the_deadline(synced: tuple[Sandbox, Path]) -> None:
    box, repo = synced
    os.killpg(_pid(box, "kube-apiserver"), signal.SIGSTOP)
    code, report, seconds = timed_drift(repo, box)
    print(f"frozen kube-apiserver: exit {code} after {seconds:.1f}s (deadline {DEADLINE:g}s)")
    assert code == 3 and report["status"] == "incomplete"
    assert seconds < DEADLINE + MARGIN
    [cluster] = report["clusters"]
    assert cluster["status"] == "incomplete" and cluster["errors"]
    assert report["findings"] == []


class _FreezesMidAudit(KubeCluster):
    """The real client; the API server is frozen (SIGSTOP) right after the third LIST, so the
    connection stays open and the next answer never comes."""

    box: Sandbox
    lists = 0

    def list(
        self, api_version: str, kind: str, *, page_size: int = 500, selector: str = ""
    ) -> list[Json]:
        items = super().list(api_version, kind, page_size=page_size, selector=selector)
        self.lists += 1
        if self.lists == 3:
            os.killpg(_pid(self.box, "kube-apiserver"), signal.SIGSTOP)
        return items


def test_an_api_server_frozen_mid_audit_ends_at_the_deadline(
    synced: tuple[Sandbox, Path],
) -> None:
    box, repo = synced

    def connect(profile: ClusterProfile) -> KubeCluster:
        cluster = _FreezesMidAudit(box.connect().api, profile.name, Limits(deadline=DEADLINE))
        cluster.box = box
        return cluster

    started = time.monotonic()
    report = audit.audit(Repository.open(repo), [CLUSTER], connect)
    seconds = time.monotonic() - started
    print(f"kube-apiserver frozen mid-audit: incomplete after {seconds:.1f}s")
    assert report.exit_code == 3 and seconds < DEADLINE + MARGIN
    [cluster] = report.clusters
    assert "deadline" in cluster.errors[0]
    [unread] = cluster.errors[1:]  # every kind after the freeze is named, on one line
    assert unread.startswith("LIST not attempted (the cluster's deadline passed): ")
    assert len(unread.split(", ")) > 4


def test_a_cluster_missing_from_the_kubeconfig_leaves_the_other_audited(
    synced: tuple[Sandbox, Path], tmp_path: Path
) -> None:
    box, repo = synced
    doc = yaml.safe_load(box.kubeconfig.read_text())
    doc["contexts"][0]["name"] = doc["current-context"] = "gpu-prod"  # gpu-staging: none
    kubeconfig = tmp_path / "only-prod"
    kubeconfig.write_text(yaml.safe_dump(doc))
    result = run_line(
        ["kueue-gitops", "--repo", str(repo), "drift", "-o", "json"],
        env={"KUBECONFIG": str(kubeconfig)},
    )
    assert result.exit_code == 3, result.stderr
    clusters = {c["name"]: c for c in json.loads(result.stdout)["clusters"]}
    assert clusters["gpu-prod"] == {"name": "gpu-prod", "status": "ok", "errors": []}
    assert clusters["gpu-staging"]["status"] == "incomplete"
    assert clusters["gpu-staging"]["errors"] == [
        f"cluster gpu-staging: no context gpu-staging of $KUBECONFIG ({kubeconfig})"
    ]
