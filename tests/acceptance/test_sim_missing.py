"""Without the compiled simulator (kueue-gitops-sim, the extra `kueue-gitops[sim]`) and without
Go on PATH, the commands that simulate stop before anything else as a configuration error
(exit 2) that names the package to install and Go as the alternative, not the sandbox."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.replay import run, trace
from auditor.replay.trace import Trace, TracedWorkload
from tests.integration.lab_estate import lab_estate
from tests.unit.conftest import Revisions

ONE = TracedWorkload("team-a", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0)
GRID = """\
grid:
  - clusterQueue: team-a-cq
    flavor: a100
    resource: nvidia.com/gpu
    field: nominalQuota
    values: [1, 2]
target:
  tenant: team-a
  p95WaitSeconds: 660
"""


def without_go() -> str:
    """The PATH with every folder holding a `go` left out."""
    kept = [d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "go").exists()]
    return os.pathsep.join(kept)


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    root = lab_estate(tmp_path / "lab", {"team-a": 2})
    revs = Revisions(root)
    try:
        revs.commit("team-a, 2 GPUs")
    finally:
        revs.repo.close()
    made = Trace("lab", {"source": "synthetic", "seconds": 3600.0, "seed": 0}, [ONE] * 3)
    trace.write(made, root / "day.json")
    (root / "grid.yaml").write_text(GRID)
    (root / "job.yaml").write_text(yaml.safe_dump(run.job(ONE, 0, 1.0)))
    return root


@pytest.mark.parametrize(
    "argv",
    [
        ["job", "job.yaml", "--cluster", "lab"],
        ["sweep", "grid.yaml", "--trace", "day.json", "--cluster", "lab"],
        ["replay", "day.json", "--base", "HEAD", "--cluster", "lab", "--engine", "sim"],
    ],
    ids=["job", "sweep", "replay-sim"],
)
def test_without_the_simulator_or_go_the_plan_names_the_package_to_install(
    lab: Path, argv: list[str]
) -> None:
    assert importlib.util.find_spec("kueue_gitops_sim") is None  # the companion not installed
    paths = [str(lab / a) if a.endswith((".yaml", ".json")) else a for a in argv]
    done = CliRunner().invoke(cli, ["--repo", str(lab), "plan", *paths], env={"PATH": without_go()})
    assert done.exit_code == 2, done.output
    said = " ".join(done.output.split())
    needed = "the replay simulator for Kueue v0.19.2 is needed: kueue-gitops-sim is not installed"
    assert needed in said
    assert "pip install 'kueue-gitops[sim]'" in said
    assert "or put the Go toolchain on PATH to build it" in said
    assert "sandbox" not in said
