"""`plan job FILE`: the simulation started from a real cluster predicts what the real Kueue
then does with the Job. A sandbox runs Kueue v0.19.2 with kwok nodes on an inline estate
(tests/integration/lab_estate.py): team-a and team-b, 4 a100 GPUs each, one cohort, reclaim Any.
team-b runs six 1-GPU low-priority Jobs, admitted one second apart, so two borrow team-a's GPUs,
and a seventh of 3 GPUs waits (the cohort's 8 GPUs would not hold it). The forecast for a 4-GPU
team-a Job (high priority) is read from the live cluster; then the same Job is submitted for
real and what Kueue does (its admission, the Workloads it preempts, the others left running, the
waiting one left waiting) is compared with the forecast."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.k8s import conditions
from auditor.kueue import workloads
from auditor.replay import run
from auditor.replay.trace import TracedWorkload
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox
from tests.conftest import own_context
from tests.html_pages import answer, opened
from tests.integration.admitting import (
    WAIT,
    BusyLab,
    admitted_workload,
    all_workloads,
    workload_name,
)
from tests.integration.lab_estate import lab_estate
from tests.unit.conftest import Revisions

WIDE = TracedWorkload("team-b", "batch", "low", {"nvidia.com/gpu": "3"}, 1, 0.0, 3600.0)
BIG = TracedWorkload("team-a", "batch", "high", {"nvidia.com/gpu": "4"}, 1, 0.0, 3600.0)


@pytest.fixture(scope="module")
def busy_lab(tmp_path_factory: pytest.TempPathFactory) -> BusyLab:
    """team-a and team-b with 4 GPUs each; the wide Job left pending is team-b's."""
    root = lab_estate(tmp_path_factory.mktemp("job"), {"team-a": 4, "team-b": 4})
    revs = Revisions(root)
    revs.commit("lab")
    revs.repo.close()
    return BusyLab.of("job", root, Repository.open(root), WIDE, "team-b's wide Job pending")


def test_the_forecast_names_the_admission_and_the_victims_the_real_kueue_then_chooses(
    busy: tuple[Path, Sandbox],
) -> None:
    root, box = busy
    admin = box.connect()
    job = run.job(BIG, 100, 1.0)
    (root / "job.yaml").write_text(yaml.safe_dump(job))
    argv = ["--repo", str(root), "plan", "job", str(root / "job.yaml"),
            *own_context(box.kubeconfig), "--cluster", "lab", "-o", "json"]  # fmt: skip
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    said = json.loads(result.stdout)["job"]
    assert said["clusterQueue"] == "team-a-cq"
    assert said["simulated"]["kueueRelease"] == "v0.19.2"
    assumed = said["simulated"]["assumed"]  # the run time it gave them, though none was given
    assert any("and the Job, runs 3600 s from its admission (--run-for" in a for a in assumed)
    assert "nvidia.com/gpu=a100" in said["flavors"]
    assert said["admittedAfterSeconds"] == 0.0  # the victims stop at once in the simulation
    assert len(said["preempts"]) == 2
    # what the forecast says changes first: the two preempted by the Job, and the Job admitted
    kinds = sorted((c["kind"], c["workload"]) for c in said["changes"])
    assert kinds == sorted([("preempted", v) for v in said["preempts"]] + [("admitted", "the Job")])

    # the page says the same first: when, where, whom; then the timeline of those changes
    page = CliRunner().invoke(cli, [*argv[:-1], "html"], catch_exceptions=False)
    assert page.exit_code == 0, page.output
    timeline = opened("plan-job-live", page.stdout)["job-timeline"]
    assert timeline["data"]["changes"] == said["changes"]
    shown = answer("plan-job-live")
    assert shown["first"] and shown["when"] == "admitted after 0s"
    assert shown["where"] == f"ClusterQueue team-a-cq, flavors {said['flavors']}"
    assert shown["preempts"].splitlines() == said["preempts"]

    before = {
        workload_name(wl)
        for wl in all_workloads(admin)
        if conditions.is_true(wl, workloads.QUOTA_RESERVED)
    }
    admin.create(job)
    box.wait_until(
        "the team-a Job admitted",
        time.monotonic() + WAIT,
        lambda: admitted_workload(admin, run.job_name(100)) is not None,
        ("kueue",),
    )
    real = admitted_workload(admin, run.job_name(100))
    assert real is not None
    assert real["status"]["admission"]["clusterQueue"] == "team-a-cq"
    preempted = sorted(
        workload_name(wl)
        for wl in all_workloads(admin)
        if conditions.is_true(wl, workloads.PREEMPTED)
    )
    assert preempted == said["preempts"]
    still = {
        workload_name(wl)
        for wl in all_workloads(admin)
        if conditions.is_true(wl, workloads.QUOTA_RESERVED)
    }
    assert still == (before - set(preempted)) | {workload_name(real)}  # the wide one still waits
    assert not any(
        c["workload"].startswith("team-b/") and c["kind"] == "admitted" for c in said["changes"]
    )
