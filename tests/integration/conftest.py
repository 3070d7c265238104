from __future__ import annotations

import os
import time
import typing as t
import venv
from pathlib import Path

import pytest

from auditor.errors import ClusterAccessError
from auditor.k8s import conditions
from auditor.kueue import workloads
from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.replay import run, trace
from auditor.replay.trace import Trace, TracedWorkload
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain, nodes, releases
from auditor.sandbox.build import TOOLS, KueueRelease, ensure_tool
from auditor.upgrade import probes
from tests import installed
from tests.conftest import ROOT
from tests.estate import ESTATE
from tests.integration.admitting import API, WAIT, BusyLab, admit_alone, all_workloads
from tests.integration.lab_estate import lab_estate
from tests.integration.sweep_grid import GRID
from tests.integration.waiting import eventually
from tests.unit.conftest import Revisions


def repo_kueue_config(cluster: str) -> dict[str, t.Any] | None:
    """The Kueue Configuration clusters/<cluster>/kueue/ holds: what a sandbox's Kueue runs."""
    return boundaries.kueue_configuration(Repository.open(ESTATE), cluster)


def repo_kueue_release(toolchain: Toolchain, cluster: str) -> KueueRelease:
    """The Kueue release the cluster's profile names, built from its pinned module."""
    return releases.release(toolchain, Repository.open(ESTATE).cluster(cluster).kueue_version)


PAUSE = {"name": "c", "image": "registry.k8s.io/pause:3.10"}


def wait_until_policies_hold(cluster: KubeCluster, timeout: float = 30.0) -> None:
    """A synced ValidatingAdmissionPolicy holds once the API server has compiled it and its
    binding (a second or so): until then a tenant's Job without a queue name gets through."""
    tenant = cluster.impersonating("kueue-gitops-sync-check", ["example-org:team-a"])
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "sync-check", "namespace": "team-a"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [PAUSE]}}},
    }

    def refused() -> bool:
        try:
            tenant.request(
                "POST",
                tenant.path("batch/v1", "Job", "team-a"),
                query=[("dryRun", "All")],
                body=job,
            )
        except ClusterAccessError as exc:
            return "ValidatingAdmissionPolicy" in str(exc)
        return False

    eventually(refused, what="the synced admission policies refusing a Job", seconds=timeout)


