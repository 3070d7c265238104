"""A simulated day that leaves work waiting says so: how many Workloads still wait for quota at
the trace's end, and the backlog's size over the day (its peak, when, and its mean)."""

from __future__ import annotations

import io
import json
import typing as t

from auditor.replay.comparison import Comparison
from auditor.replay.measured import summarize
from auditor.replay.sim import from_output
from auditor.replay.trace import Trace, TracedWorkload
from auditor.report import replay as report_replay

DAY = 100.0
TENANTS = {"team-a": "team-a"}


def _trace(n: int) -> Trace:
    one = TracedWorkload("team-a", "batch", "batch-low", {"nvidia.com/gpu": "1"}, 1, 0.0, 50.0)
    return Trace("c", {"source": "synthetic", "seconds": DAY, "seed": 0}, [one] * n)


def _record(i: int, *events: tuple[float, str]) -> dict[str, t.Any]:
    return {
        "index": i,
        "priority": 0,
        "events": [
            {"at": at, "kind": kind} | ({"clusterQueue": "a-cq"} if kind == "admitted" else {})
            for at, kind in events
        ],
    }


def _output(records: list[dict[str, t.Any]], end: float) -> dict[str, t.Any]:
    return {"workloads": records, "borrowedGpus": {}, "endSeconds": end, "cycles": 1,
            "stalledAt": [], "livelockAt": [], "simulated": {}}  # fmt: skip


def test_work_still_waiting_at_the_days_end_is_a_standing_backlog_in_every_format() -> None:
    # Four submitted at 0: one runs 0-50 and finishes; one waits until 50, runs, is preempted
    # at 60 and readmitted at 120 (after the day); one is admitted only after the day, and one
    # still waits when the simulation stops at 250.
    second = [(50.0, "admitted"), (60.0, "preempted"), (120.0, "admitted"), (170.0, "finished")]
    records = [
        _record(0, (0.0, "admitted"), (50.0, "finished")),
        _record(1, *second),
        _record(2, (200.0, "admitted"), (250.0, "finished")),
        _record(3),
    ]
    trace = _trace(4)
    run = from_output(_output(records, 250.0), trace, label="head", revision="h")
    side = summarize(run, TENANTS, span=trace.seconds)
    assert side.backlog is not None
    # Waiting: 3 over [0, 50), 2 over [50, 60), 3 from 60 to the day's end.
    assert (side.backlog.at_end, side.backlog.peak, side.backlog.peak_at) == (3, 3, 0.0)
    assert side.backlog.mean == (3 * 50 + 2 * 10 + 3 * 40) / DAY

    ran = [_record(i, (0.0, "admitted"), (50.0, "finished")) for i in range(4)]
    clear = summarize(
        from_output(_output(ran, 50.0), trace, label="base", revision="b"),
        TENANTS,
        span=trace.seconds,
    )
    assert clear.backlog is not None and clear.backlog.at_end == 0
    c = Comparison("c", 1.0, 4, trace.seconds, clear, side, engine="sim")
    text = io.StringIO()
    report_replay.text(c, text)
    line = (
        "head: a standing backlog: 3 Workload(s) still pending at the trace's end (100s); "
        "pending peaked at 3 (0s in) and averaged 3 over the trace; 1 still waited when the "
        "simulation stopped, 2.5m after the trace's end (counted never admitted)"
    )
    assert line in text.getvalue()
    assert "base: a standing backlog" not in text.getvalue()
    md = io.StringIO()
    report_replay.markdown(c, md)
    assert line in md.getvalue()
    doc = json.loads(json.dumps(c.replay_json()))
    assert doc["head"]["backlog"] == {
        "pendingAtEnd": 3, "peak": 3, "peakAtSeconds": 0.0, "meanPending": 2.9,
        "stoppedAtSeconds": 250.0, "pendingAtStop": 1,
    }  # fmt: skip
    assert doc["head"]["tenants"][0]["neverAdmitted"] == 1
    assert doc["base"]["backlog"]["pendingAtEnd"] == 0
