"""The sweep's pure parts: the grid file read (and refused with its file and entry), a point's
change from the revision, the frontier."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.k8s.quantity import parse
from auditor.replay import capacity, sweep
from auditor.replay.sim import SimRun, from_output
from auditor.replay.trace import Trace, TracedWorkload

CQ = {
    "kind": "ClusterQueue",
    "metadata": {"name": "team-a-cq"},
    "spec": {
        "preemption": {"reclaimWithinCohort": "Any"},
        "resourceGroups": [
            {
                "flavors": [
                    {"name": "a100", "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "4"}]}
                ]
            }
        ],
    },
}
QUOTA = sweep.Axis(
    "ClusterQueue", "team-a-cq", "nominalQuota", ("2", "6"), "a100", "nvidia.com/gpu"
)
POLICY = sweep.Axis("ClusterQueue", "team-a-cq", "preemption.reclaimWithinCohort", ("Never",))


def test_a_point_changes_the_revisions_objects_and_only_a_copy() -> None:
    objects = [CQ]
    out = sweep.applied(objects, [QUOTA, POLICY], ("6", "Never"))
    assert sweep.current(out, QUOTA) == "6" and sweep.current(out, POLICY) == "Never"
    assert sweep.current(objects, QUOTA) == "4"


def test_a_changes_size_is_how_far_each_value_moved() -> None:
    assert sweep.distance("4", "6") == 2.0
    assert sweep.distance("64Gi", "64Gi") == 0.0
    assert sweep.distance("Any", "Never") == 1.0


def test_the_frontier_keeps_points_no_other_beats_in_change_wait_and_preemptions() -> None:
    points = [
        sweep.Point(("a",), 0.0, 900.0, 5, 0, 0),
        sweep.Point(("b",), 1.0, 300.0, 5, 0, 0),
        sweep.Point(("c",), 2.0, 300.0, 5, 0, 0),  # as good as b, but a bigger change
        sweep.Point(("d",), 2.0, 600.0, 0, 0, 0),
    ]
    sweep.mark_frontier(points)
    assert [p.values[0] for p in points if p.frontier] == ["a", "b", "d"]


ONE_AXIS = "grid:\n  - clusterQueue: q\n    field: x\n    values: [1]\n"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("grid: []\n", "a list of axes"),
        ("grid:\n  - clusterQueue: q\n    field: nominalQuota\n    values: [1]\n", "flavor and"),
        ("grid:\n  - clusterQueue: q\n    field: x\n    values: []\n", "non-empty"),
        (ONE_AXIS + "target: {p95WaitSeconds: 9}\n", "needs target.tenant"),
    ],
)
def test_a_bad_grid_file_is_refused_naming_it(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "grid.yaml").write_text(text)
    with pytest.raises(ConfigError, match=said) as caught:
        sweep.read_spec(tmp_path / "grid.yaml")
    assert "grid.yaml" in str(caught.value)


def test_a_quota_cell_the_queue_lacks_is_named() -> None:
    missing = sweep.Axis(
        "ClusterQueue", "team-a-cq", "nominalQuota", ("1",), "h100", "nvidia.com/gpu"
    )
    with pytest.raises(ConfigError, match=r"no quota for h100/nvidia\.com/gpu"):
        sweep.applied([CQ], [missing], ("1",))


WORK = Trace(
    "lab",
    {"seconds": 3600.0},
    [
        TracedWorkload("team-a", "batch", None, {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0),
        TracedWorkload("team-a", "batch", None, {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0),
        TracedWorkload("team-c", "batch", None, {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0),
    ],
)
ELSEWHERE = "Workload namespace doesn't match ClusterQueue selector"


def run(admitted: dict[int, float]) -> SimRun:
    """A simulated day as the simulator says it: `admitted` index -> when; the rest pending,
    team-c's for a namespace no ClusterQueue selects."""
    records = [
        {"index": i, "events": [{"kind": "admitted", "at": admitted[i], "clusterQueue": "a"}]}
        if i in admitted
        else {"index": i, "events": [], "pendingReason": ELSEWHERE if i == 2 else "quota"}
        for i in range(len(WORK.workloads))
    ]
    out = {"endSeconds": 3600.0, "workloads": records, "borrowedGpus": {}}
    return from_output(out, WORK, label="point", revision="r")


def test_workloads_no_point_admits_are_apart_with_why_and_not_held_against_the_target() -> None:
    small, big = [run({0: 0.0})], [run({0: 0.0, 1: 600.0})]  # team-c's admitted by neither
    never = sweep.never_anywhere([small, big])
    assert never == [{2}]
    assert sweep.apart([small, big], never) == [sweep.Apart("team-c", "batch", 1, ELSEWHERE)]
    target = sweep.Target(tenant="team-a", p95_wait=900.0)
    tenants = {"team-a": "team-a", "team-c": "team-c"}
    at_big = sweep._point(("4",), 2.0, big, never, tenants, target)
    assert (at_big.never_admitted, at_big.meets) == (0, True)
    at_small = sweep._point(("2",), 0.0, small, never, tenants, target)
    assert (at_small.never_admitted, at_small.meets) == (1, False)  # team-a's second waits


