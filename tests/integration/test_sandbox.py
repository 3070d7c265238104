"""The sandbox is a real control plane: served APIs, real authentication, the RBAC authorizer."""

from __future__ import annotations

import os
import signal
import socket
import typing as t
from pathlib import Path

import pytest

from auditor.errors import ClusterAccessError, SandboxError
from auditor.live.apply import apply_all
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain, controlplane, services
from auditor.sandbox.build import KUEUE_MODULE
from tests.conftest import run_line
from tests.estate import ESTATE
from tests.integration.waiting import eventually


def test_serves_both_kueue_versions_and_crds_without_conversion_webhook(sandbox: Sandbox) -> None:
    cluster = sandbox.connect()
    assert set(cluster.served_versions("kueue.x-k8s.io")) >= {"v1beta1", "v1beta2"}
    crd = cluster.get(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", "clusterqueues.kueue.x-k8s.io"
    )
    assert crd["spec"].get("conversion", {}).get("strategy", "None") == "None"
    storage = [v["name"] for v in crd["spec"]["versions"] if v["storage"]]
    assert storage == ["v1beta2"]


def test_rbac_authorizer_is_on_for_other_identities(sandbox: Sandbox) -> None:
    nobody = sandbox.connect(sandbox.credentials("nobody", ("example-org:team-a",)))
    with pytest.raises(ClusterAccessError, match="forbidden"):
        nobody.list("kueue.x-k8s.io/v1beta2", "ClusterQueue")


