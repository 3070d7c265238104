"""A replay's comparison of two configurations, for the timeline and HTML report tests."""

from __future__ import annotations

from auditor.replay import timeline
from auditor.replay.comparison import Comparison
from auditor.replay.measured import summarize
from auditor.replay.sim import SimRun, from_output
from auditor.replay.trace import Trace, TracedWorkload

GPU = "nvidia.com/gpu"
TRACE = Trace(
    cluster="gpu-prod",
    recorded={"source": "synthetic", "seconds": 3600},
    workloads=[
        TracedWorkload("team-a-train", "default", None, {GPU: "2"}, 1, 0.0, 1200.0),
        TracedWorkload("team-a-train", "default", None, {GPU: "1"}, 4, 100.0, 600.0),
        TracedWorkload("team-b-ml", "default", None, {GPU: "4"}, 1, 200.0, 900.0),
    ],
)


def sim_side(label: str, *, preempt: bool) -> SimRun:
    """Workload 0 runs 0..1200; 1 waits until 1200 (never, on a side that preempts); 2 is admitted
    at 200 and, where it preempts, evicts 0 at 600, which runs again from 1100."""
    zero = [{"kind": "admitted", "at": 0, "clusterQueue": "team-a"}]
    if preempt:
        zero += [
            {"kind": "preempted", "at": 600, "by": 2, "reason": "InCohortReclamation"},
            {"kind": "admitted", "at": 1100, "clusterQueue": "team-a"},
            {"kind": "finished", "at": 2300},
        ]
        one: list[dict[str, object]] = []
    else:
        zero += [{"kind": "finished", "at": 1200}]
        one = [
            {"kind": "admitted", "at": 1200, "clusterQueue": "team-a"},
            {"kind": "finished", "at": 1800},
        ]
    out = {
        "endSeconds": 3600,
        "workloads": [
            {"index": 0, "events": zero},
            {"index": 1, "events": one},
            {
                "index": 2,
                "events": [
                    {"kind": "admitted", "at": 200, "clusterQueue": "team-b"},
                    {"kind": "finished", "at": 1100},
                ],
            },
        ],
        "borrowedGpus": {},
    }
    return from_output(out, TRACE, label=label, revision=label)


TENANTS = {"team-a-train": "team-a", "team-b-ml": "team-b"}


def two_sided_timeline() -> timeline.Timeline:
    return timeline.build(
        {"base": sim_side("base", preempt=False), "head": sim_side("head", preempt=True)},
        TENANTS,
        TRACE.seconds,
    )


def comparison() -> Comparison:
    """The two sides as `plan replay` reports them, with their timeline."""
    base, head = sim_side("base", preempt=False), sim_side("head", preempt=True)
    return Comparison(
        "gpu-prod",
        1.0,
        len(TRACE.workloads),
        TRACE.seconds,
        summarize(base, TENANTS),
        summarize(head, TENANTS),
        kueue_version="v0.17.0",
        engine="sim",
        timeline=two_sided_timeline(),
        quota={  # team-a's a100 GPUs halved on the head
            side: [
                {"clusterQueue": "team-a", "cohort": "ai", "flavor": "a100", "nominal": a},
                {"clusterQueue": "team-a", "cohort": "ai", "flavor": "h100", "nominal": "2"},
                {"clusterQueue": "team-b", "cohort": "ai", "flavor": "a100", "nominal": "4"},
            ]
            for side, a in (("base", "4"), ("head", "2"))
        },
    )