FLAVOR = {
    "kind": "ResourceFlavor",
    "metadata": {"name": "a100"},
    "spec": {"nodeLabels": {"pool": "gpu"}},
}


def node(gpus: str, ready: str = "True") -> dict[str, object]:
    return {
        "metadata": {"labels": {"pool": "gpu"}},
        "status": {
            "allocatable": {"nvidia.com/gpu": gpus},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def test_a_points_quota_beyond_what_the_nodes_hold_is_over_capacity() -> None:
    profile = capacity.Capacity("profile", lambda f, r: parse("5"))
    at_six = sweep.applied([CQ], [QUOTA], ("6",))
    assert profile.over(at_six) == ("a100/nvidia.com/gpu 6 > 5",)
    assert profile.over(sweep.applied([CQ], [QUOTA], ("2",))) == ()
    # live: the Ready nodes the flavor selects (the not-ready one does not count)
    live = capacity.node_capacity("lab", [FLAVOR, CQ], [node("4"), node("8", ready="False")])
    assert live.source == "the 1 Ready node(s) of lab, read live"
    assert live.over([FLAVOR, *at_six]) == ("a100/nvidia.com/gpu 6 > 4",)


def test_an_infeasible_point_never_meets_and_is_never_on_the_frontier() -> None:
    target = sweep.Target(tenant="team-a", p95_wait=900.0)
    fits = sweep.Point(("4",), 0.0, 600.0, 0, 0, 0)
    beyond = sweep.Point(("6",), 2.0, 0.0, 0, 0, 0, over=("a100/nvidia.com/gpu 6 > 5",))
    points = [fits, beyond]
    for p in points:
        p.meets = sweep.meets(p, target)
    sweep.mark_frontier(points)
    assert (fits.meets, fits.frontier) == (True, True)
    assert (beyond.meets, beyond.frontier) == (False, False)


def chosen(points: list[sweep.Point]) -> sweep.Point | None:
    """The sweep's recommendation among `points`."""
    return sweep.Sweep("lab", "r", "v0.19.2", [QUOTA], ["4"], sweep.Target(), 0, points).best


def test_the_recommendation_is_the_smallest_change_on_the_frontier_ties_to_the_shorter_wait() -> (
    None
):
    """Two changes of size 1 both meet the target; the grid's first waits longer, so the other
    beats it in every way: it is the recommendation, and on the frontier."""
    target = sweep.Target(tenant="team-a", p95_wait=900.0)
    points = [
        sweep.Point(("2", "Never"), 0.0, 1800.0, 0, 0, 0),
        sweep.Point(("3", "Never"), 1.0, 800.0, 0, 0, 0),  # the grid's first of size 1
        sweep.Point(("2", "Any"), 1.0, 300.0, 0, 0, 0),  # same size, shorter wait
        sweep.Point(("4", "Never"), 2.0, 100.0, 0, 0, 0),
        sweep.Point(("3", "Any"), 2.0, 0.0, 0, 1, 0),  # shortest wait, but a livelock
    ]
    for p in points:
        p.meets = sweep.meets(p, target)
    sweep.mark_frontier(points)
    best = chosen(points)
    assert best is not None and best.values == ("2", "Any") and best.frontier
    assert "shortest p95 wait" in sweep.Sweep.chosen_as


def test_a_point_failing_the_target_does_not_push_the_recommendation_off_the_frontier() -> None:
    """A point as small and faster but with a livelock fails the target; the one that meets it
    stays on the frontier."""
    target = sweep.Target(tenant="team-a", p95_wait=900.0)
    meets = sweep.Point(("3",), 1.0, 600.0, 0, 0, 0)
    loops = sweep.Point(("4",), 1.0, 500.0, 0, 2, 0)
    points = [loops, meets]
    for p in points:
        p.meets = sweep.meets(p, target)
    sweep.mark_frontier(points)
    assert chosen(points) is meets and meets.frontier


def test_when_only_more_nodes_would_meet_the_target_the_finding_says_so() -> None:
    target = sweep.Target(tenant="team-a", p95_wait=900.0)
    slow = sweep.Point(("4",), 0.0, 1800.0, 0, 0, 0)
    beyond = sweep.Point(("6",), 2.0, 300.0, 0, 0, 0, over=("a100/nvidia.com/gpu 6 > 5",))
    for p in (slow, beyond):
        p.meets = sweep.meets(p, target)
    result = sweep.Sweep("lab", "r", "v0.19.2", [QUOTA], ["4"], target, 0, [slow, beyond])
    result.capacity = "the capacity clusters/lab/profile.yaml declares"
    [finding] = result.findings()
    assert finding.message.endswith(
        "; 1 would on more nodes than the capacity clusters/lab/profile.yaml declares holds"
    )
