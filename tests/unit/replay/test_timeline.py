"""The replay's day as data: what the simulator said each Workload did, sampled per LocalQueue and
side, and written as CSV or JSON Lines for a team's notebook."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.model import ClusterResult, Report
from auditor.replay import timeline
from auditor.report import REPORTER_BY_NAME, contract
from auditor.report import replay as report_replay
from tests.unit.replay.comparisons import TENANTS, comparison, sim_side, two_sided_timeline


def _series(t: timeline.Timeline, side: str, queue: str) -> timeline.Series:
    return next(s for s in t.series if s.side == side and s.queue == queue)


def test_a_day_is_sampled_every_minute_on_one_axis_for_both_sides() -> None:
    t = two_sided_timeline()
    assert t.step == 60.0
    assert t.times[0] == 0.0 and t.times[-1] == 3600.0
    assert {(s.side, s.queue, s.tenant) for s in t.series} == {
        ("base", "team-a-train/default", "team-a"),
        ("base", "team-b-ml/default", "team-b"),
        ("head", "team-a-train/default", "team-a"),
        ("head", "team-b-ml/default", "team-b"),
    }


def test_running_pending_and_gpus_follow_what_held_quota() -> None:
    t = two_sided_timeline()
    base_a = _series(t, "base", "team-a-train/default")
    at = {v: i for i, v in enumerate(t.times)}
    # 0 holds 2 GPUs from 0 to 1200; 1 (4 GPUs) waits from 100 and runs 1200..1800

    def state(i: int) -> tuple[int, int, float]:
        return base_a.running[i], base_a.pending[i], base_a.gpus[i]

    assert state(at[60]) == (1, 0, 2.0)
    assert state(at[600]) == (1, 1, 2.0)
    assert state(at[1200]) == (1, 0, 4.0)
    assert (base_a.running[at[1800]], base_a.pending[at[1800]]) == (0, 0)
    assert base_a.admitted[at[1200]] == 1 and sum(base_a.admitted) == 2


def test_a_preemption_is_counted_on_its_victim_with_its_preemptor() -> None:
    t = two_sided_timeline()
    head_a = _series(t, "head", "team-a-train/default")
    at = {v: i for i, v in enumerate(t.times)}
    assert head_a.preempted[at[600]] == 1 and sum(head_a.preempted) == 1
    assert head_a.running[at[600]] == 0 and head_a.pending[at[600]] == 2  # 0 evicted, 1 waits
    assert head_a.running[at[1140]] == 1 and head_a.gpus[at[1140]] == 2.0  # 0 readmitted at 1100
    assert t.preemptions == {("head", 600.0, "team-b", "team-a"): 1}
    assert t.gpus_by_tenant("head")["team-b"][at[600]] == 4.0


def test_waits_are_a_distribution_with_the_never_admitted_apart() -> None:
    t = two_sided_timeline()
    labels = list(timeline.WAIT_LABELS)
    # base: team-a waited 0 s and 1100 s (15-60m); head: 0 s, and one never admitted
    assert t.waits["base"]["team-a"][labels.index("< 1m")] == 1
    assert t.waits["base"]["team-a"][labels.index("15-60m")] == 1
    assert t.waits["head"]["team-a"][labels.index("never")] == 1


def test_a_longer_day_takes_longer_steps_and_runs_past_the_trace_are_kept() -> None:
    assert timeline.step_for(86400) == 300.0
    assert timeline.step_for(3600) == 60.0
    assert timeline.step_for(7 * 86400) == 3600.0
    sides = {"base": sim_side("base", preempt=False), "head": sim_side("head", preempt=True)}
    short = timeline.build(sides, TENANTS, 1000.0)
    assert short.times[-1] == 2340.0  # the head's rerun holds quota until 2300
    assert _series(short, "head", "team-a-train/default").running[-1] == 0


def test_csv_and_json_lines_hold_the_same_rows(tmp_path: Path) -> None:
    t = two_sided_timeline()
    timeline.write(t, tmp_path / "day.csv")
    timeline.write(t, tmp_path / "day.jsonl")
    with (tmp_path / "day.csv").open() as f:
        rows = list(csv.DictReader(f))
    lines = [json.loads(line) for line in (tmp_path / "day.jsonl").read_text().splitlines()]
    assert list(rows[0]) == list(timeline.COLUMNS) == list(lines[0])
    assert len(rows) == len(lines) == 4 * len(t.times)
    assert [{k: str(v) for k, v in row.items()} for row in lines] == rows
    assert {r["side"] for r in lines} == {"base", "head"}


def test_a_file_of_another_kind_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"day\.xlsx.*\.csv or \.jsonl"):
        timeline.format_of(tmp_path / "day.xlsx")


def test_the_report_carries_the_timeline_within_its_contract() -> None:
    report = Report("plan", clusters=[ClusterResult("gpu-prod")], section=comparison())
    out = io.StringIO()
    REPORTER_BY_NAME["json"](report, out)
    doc = json.loads(out.getvalue())
    assert contract.problems(doc) == []
    day = doc["replay"]["timeline"]
    assert day["stepSeconds"] == 60.0 and len(day["times"]) == len(two_sided_timeline().times)
    assert {"side": "head", "at": 600.0, "preemptor": "team-b", "victim": "team-a", "count": 1} in (
        day["preemptions"]
    )


def test_the_pull_request_comment_draws_the_day_from_the_same_timeline() -> None:
    out = io.StringIO()
    REPORTER_BY_NAME["markdown"](
        Report("plan", clusters=[ClusterResult("gpu-prod")], section=comparison()), out
    )
    body = out.getvalue()
    day = body[body.index('title "GPUs in use per tenant') :]
    lines = [line.strip() for line in day.splitlines() if line.strip().startswith("line [")]
    t = two_sided_timeline()
    every = -(-len(t.times) // report_replay.DAY_POINTS)  # 61 samples: every second one
    expected = [g[::every] for side in ("base", "head") for g in t.gpus_by_tenant(side).values()]
    assert lines == [f"line [{', '.join(f'{v:g}' for v in g)}]" for g in expected]
    assert "_Lines, in order: team-a base, team-b base, team-a head, team-b head._" in day
    assert "xychart-beta" in body and "-o html" in body