@pytest.mark.parametrize("cluster", ["gpu-prod", "gpu-staging"])
def test_every_manifest_of_the_repo_applies_for_real(fresh_sandbox: Sandbox, cluster: str) -> None:
    resources = Repository.open(ESTATE).load([cluster]).for_cluster(cluster)
    results = apply_all(fresh_sandbox.connect(), resources)
    assert [(str(r.resource.key), r.error) for r in results if r.error] == []
    live = fresh_sandbox.connect()
    for kind in ("ClusterQueue", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass"):
        names = {
            (o["metadata"].get("namespace"), o["metadata"]["name"])
            for o in live.list("kueue.x-k8s.io/v1beta2", kind)
        }
        assert names == {(r.namespace, r.name) for r in resources if r.kind == kind}


def test_borrowing_limit_without_cohort_is_rejected_by_the_real_api_server(
    sandbox: Sandbox,
) -> None:
    [cq, *_] = [
        r for r in Repository.open(ESTATE).load(["gpu-prod"]).resources if r.kind == "ClusterQueue"
    ]
    body = {**cq.body, "metadata": {"name": "no-cohort-cq"}}
    body["spec"] = {k: v for k, v in cq.body["spec"].items() if k != "cohortName"}
    with pytest.raises(ClusterAccessError, match="borrowingLimit must be nil when cohort is empty"):
        sandbox.connect().apply(body, manager="test")


def test_cli_lifecycle_two_sandboxes_side_by_side(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_SANDBOXES", str(tmp_path))
    up = run_line(["kueue-gitops", "--repo", str(ESTATE), "sandbox", "up", "one", "two"])
    try:
        assert up.exit_code == 0, up.output
        one, two = Sandbox("one", tmp_path), Sandbox("two", tmp_path)
        assert one.running() and two.running()
        assert one.server != two.server
        env = run_line(["kueue-gitops", "sandbox", "env", "--all"])  # neither is a repo cluster
        assert env.output.strip() == f"export KUBECONFIG={one.kubeconfig}:{two.kubeconfig}"
        applied = run_line(
            [
                "kueue-gitops",
                "--repo",
                str(ESTATE),
                "sandbox",
                "apply",
                "--cluster",
                "gpu-staging",
                "--name",
                "two",
            ]
        )
        assert applied.exit_code == 0, applied.output
        staged = Repository.open(ESTATE).load(["gpu-staging"]).for_cluster("gpu-staging")
        assert f"{len(staged)} applied, 0 rejected" in applied.output
        pids = list((one.state() or pytest.fail("no state")).pids.values())
    finally:
        down = run_line(["kueue-gitops", "sandbox", "down", "--all"])
    assert down.exit_code == 0
    assert "one: stopped kube-apiserver, etcd" in down.output
    assert not one.running() and not two.running()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_status_exits_3_when_a_sandbox_process_died(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_SANDBOXES", str(tmp_path))
    box = Sandbox("crashy", tmp_path)
    box.up(toolchain)
    try:
        state = box.state()
        assert state is not None
        os.killpg(state.pids["kube-apiserver"], signal.SIGKILL)
        eventually(lambda: not box.running(), what="the sandbox seen as not running", seconds=10)
        result = run_line(["kueue-gitops", "sandbox", "status", "--all"])  # no repo cluster
        assert result.exit_code == 3
        assert "crashy: STALE" in result.output
    finally:
        box.down()


def test_readiness_timeout_is_a_clear_error_and_leaves_nothing_running(
    tmp_path: Path, toolchain: Toolchain
) -> None:
    box = Sandbox("slow", tmp_path)
    with pytest.raises(SandboxError, match=r"not ready within 0s .*kube-apiserver.log"):
        box.up(toolchain, timeout=0.01)
    assert box.state() is None


@pytest.fixture
def taken_port() -> t.Iterator[int]:
    """A loopback port another listener holds, as another process's would be."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield int(held.getsockname()[1])


def test_a_port_taken_before_its_process_binds_it_is_left_for_a_fresh_one(
    tmp_path: Path, toolchain: Toolchain, taken_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = iter([taken_port])  # the first port chosen (kube-apiserver's) is the taken one
    monkeypatch.setattr(controlplane, "free_port", lambda: next(given, services.free_port()))
    box, said = Sandbox("taken", tmp_path), list[str]()
    box.up(toolchain, log=said.append)
    try:
        state = box.state()
        assert state is not None and box.running()
        assert taken_port not in (state.api_port, state.etcd_port, state.etcd_peer_port)
        assert "kube-apiserver exited while starting: a port it was given was taken" in said[0]
    finally:
        box.down()


def test_a_port_taken_at_every_start_is_reported_and_leaves_nothing_running(
    tmp_path: Path, toolchain: Toolchain, taken_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(controlplane, "free_port", lambda: taken_port)
    box = Sandbox("taken", tmp_path)
    with pytest.raises(SandboxError, match=r"exited while starting(.|\n)*address already in use"):
        box.up(toolchain)
    assert box.state() is None


def test_sandbox_up_in_an_empty_repository_rehearses_an_import(
    tmp_path: Path, toolchain: Toolchain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team with no clusters/ yet starts a sandbox, imports it, and stops it."""
    boxes = tmp_path / "boxes"
    monkeypatch.setenv("KUEUE_GITOPS_SANDBOXES", str(boxes))
    empty = tmp_path / "platform"
    empty.mkdir()
    kg = ["kueue-gitops", "--repo", str(empty)]
    box = Sandbox("rehearsal", boxes)
    up = run_line([*kg, "sandbox", "up", "rehearsal"])
    try:
        assert up.exit_code == 0, up.output
        assert box.running()
        assert f"rehearsal: running at {box.server}" in run_line([*kg, "sandbox", "status"]).output
        state = box.state() or pytest.fail("no state")
        release = state.versions[KUEUE_MODULE]
        imported = run_line(
            [*kg, "import", "--cluster", "rehearsal", "--kubeconfig", str(box.kubeconfig),
             "--context", box.context, "--kueue-version", release, "--tenants-by", "label=team"]
        )  # fmt: skip
        assert imported.exit_code == 0, imported.output
        assert (empty / "clusters/rehearsal/profile.yaml").is_file()
    finally:
        down = run_line([*kg, "sandbox", "down", "rehearsal"])
    assert down.exit_code == 0 and "rehearsal: stopped kube-apiserver" in down.output
    assert not box.running()
