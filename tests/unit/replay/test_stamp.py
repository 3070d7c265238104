"""What a simulated answer says it assumed: where its run times come from (the trace's, and
--run-for for a live cluster's own Workloads) and what the nodes hold (where that was read, or
that admission is on quota alone)."""

from __future__ import annotations

from auditor.replay import stamp
from auditor.replay.trace import Trace, TracedWorkload

JOB = TracedWorkload("team-a", "batch", None, {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0)
SYNTHETIC = Trace(
    "lab", {"source": "synthetic", "seconds": 60.0, "seed": 7, "medianRunSeconds": 300.0}, [JOB]
)
RECORDED = Trace(
    "lab",
    {"source": "live", "seconds": 60.0},
    [JOB, TracedWorkload("team-a", "batch", None, {}, 1, 5.0, 30.0, still_running=True)],
)


def test_a_replay_says_where_its_run_times_come_from_and_that_nodes_are_not_weighed() -> None:
    said = stamp.assumed([SYNTHETIC, RECORDED])
    assert said == [
        "run times: the synthetic trace's, drawn log-normal around a median of 300 s "
        "(trace generate, seed 7)",
        "run times: the live trace's, Admitted to Finished as recorded; 1 still running when "
        "recorded: their run time so far",
        stamp.ON_QUOTA,
    ]


def test_a_live_start_says_the_run_time_it_gave_the_clusters_workloads() -> None:
    said = stamp.assumed(run_for=3600.0, job=True, capacity="what the nodes hold: the profile's")
    assert said == [
        "run times: each Workload already on the cluster, and the Job, runs 3600 s from its "
        "admission (--run-for; not read from the cluster)",
        "what the nodes hold: the profile's",
    ]


def test_the_stamp_carries_them_in_json_and_in_the_reports_lines() -> None:
    made = stamp.stamp({}, "v0.19.2", {}, inputs=stamp.assumed([SYNTHETIC]))
    assert made.to_json()["assumed"] == stamp.assumed([SYNTHETIC])
    lines = made.lines()
    assert f"assumed: {stamp.ON_QUOTA}" in lines
    assert lines.index(f"assumed: {stamp.ON_QUOTA}") < lines.index(
        next(line for line in lines if line.startswith("not modelled:"))
    )