def wait_until_queues_reconciled(cluster: KubeCluster, api: str, timeout: float = 60.0) -> None:
    """Kueue has judged every ClusterQueue as synced (its Active condition written for that
    spec): until then a check that reads their conditions sees a controller catching up."""
    eventually(
        lambda: not probes.stale_queues(cluster, api),
        what="Kueue reconciling every ClusterQueue",
        seconds=timeout,
        seen=lambda: probes.stale_queues(cluster, api),
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


def unread_kinds(errors: t.Iterable[str]) -> list[str]:
    """The kinds a cluster's errors say were not read: `LIST <Kind> ...` one by one, and the
    kinds named on the one `LIST not attempted (...): A, B` line once it stopped answering."""
    kinds: list[str] = []
    for error in errors:
        if error.startswith("LIST not attempted ("):
            kinds += error.partition("): ")[2].split(", ")
        elif error.startswith("LIST "):
            kinds.append(error.split()[1])
    return kinds


def release_sandbox(toolchain: Toolchain, root: Path, name: str, version: str) -> Sandbox:
    """A bare sandbox running Kueue `version` (none of this repository applied), started, or
    the test failed saying why."""
    box = Sandbox(f"{name}-{version.replace('.', '-')}-{os.getpid()}", root=root)
    try:
        box.up(toolchain, with_kueue=True, kueue_release=releases.release(toolchain, version))
    except Exception as exc:
        box.down()
        pytest.fail(f"the Kueue {version} sandbox could not start: {exc}", pytrace=False)
    return box


def synced_kueue_sandbox(toolchain: Toolchain, root: Path, cluster: str) -> Sandbox:
    """A sandbox of `cluster` running the Kueue release its profile names (from the repo's
    Configuration), kube-controller-manager, and kwok's nodes from the profile's capacity,
    synced from clusters/<cluster>: its admission policies hold there."""
    repo = Repository.open(ESTATE)
    box = Sandbox(f"{cluster}-{os.getpid()}", root=root)
    release = releases.release(toolchain, repo.cluster(cluster).kueue_version, log=print)
    try:
        box.up(
            toolchain,
            with_kueue=True,
            kueue_config=repo_kueue_config(cluster),
            node_pools=nodes.pools_for(repo, cluster),
            kueue_release=release,
        )
    except Exception as exc:
        box.down()
        pytest.fail(f"the Kueue sandbox of {cluster} could not start: {exc}", pytrace=False)
    try:
        results = apply_all(box.connect(), repo.load([cluster]).for_cluster(cluster))
        assert [(str(r.resource.key), r.error) for r in results if r.error] == []
        wait_until_policies_hold(box.connect())
        wait_until_queues_reconciled(box.connect(), repo.cluster(cluster).kueue_api)
    except BaseException:
        box.down()
        raise
    return box


@pytest.fixture(scope="session")
def kueue_sandbox(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    """gpu-staging with Kueue v0.17.0 and simulated node pools, synced."""
    box = synced_kueue_sandbox(toolchain, sandboxes_dir, "gpu-staging")
    yield box
    box.down()


@pytest.fixture(scope="session")
def legacy_sandbox(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    """gpu-legacy with Kueue v0.9.1 (v1beta1 only) and simulated node pools, synced."""
    box = synced_kueue_sandbox(toolchain, sandboxes_dir, "gpu-legacy")
    yield box
    box.down()


@pytest.fixture(scope="module")
def renderers() -> None:
    """kustomize and helm at the releases Argo CD runs, built into the cache (the rendered
    estates' tests use it: `pytestmark = pytest.mark.usefixtures("renderers")`)."""
    for tool in ("kustomize", "helm"):
        ensure_tool(ROOT / "testenv", tool, TOOLS[tool], log=print)


@pytest.fixture(scope="module")
def sweep_case(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The constructed case of test_plan_sweep and test_sweep_ray: team-a alone with 2 GPUs, six
    10-minute 1-GPU Workloads (eight on the busier day), and the grids the tests sweep."""
    root = lab_estate(tmp_path_factory.mktemp("sweep"), {"team-a": 2})
    revs = Revisions(root)
    try:
        revs.commit("team-a alone, 2 GPUs")
    finally:
        revs.repo.close()
    work = [TracedWorkload("team-a", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0)] * 6
    made = Trace("lab", {"source": "synthetic", "seconds": 3600.0, "seed": 0}, work)
    trace.write(made, root / "day.json")
    busier = Trace("lab", {"source": "synthetic", "seconds": 3600.0, "seed": 0}, [work[0]] * 8)
    trace.write(busier, root / "day2.json")
    (root / "two-days.yaml").write_text(
        GRID.format(values="1, 2, 3, 4, 6") + "traces: [day2.json]\n"
    )
    for name, values in (("grid.yaml", "1, 2, 3, 4, 6"), ("short.yaml", "1, 2")):
        (root / name).write_text(GRID.format(values=values))
    (root / "bad.yaml").write_text(GRID.format(values="3").replace("team-a-cq", "team-z-cq", 1))
    return root


@pytest.fixture(scope="module")
def adopter(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install 'kueue-gitops[sandbox]'` into a fresh virtualenv; its kueue-gitops."""
    env = tmp_path_factory.mktemp("venv-sandbox")
    venv.create(env, with_pip=True)
    pip = installed.run([str(env / "bin/pip"), "install", "--quiet", f"{wheel}[sandbox]"], env)
    assert pip.returncode == 0, pip.stderr[-3000:]
    return env / "bin/kueue-gitops"


@pytest.fixture(scope="module")
def busy(
    busy_lab: BusyLab, toolchain: Toolchain, sandboxes_dir: Path
) -> t.Iterator[tuple[Path, Sandbox]]:
    """A real Kueue on the module's `busy_lab`: team-b's six 1-GPU Jobs admitted one second
    apart, then the lab's wide Job created and left pending."""
    box = Sandbox(f"{busy_lab.name}-{os.getpid()}", root=sandboxes_dir)
    try:
        box.up(
            toolchain,
            with_kueue=True,
            kueue_config=busy_lab.kueue_config,
            node_pools=busy_lab.node_pools,
            kueue_release=releases.release(toolchain, "v0.19.2"),
        )
        admin = box.connect()
        assert [r.error for r in apply_all(admin, busy_lab.objects) if r.error] == []
        run._wait_active(box, admin, API)
        for i in range(6):  # one at a time, a second apart: Kueue orders victims by admission
            admit_alone(box, admin, i)
        admin.create(run.job(busy_lab.wide, 6, 1.0))

        def waits() -> bool:
            return any(
                workloads.owner_job(wl) == run.job_name(6)
                and conditions.is_false(wl, workloads.QUOTA_RESERVED)
                for wl in all_workloads(admin)
            )

        box.wait_until(busy_lab.waiting, time.monotonic() + WAIT, waits, ("kueue",))
        yield busy_lab.root, box
    finally:
        box.down()
