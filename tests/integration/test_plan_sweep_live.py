"""`plan sweep --live`: what the nodes hold is read from the live cluster, not the profile. A
sandbox (Kueue v0.19.2 with its kube-controller-manager, which makes kwok's nodes schedulable)
runs nodes holding 4 a100 GPUs, while the repository's profile of `lab` says 16. team-a (1 GPU)
and team-c (1 GPU, lent in the cohort), six 1-GPU Workloads of team-a at once: two waves (p95 <=
660 s) from a quota of 2. Against the profile every point fits; against the live nodes, team-a
at 4 or 6 promises more than the 4 GPUs there are, and those points are infeasible."""

from __future__ import annotations

import json
import os
import typing as t
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.replay import trace
from auditor.replay.trace import Trace, TracedWorkload
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain, nodes, releases
from tests.conftest import own_context
from tests.integration import sweep_grid
from tests.integration.lab_estate import lab_estate
from tests.unit.conftest import Revisions

QUOTA = "team-a-cq a100/nvidia.com/gpu nominalQuota"


@pytest.fixture(scope="module")
def lab(
    toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory, sandboxes_dir: Path
) -> t.Iterator[tuple[Path, Sandbox]]:
    root = lab_estate(tmp_path_factory.mktemp("sweep-live"), {"team-a": 1, "team-c": 1})
    profile = root / "clusters" / "lab" / "profile.yaml"
    said = profile.read_text()
    profile.write_text(said.replace('nvidia.com/gpu: "16"', 'nvidia.com/gpu: "4"'))
    pools = nodes.pools_for(Repository.open(root), "lab")  # the nodes: 4 GPUs
    profile.write_text(said)  # the repository: 16
    revs = Revisions(root)
    try:
        revs.commit("team-a at 1 GPU; the profile says 16 GPUs")
    finally:
        revs.repo.close()
    work = [TracedWorkload("team-a", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0)] * 6
    trace.write(Trace("lab", {"source": "synthetic", "seconds": 3600.0}, work), root / "day.json")
    (root / "grid.yaml").write_text(sweep_grid.QUOTA_GRID)
    box = Sandbox(f"sweep-live-{os.getpid()}", root=sandboxes_dir)
    try:
        box.up(
            toolchain,
            with_kueue=True,
            node_pools=pools,
            kueue_release=releases.release(toolchain, "v0.19.2"),
        )
        yield root, box
    finally:
        box.down()


def sweep(root: Path, *extra: str) -> dict[str, t.Any]:
    argv = ["--repo", str(root), "plan", "sweep", str(root / "grid.yaml"), "--trace",
            str(root / "day.json"), "--cluster", "lab", "-o", "json", *extra]  # fmt: skip
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    doc: dict[str, t.Any] = json.loads(result.stdout)["sweep"]
    return doc


def test_with_live_the_nodes_the_cluster_has_bound_the_answer(lab: tuple[Path, Sandbox]) -> None:
    root, box = lab
    by_profile = sweep(root)
    assert all(p["feasible"] for p in by_profile["points"])
    assert "clusters/lab/profile.yaml" in by_profile["capacity"]
    live = sweep(root, "--live", *own_context(box.kubeconfig))
    assert live["capacity"] == "the 1 Ready node(s) of lab, read live"
    infeasible = {
        p["values"][QUOTA]: p["overCapacity"] for p in live["points"] if not p["feasible"]
    }
    assert infeasible == {"4": ["a100/nvidia.com/gpu 5 > 4"], "6": ["a100/nvidia.com/gpu 7 > 4"]}
    assert live["best"]["values"][QUOTA] == "2" and live["best"]["frontier"]
    assert (
        "what the nodes hold: the 1 Ready node(s) of lab, read live"
        in (live["simulated"]["assumed"])
    )
