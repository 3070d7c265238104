"""`plan replay --live`: a change merged now, simulated from a real cluster's queues, predicts
what the real Kueue does once the change is applied. A sandbox runs Kueue v0.19.2 with kwok nodes
on an inline estate (tests/integration/lab_estate.py): team-a 2 a100 GPUs that it may not exceed
(borrowingLimit 0), team-b 4, one cohort, reclaim Any. team-b runs six 1-GPU low-priority Jobs,
admitted one second apart (two borrow team-a's idle GPUs); team-a's 3-GPU high-priority Job
waits, as it must under a quota of 2. The head raises team-a's quota to 3: merged now, the Job
fits its own quota and reclaims two of team-b's borrowed GPUs. The report's prediction of the
start's instant on each side is read; then the head is applied to the cluster and what Kueue does
(the Job admitted, the Workloads it preempts, the rest untouched) is compared with it."""

from __future__ import annotations

import json
import time
import typing as t
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.k8s import conditions
from auditor.kueue import workloads
from auditor.live.apply import apply_all
from auditor.replay import run
from auditor.replay.trace import Trace, TracedWorkload, write
from auditor.repo.gitsource import revision
from auditor.sandbox import Sandbox
from tests.conftest import own_context
from tests.integration.admitting import (
    WAIT,
    BusyLab,
    admitted_workload,
    all_workloads,
    workload_name,
)
from tests.integration.lab_estate import lab_estate
from tests.unit.conftest import Revisions

WIDE = TracedWorkload("team-a", "batch", "high", {"nvidia.com/gpu": "3"}, 1, 0.0, 3600.0)
LATER = TracedWorkload("team-b", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 1800.0, 600.0)
TRACE = Trace("lab", {"source": "synthetic", "seconds": 3600}, [LATER])


def _estate(root: Path) -> Revisions:
    """The lab estate committed twice: the base, then the head raising team-a's GPUs to 3."""
    revs = Revisions(lab_estate(root, {"team-a": 2, "team-b": 4}, borrowing={"team-a": 0}))
    revs.commit("base")
    revs.edit("clusters/lab/clusterqueues.yaml", 'nominalQuota: "2"', 'nominalQuota: "3"')
    revs.commit("head: team-a's GPUs 2 -> 3")
    revs.repo.close()
    return revs


@pytest.fixture(scope="module")
def busy_lab(tmp_path_factory: pytest.TempPathFactory) -> BusyLab:
    """The cluster runs the base; the wide Job left pending is team-a's 3 GPUs."""
    root = _estate(tmp_path_factory.mktemp("livereplay")).root
    with revision(root, "HEAD~1") as base:
        return BusyLab.of("livereplay", root, base, WIDE, "team-a's 3-GPU Job pending")


