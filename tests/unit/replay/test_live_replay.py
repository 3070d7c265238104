"""`plan replay --live`'s pure parts: the cluster's Workloads merged with a trace's arrivals in
the simulation's order, and both revisions started from that one start, with waits counted from
it. The simulator process is faked here (it is run against the real Kueue in
tests/integration/test_live_replay.py)."""

from __future__ import annotations

import datetime as dt
import json
import typing as t
from pathlib import Path

import pytest

from auditor.replay import livestart, revisions, sim, stamp
from auditor.replay.trace import Trace, TracedWorkload
from auditor.report.replay import stamp_lines
from tests.integration.lab_estate import lab_estate
from tests.unit.conftest import Revisions

NOW = dt.datetime(2026, 12, 3, 12, 0, 0, tzinfo=dt.UTC)
ARRIVALS = [
    TracedWorkload("team-a", "batch", "high", {"nvidia.com/gpu": "1"}, 1, 0.0, 60.0),
    TracedWorkload("team-b", "batch", "low", {"nvidia.com/gpu": "2"}, 1, 600.0, 60.0),
]
TRACE = Trace("lab", {"source": "synthetic", "seconds": 900}, ARRIVALS)


def _wl(name: str, ns: str, created: str, reserved: str | None) -> dict[str, t.Any]:
    conds = (
        [{"type": "QuotaReserved", "status": "True", "lastTransitionTime": reserved}]
        if reserved
        else [{"type": "QuotaReserved", "status": "False", "lastTransitionTime": created}]
    )
    pod = {"containers": [{"resources": {"requests": {"nvidia.com/gpu": "2"}}}]}
    return {
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": created},
        "spec": {"queueName": "batch", "podSets": [{"name": "main", "count": 1,
                                                    "template": {"spec": pod}}]},
        "status": {"conditions": conds}
        | ({"admission": {"clusterQueue": f"{ns}-cq"}} if reserved else {}),
    }  # fmt: skip


LIVE = [
    _wl("waiting", "team-a", "2026-12-03T11:30:00Z", None),
    _wl("running", "team-b", "2026-12-03T11:00:00Z", "2026-12-03T11:40:00Z"),
]


def test_the_start_is_what_holds_quota_then_what_waits_then_the_traces_arrivals() -> None:
    start = livestart.from_live(LIVE, now=NOW, run_for=3600.0)
    merged = start.then(ARRIVALS, ["trace #0", "trace #1"])
    assert merged.names == ["team-b/running", "team-a/waiting", "trace #0", "trace #1"]
    assert (merged.held, merged.pending) == (1, 1)
    running, waiting, first, second = merged.workloads
    assert running["admission"] == {"clusterQueue": "team-b-cq"}
    assert (running["admittedAt"], running["runSeconds"]) == (-1200.0, 2400.0)
    assert (waiting["createdAt"], waiting["runSeconds"], waiting["submittedAt"]) == (
        -1800.0, 3600.0, 0.0)  # fmt: skip
    assert "createdAt" not in first and "admission" not in second
    assert second["submittedAt"] == 600.0  # the trace's seconds count from the start
    assert [w.submitted_at for w in merged.traced()] == [0.0, 0.0, 0.0, 600.0]
    assert start.names == ["team-b/running", "team-a/waiting"]  # the start itself is unchanged
    assert merged.summary() == {
        "readAt": "2026-12-03T12:00:00Z", "admitted": 1, "pending": 1, "arriving": 2,
        "runForSeconds": 3600.0,
    }  # fmt: skip


def _output(waiting_admitted_at: float | None) -> dict[str, t.Any]:
    """The simulator's answer: the running one held from the start, the waiting one admitted
    (or never), the arrivals admitted at once."""
    waiting = (
        [{"at": waiting_admitted_at, "kind": "admitted", "clusterQueue": "team-a-cq"}]
        if waiting_admitted_at is not None
        else []
    )
    return {
        "endSeconds": 4000.0,
        "kueueVersion": "v0.19.2",
        "borrowedGpus": {},
        "simulated": {},
        "workloads": [
            {"index": 0, "events": [{"at": 0.0, "kind": "admitted", "clusterQueue": "team-b-cq"},
                                    {"at": 2400.0, "kind": "finished"}]},
            {"index": 1, "events": waiting}
            | ({} if waiting else {"pendingReason": "insufficient quota"}),
            {"index": 2, "events": [{"at": 0.0, "kind": "admitted", "clusterQueue": "team-a-cq"}]},
            {"index": 3, "events": [{"at": 630.0, "kind": "admitted",
                                     "clusterQueue": "team-b-cq"}]},
        ],
    }  # fmt: skip


