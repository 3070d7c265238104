"""`kueue-gitops[sim]` as a user without Go gets it: this tree's wheels, kueue-gitops's pure one
released as 9.9.9 (tests/installed.py) and kueue-gitops-sim's built by its own build hook for
one release, v0.19.2 (`make dist` builds every supported release; one keeps the test's cost
small), installed with `pip install --find-links DIST 'kueue-gitops[sim]'` into a fresh
virtualenv, the dependencies from the index. Run with no Go on PATH, the installed command
forecasts a Job against a sandbox running Kueue v0.19.2 (`plan job`), sweeps and
replays (`plan sweep`, `plan replay --engine sim`) on the same estate."""

from __future__ import annotations

import json
import os
import shutil
import sys
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.live.apply import apply_all
from auditor.replay import run as replay_run
from auditor.replay import trace
from auditor.replay.trace import Trace, TracedWorkload
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain, nodes, releases
from tests.conftest import own_context
from tests.installed import VERSION, run
from tests.integration.lab_estate import lab_estate
from tests.unit.conftest import Revisions

API = "kueue.x-k8s.io/v1beta2"
ONE = TracedWorkload("team-a", "batch", "high", {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0)
GRID = """\
grid:
  - clusterQueue: team-a-cq
    flavor: a100
    resource: nvidia.com/gpu
    field: nominalQuota
    values: [1, 4]
target:
  tenant: team-a
  p95WaitSeconds: 660
"""


@pytest.fixture(scope="module")
def kg(source: Path, wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both wheels in one folder, installed from it as the README says; the command."""
    dist = tmp_path_factory.mktemp("dist")
    shutil.copy(wheel, dist)
    hook = {"KUEUE_GITOPS_PYTHON": sys.executable, "KUEUE_GITOPS_SIM_RELEASES": "v0.19.2"}
    argv = [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist)]
    built = run([*argv, "packages/kueue-gitops-sim"], source, env=hook)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    tag = "py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64"
    assert [p.name for p in dist.glob("kueue_gitops_sim-*")] == [
        f"kueue_gitops_sim-{VERSION}-{tag}.whl"
    ]
    venv = tmp_path_factory.mktemp("venv-sim")
    assert run([sys.executable, "-m", "venv", str(venv)], venv).returncode == 0
    pip = [str(venv / "bin/pip"), "install", "--quiet", "--find-links", str(dist)]
    installed = run([*pip, f"kueue-gitops[sim]=={VERSION}"], venv)
    assert installed.returncode == 0, installed.stderr[-3000:]
    assert list(venv.glob("lib/python*/site-packages/kueue_gitops_sim/bin/v0.19.2/kueuesim"))
    return venv / "bin/kueue-gitops"


def without_go(kg: Path) -> dict[str, str]:
    kept = [d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "go").exists()]
    path = os.pathsep.join([str(kg.parent), *kept])
    assert shutil.which("go", path=path) is None
    return {"PATH": path}


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = lab_estate(tmp_path_factory.mktemp("simlab"), {"team-a": 4, "team-b": 4})
    revs = Revisions(root)
    try:
        revs.commit("lab")
    finally:
        revs.repo.close()
    made = Trace("lab", {"source": "synthetic", "seconds": 3600.0, "seed": 0}, [ONE] * 3)
    trace.write(made, root / "day.json")
    (root / "grid.yaml").write_text(GRID)
    (root / "job.yaml").write_text(yaml.safe_dump(replay_run.job(ONE, 100, 1.0)))
    return root


@pytest.fixture(scope="module")
def box(toolchain: Toolchain, estate: Path, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    repo = Repository.open(estate)
    sandbox = Sandbox(f"simwheel-{os.getpid()}", root=sandboxes_dir)
    try:
        sandbox.up(
            toolchain,
            with_kueue=True,
            kueue_config=boundaries.kueue_configuration(repo, "lab"),
            node_pools=nodes.pools_for(repo, "lab"),
            kueue_release=releases.release(toolchain, "v0.19.2"),
        )
        admin = sandbox.connect()
        refused = [r.error for r in apply_all(admin, repo.load(["lab"]).for_cluster("lab"))]
        assert [e for e in refused if e] == []
        replay_run._wait_active(sandbox, admin, API)
        yield sandbox
    finally:
        sandbox.down()


def test_the_installed_simulator_forecasts_a_job_on_a_live_cluster_without_go(
    kg: Path, estate: Path, box: Sandbox
) -> None:
    argv = [str(kg), "--repo", str(estate), "plan", "job", str(estate / "job.yaml"),
            *own_context(box.kubeconfig), "--cluster", "lab", "-o", "json"]  # fmt: skip
    done = run(argv, estate, env=without_go(kg))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "building" not in done.stderr  # the wheel's binary, nothing built
    said = json.loads(done.stdout)["job"]
    assert said["clusterQueue"] == "team-a-cq"
    assert said["simulated"]["kueueRelease"] == "v0.19.2"
    assert said["admittedAfterSeconds"] == 0.0  # an idle cluster with 4 GPUs of team-a's quota
    assert said["preempts"] == []


@pytest.mark.parametrize(
    "mode",
    [
        ["sweep", "grid.yaml", "--trace", "day.json"],
        ["replay", "day.json", "--base", "HEAD", "--engine", "sim"],
    ],
    ids=["sweep", "replay-sim"],
)
def test_the_installed_simulator_sweeps_and_replays_without_go(
    kg: Path, estate: Path, mode: list[str]
) -> None:
    files = [str(estate / a) if a.endswith((".yaml", ".json")) else a for a in mode]
    argv = [str(kg), "--repo", str(estate), "plan", *files, "--cluster", "lab", "-o", "json"]
    done = run(argv, estate, env=without_go(kg))
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: findings, a report all the same
    assert "building" not in done.stderr and "Go" not in done.stderr
    assert '"kueueRelease": "v0.19.2"' in done.stdout