def _plan(root: Path, box: Sandbox, *extra: str) -> t.Any:
    write(TRACE, root / "trace.json")
    argv = ["--repo", str(root), "plan", "replay", str(root / "trace.json"), "--live",
            *own_context(box.kubeconfig), "--base", "HEAD~1", "--head", "HEAD", *extra]  # fmt: skip
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def test_merged_now_the_prediction_of_the_first_instant_is_what_the_real_kueue_then_does(
    busy: tuple[Path, Sandbox],
) -> None:
    root, box = busy
    admin = box.connect()
    result = _plan(root, box, "--cluster", "lab", "-o", "json")
    assert result.exit_code == 0, result.output
    replay = json.loads(result.stdout)["replay"]
    start = replay["liveStart"]
    assert (start["admitted"], start["pending"], start["arriving"]) == (6, 1, 1)
    assert replay["workloads"] == 8
    assert set(replay["simulated"]) == {"base", "head"}
    wide = next(
        workload_name(wl)
        for wl in all_workloads(admin)
        if workloads.owner_job(wl) == run.job_name(6)
    )
    # base: nothing changes at once; head: the wide Job admitted, two of team-b's preempted by it
    assert start["atStart"]["base"] == {"admitted": [], "preempted": []}
    head = start["atStart"]["head"]
    assert head["admitted"] == [wide]
    assert len(head["preempted"]) == 2
    assert all(p.startswith("team-b/") and p.endswith(f" by {wide}") for p in head["preempted"])
    predicted = sorted(p.split(" by ")[0] for p in head["preempted"])
    said = _plan(root, box, "--cluster", "lab", "-o", "text")  # the same, for people
    assert said.exit_code == 0, said.output
    assert f"head at the start: admits {wide}; preempts {head['preempted'][0]}" in said.stdout
    assert "base at the start: admits nothing; preempts nothing" in said.stdout
    # the per-tenant numbers: team-a's Job is never admitted on the base, at once on the head
    base_a = next(g for g in replay["base"]["tenants"] if g["name"] == "team-a")
    head_a = next(g for g in replay["head"]["tenants"] if g["name"] == "team-a")
    assert (base_a["neverAdmitted"], head_a["neverAdmitted"]) == (1, 0)
    assert head_a["waitSeconds"]["max"] == 0.0
    head_b = next(g for g in replay["head"]["tenants"] if g["name"] == "team-b")
    assert head_b["preemptedBy"] == {"team-a": 2}
    # the trace's team-b Workload (at 30 min) is admitted on both once the running ones end:
    # what they held at the start is freed when they finish, and what waits is requeued
    base_b = next(g for g in replay["base"]["tenants"] if g["name"] == "team-b")
    assert (base_b["neverAdmitted"], head_b["neverAdmitted"]) == (0, 0)

    before = {
        workload_name(wl)
        for wl in all_workloads(admin)
        if conditions.is_true(wl, workloads.QUOTA_RESERVED)
    }
    with revision(root, "HEAD") as merged:  # the change merged: its objects applied
        objects = list(merged.load(["lab"]).for_cluster("lab"))
    assert [r.error for r in apply_all(admin, objects) if r.error] == []
    box.wait_until(
        "team-a's wide Job admitted",
        time.monotonic() + WAIT,
        lambda: admitted_workload(admin, run.job_name(6)) is not None,
        ("kueue",),
    )
    real = admitted_workload(admin, run.job_name(6))
    assert real is not None and real["status"]["admission"]["clusterQueue"] == "team-a-cq"
    preempted = sorted(
        workload_name(wl)
        for wl in all_workloads(admin)
        if conditions.is_true(wl, workloads.PREEMPTED)
    )
    assert preempted == predicted
    still = {
        workload_name(wl)
        for wl in all_workloads(admin)
        if conditions.is_true(wl, workloads.QUOTA_RESERVED)
    }
    assert still == (before - set(preempted)) | {wide}


@pytest.mark.parametrize(
    ("clusters", "says"),
    [
        ([], "--live starts both revisions from one live cluster's queues: give --cluster"),
        (["--cluster", "lab", "--cluster", "other"], "lab, other: this verb reads one cluster"),
    ],
)
def test_live_replay_names_one_cluster_or_is_refused(
    tmp_path: Path, clusters: list[str], says: str
) -> None:
    root = _estate(tmp_path).root
    write(TRACE, root / "trace.json")
    argv = ["--repo", str(root), "plan", "replay", str(root / "trace.json"), "--live", "--base",
            "HEAD~1", *clusters]  # fmt: skip
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 2
    assert says in " ".join(result.stderr.split())


def test_an_unreachable_cluster_is_exit_3_naming_it(tmp_path: Path) -> None:
    root = _estate(tmp_path).root
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: lab\n"
        "clusters: [{name: dead, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: lab, context: {cluster: dead, user: u}}]\n"
    )
    write(TRACE, root / "trace.json")
    argv = ["--repo", str(root), "plan", "replay", str(root / "trace.json"), "--live",
            "--kubeconfig", str(kubeconfig), "--cluster", "lab", "--base", "HEAD~1"]  # fmt: skip
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 3, result.output
    assert "lab" in result.stderr and "unreachable" in result.stderr


@pytest.mark.parametrize("paced", [["--speed", "20"], ["--repeat", "3"]])
def test_the_real_engines_pacing_is_refused_not_ignored(tmp_path: Path, paced: list[str]) -> None:
    root = _estate(tmp_path).root
    write(TRACE, root / "trace.json")
    argv = ["--repo", str(root), "plan", "replay", str(root / "trace.json"), "--live",
            "--cluster", "lab", "--base", "HEAD~1", *paced]  # fmt: skip
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 2
    assert f"{paced[0]} paces the real Kueue's replay" in result.stderr