def test_both_revisions_start_from_the_one_live_start_and_waits_count_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    revs = Revisions(lab_estate(tmp_path, {"team-a": 2, "team-b": 4}))
    revs.commit("base")
    revs.edit("clusters/lab/clusterqueues.yaml", 'nominalQuota: "2"', 'nominalQuota: "4"')
    revs.commit("head: team-a gets 4 GPUs")
    from auditor.sandbox import kueuesim

    monkeypatch.setattr(kueuesim, "ensure_sim", lambda *_a, **_k: (Path("sim"), "v0.19.2"))
    seen: list[sim.SimSide] = []
    answers = {"base": _output(None), "head": _output(0.0)}

    def simulate(sides: list[sim.SimSide], trace: Trace, **_k: t.Any) -> dict[str, sim.SimRun]:
        seen.extend(sides)
        return {
            s.label: sim.from_output(answers[s.label], trace, label=s.label, revision=s.revision)
            for s in sides
        }

    monkeypatch.setattr(revisions, "simulate", simulate)
    start = livestart.from_live(LIVE, now=NOW, run_for=3600.0)
    got = revisions.plan_by_simulation(
        revs.root, "HEAD~1", "HEAD", "lab", TRACE, testenv=tmp_path, start=start
    )
    documents = {s.label: json.loads(s.document) for s in seen}
    assert documents["base"]["workloads"] == documents["head"]["workloads"]  # read once
    assert len(documents["head"]["workloads"]) == 4
    quotas = {
        label: [
            r["nominalQuota"]
            for o in doc["objects"]
            if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "team-a-cq"
            for r in o["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
            if r["name"] == "nvidia.com/gpu"
        ]
        for label, doc in documents.items()
    }
    assert quotas == {"base": ["2"], "head": ["4"]}  # each side its own revision's queues
    team_a, team_b = got.head.tenant("team-a"), got.head.tenant("team-b")
    # team-b's running Workload waited before the start: only the arrival's wait counts
    assert (team_b.workloads, team_b.admitted, team_b.wait_max) == (2, 1, 30.0)
    assert (team_a.admitted, team_a.wait_max) == (2, 0.0)
    assert got.base.tenant("team-a").never_admitted == 1
    assert got.flags() == []  # the head admits what the base leaves waiting
    replay = got.to_json()["replay"]
    assert replay["liveStart"]["pending"] == 1 and replay["workloads"] == 4
    assert replay["liveStart"]["atStart"] == {
        "base": {"admitted": ["trace #0"], "preempted": []},
        "head": {"admitted": ["team-a/waiting", "trace #0"], "preempted": []},
    }
    lines = stamp_lines(got)  # as the reports write them
    assert lines[0].startswith("started from lab's queues read at 2026-12-03T12:00:00Z")
    assert "head at the start: admits team-a/waiting, trace #0; preempts nothing" in lines
    assert (
        "assumed: run times: each Workload already on the cluster runs 3600 s from its admission "
        "(--run-for; not read from the cluster)"
    ) in lines
    assert f"assumed: {stamp.ON_QUOTA}" in lines  # once, though both sides assumed it


def test_a_workload_holding_quota_in_a_queue_the_revision_removes_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    revs = Revisions(lab_estate(tmp_path, {"team-a": 2}))
    revs.commit("only team-a")
    from auditor.errors import ConfigError
    from auditor.sandbox import kueuesim

    monkeypatch.setattr(kueuesim, "ensure_sim", lambda *_a, **_k: (Path("sim"), "v0.19.2"))
    start = livestart.from_live(LIVE, now=NOW, run_for=3600.0)
    with pytest.raises(ConfigError, match="team-b/running holds quota in ClusterQueue team-b-cq"):
        revisions.plan_by_simulation(
            revs.root, "HEAD", "HEAD", "lab", TRACE, testenv=tmp_path, start=start
        )


def test_with_an_empty_trace_both_revisions_drain_todays_queues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    revs = Revisions(lab_estate(tmp_path, {"team-a": 2, "team-b": 4}))
    revs.commit("base")
    from auditor.sandbox import kueuesim

    monkeypatch.setattr(kueuesim, "ensure_sim", lambda *_a, **_k: (Path("sim"), "v0.19.2"))
    answer = _output(1800.0)
    answer["workloads"] = answer["workloads"][:2]  # no arrivals

    def simulate(sides: list[sim.SimSide], trace: Trace, **_k: t.Any) -> dict[str, sim.SimRun]:
        assert all(len(json.loads(s.document)["workloads"]) == 2 for s in sides)
        return {
            s.label: sim.from_output(answer, trace, label=s.label, revision=s.revision)
            for s in sides
        }

    monkeypatch.setattr(revisions, "simulate", simulate)
    empty = Trace("lab", {"source": "synthetic", "seconds": 0}, [])
    got = revisions.plan_by_simulation(
        revs.root, "HEAD", "HEAD", "lab", empty, testenv=tmp_path,
        start=livestart.from_live(LIVE, now=NOW, run_for=3600.0),
    )  # fmt: skip
    assert got.head.tenant("team-a").wait_max == 1800.0  # the waiting one, from the start
    assert got.to_json()["replay"]["liveStart"]["arriving"] == 0
    assert got.timeline is not None and got.timeline.to_json()["times"][-1] >= 2400.0
