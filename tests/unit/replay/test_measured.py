"""Replay metrics from what a side saw, and the base → head report, without a sandbox."""

from __future__ import annotations

import io
import json

from auditor.replay.comparison import Comparison
from auditor.replay.measured import combine, percentile, summarize
from auditor.replay.run import Observed, SideRun, borrowed_gpus, observe
from auditor.replay.trace import TracedWorkload
from auditor.report import replay as report_replay

SPEED = 60.0


def traced(ns: str, gpus: int = 1) -> TracedWorkload:
    return TracedWorkload(ns, "batch", "batch-low", {"nvidia.com/gpu": str(gpus)}, 1, 0.0, 600.0)


def seen(i: int, ns: str, submitted: float, admitted: float | None, **kw: object) -> Observed:
    o = Observed(i, traced(ns), submitted=submitted, admitted=admitted, **kw)  # type: ignore[arg-type]
    o.cluster_queue = f"{ns}-cq" if admitted is not None else None
    o.finished = admitted + 10 if admitted is not None else None
    return o


def side(label: str, waits_a: list[float], borrowed_a: list[float], **extra: object) -> SideRun:
    workloads = [seen(i, "team-a", 0.0, w) for i, w in enumerate(waits_a)]
    workloads.append(seen(99, "team-b", 1.0, 2.0, preemptions=2,
                          preemption_reasons={"InCohortReclamation": 2}))  # fmt: skip
    series = [(float(i), b) for i, b in enumerate(borrowed_a)]
    return SideRun(
        label, f"{label}-rev", SPEED, workloads,
        {"team-a-cq": series, "team-b-cq": [(float(i), 0.0) for i in range(len(series))]},
        seconds=40.0, sandbox_seconds=20.0, **extra,  # type: ignore[arg-type]
    )  # fmt: skip


TENANTS = {"team-a": "team-a", "team-b": "team-b"}


def test_nearest_rank_percentiles() -> None:
    assert percentile([], 95) is None
    assert percentile([5.0], 50) == 5.0
    values = [float(v) for v in range(1, 21)]
    assert (percentile(values, 50), percentile(values, 95), percentile(values, 100)) == (
        10.0, 19.0, 20.0,
    )  # fmt: skip


def test_waits_are_in_trace_seconds_and_borrowing_is_time_weighted() -> None:
    got = summarize(side("base", [1.0, 2.0, 3.0, 4.0], [0, 2, 2, 0, 0]), TENANTS)
    a = got.tenant("team-a")
    assert (a.workloads, a.admitted, a.wait_p50, a.wait_p95, a.wait_max) == (
        4, 4, 120.0, 240.0, 240.0,
    )  # fmt: skip
    assert (a.borrowing_peak, a.borrowing_mean) == (2.0, 1.0)  # 2 GPUs for 2 of 4 seconds
    b = got.tenant("team-b")
    assert (b.preemptions, b.preemption_reasons) == (2, {"InCohortReclamation": 2})
    assert got.cluster_queue("team-a-cq").borrowing_peak == 2.0
    assert got.preemptions == 2


def test_gpu_hours_come_from_what_was_held() -> None:
    run = side("base", [1.0], [0])
    run.workloads[0].gpu_seconds = 60.0  # one GPU for a real minute: an hour at 60x
    assert summarize(run, TENANTS).tenant("team-a").gpu_hours == 1.0


def test_a_p95_rise_past_the_threshold_is_flagged() -> None:
    base = summarize(side("base", [1.0] * 18 + [2.0, 2.0], [0, 0]), TENANTS)
    slower = summarize(side("head", [1.0] * 18 + [30.0, 30.0], [0, 1]), TENANTS)
    c = Comparison("gpu-staging", SPEED, 21, 3600.0, base, slower)
    [flag] = c.flags()
    assert (flag.tenant, flag.kind, flag.base, flag.head) == (
        "team-a", "wait-p95-rises", 120.0, 1800.0,
    )  # fmt: skip
    [finding] = c.findings()  # the flag is a catalogued rule's finding: Report.exit_code counts it
    assert (finding.rule.id, str(finding.severity)) == ("replay-wait-rises", "error")


def test_small_differences_within_the_tolerance_are_not_flagged() -> None:
    base = summarize(side("base", [1.0, 2.0, 3.0], [0]), TENANTS)
    head = summarize(side("head", [1.0, 2.0, 5.0], [0]), TENANTS)  # +120 trace seconds
    assert Comparison("c", SPEED, 4, 3600.0, base, head).flags() == []


def test_never_admitted_is_flagged_when_the_head_leaves_work_waiting() -> None:
    base = summarize(side("base", [1.0, 1.0], [0]), TENANTS)
    head_run = side("head", [1.0], [0])
    head_run.workloads.append(seen(50, "team-a", 0.0, None))
    head = summarize(head_run, TENANTS)
    c = Comparison("c", SPEED, 3, 3600.0, base, head)
    assert [(f.tenant, f.kind, f.head) for f in c.flags()] == [("team-a", "never-admitted", 1)]
    assert [f.rule.id for f in c.findings()] == ["replay-never-admitted"]
    assert head.tenant("team-a").never_admitted == 1


def test_never_admitted_on_both_sides_is_still_a_finding_about_the_head() -> None:
    base_run, head_run = side("base", [], [0]), side("head", [], [0])
    for run in (base_run, head_run):  # every Workload of team-a waits to the end, on each side
        run.workloads += [seen(50 + i, "team-a", 0.0, None) for i in range(3)]
    c = Comparison(
        "c", SPEED, 4, 3600.0, summarize(base_run, TENANTS), summarize(head_run, TENANTS)
    )
    [finding] = c.findings()
    assert finding.rule.id == "replay-never-admitted" and str(finding.severity) == "error"
    assert finding.message == "team-a: 3 Workload(s) never admitted (base: 3 never admitted either)"


def test_reports_show_base_to_head_what_is_simulated_and_a_chart() -> None:
    base = summarize(side("base", [1.0, 2.0], [0, 1]), TENANTS)
    head = summarize(side("head", [1.0, 20.0], [0, 2]), TENANTS)
    c = Comparison("gpu-staging", SPEED, 3, 3600.0, base, head, kueue_version="v0.17.0")
    out = io.StringIO()
    report_replay.text(c, out)
    txt = out.getvalue()
    assert "2.0m → 20.0m" in txt  # p95 (and max) of team-a
    assert "! team-a: p95 admission wait rises from 2.0m to 20.0m" in txt
    assert "Simulated: the nodes" in txt and "Real: Kueue's scheduler" in txt
    md = io.StringIO()
    report_replay.markdown(c, md)
    body = md.getvalue()
    assert body.startswith(report_replay.marker("gpu-staging") + "\n### ❌ Plan by replay")
    assert "| team-a | 60s | 2.0m → 20.0m | 2.0m → 20.0m | 0.0 | 1 → 2 | 0.00 | 0 | 0 |\n" in body
    assert '"team-a base", "team-a head"' in body and "    bar [2.0, 20.0, 1.0, 1.0]" in body
    doc = json.loads(json.dumps(c.to_json()))["replay"]  # the report's replay section
    assert doc["head"]["tenants"][0]["waitSeconds"] == {"p50": 60.0, "p95": 1200.0, "max": 1200.0}
    assert doc["flags"] == [
        {
            "tenant": "team-a",
            "kind": "wait-p95-rises",
            "rule": "replay-wait-rises",
            "base": 120.0,
            "head": 1200.0,
        }
    ]


def test_several_replays_of_a_side_report_medians_and_the_p95_range() -> None:
    runs = [summarize(side("base", waits, [0, 1]), TENANTS) for waits in ([1.0], [3.0], [2.0])]
    got = combine(runs)
    a = got.tenant("team-a")
    assert (a.wait_p95, a.p95_range, a.borrowing_peak) == (120.0, (60.0, 180.0), 1.0)
    assert got.tenant("team-b").preemption_reasons == {"InCohortReclamation": 2}
    assert (got.replay_seconds, len(got.runs)) == (120.0, 3)
    doc = got.to_json()
    assert doc["replays"] == 3 and len(doc["runs"]) == 3
    assert doc["tenants"][0]["waitSeconds"]["p95Range"] == [60.0, 180.0]
    assert combine(runs[:1]) is runs[0] and "runs" not in runs[0].to_json()


def test_with_several_replays_a_rise_is_flagged_only_when_the_ranges_part() -> None:
    def replays(label: str, *slowest: float) -> list[SideRun]:
        return [side(label, [1.0] * 18 + [s, s], [0]) for s in slowest]

    base = combine([summarize(r, TENANTS) for r in replays("base", 2.0, 20.0)])
    overlapping = combine([summarize(r, TENANTS) for r in replays("head", 15.0, 30.0)])
    assert Comparison("c", SPEED, 21, 3600.0, base, overlapping).flags() == []
    apart = combine([summarize(r, TENANTS) for r in replays("head", 25.0, 30.0)])
    [flag] = Comparison("c", SPEED, 21, 3600.0, base, apart).flags()
    assert (flag.tenant, flag.base, flag.head) == ("team-a", 660.0, 1650.0)
    out = io.StringIO()
    report_replay.text(Comparison("c", SPEED, 21, 3600.0, base, apart), out)
    assert "11.0m (2.0m..20.0m) → 27.5m (25.0m..30.0m)" in out.getvalue()
    assert "2 times per side" in out.getvalue()


def test_observe_reads_admission_preemptions_and_the_end_from_the_workload() -> None:
    o = Observed(0, traced("team-a", gpus=2), submitted=0.0)
    cause = {"underlyingCause": ""}  # as Kueue v0.17 writes it for a preemption
    wl = {
        "metadata": {"name": "w"},
        "status": {
            "conditions": [{"type": "QuotaReserved", "status": "True"}],
            "admission": {
                "clusterQueue": "team-a-cq",
                "podSetAssignments": [
                    {
                        "flavors": {"nvidia.com/gpu": "a100"},
                        "resourceUsage": {"nvidia.com/gpu": "2"},
                    }
                ],
            },
        },
    }
    observe(o, wl, 1.0, 0.25)
    assert (o.admitted, o.cluster_queue, o.gpu_seconds) == (1.0, "team-a-cq", 0.5)
    wl["status"] = {
        "conditions": [
            {"type": "Evicted", "status": "True", "reason": "Preempted"},
            {"type": "Preempted", "status": "True", "reason": "InCohortReclamation"},
        ],
        "schedulingStats": {"evictions": [{"reason": "Preempted", "count": 1, **cause}]},
    }
    observe(o, wl, 1.25, 0.25)
    observe(o, wl, 1.5, 0.25)  # the same eviction read again is not another one
    assert (o.preemptions, o.preemption_reasons) == (1, {"InCohortReclamation": 1})
    # Preempted again and re-admitted between two reads: Kueue's count still has it, by cause.
    wl["status"] = {
        "conditions": [{"type": "Finished", "status": "True", "reason": "Succeeded"}],
        "schedulingStats": {"evictions": [{"reason": "Preempted", "count": 2, **cause}]},
    }
    observe(o, wl, 9.0, 0.25)
    assert (o.finished, o.finished_reason, o.admitted) == (9.0, "Succeeded", 1.0)
    assert (o.preemptions, o.preemption_reasons) == (2, {"InCohortReclamation": 1, "unseen": 1})
    # what the timeline reads: quota held from the first read to the eviction's; preemptions
    # at the reads that saw them (the unseen one too)
    assert o.held == [(1.0, 1.25)] and o.preempted_at == [1.25, 9.0]


def test_borrowed_gpus_add_up_over_flavors() -> None:
    gpu = "nvidia.com/gpu"
    a100 = [{"name": gpu, "total": "6", "borrowed": "2"}]
    h100 = [{"name": gpu, "total": "1", "borrowed": "1"}, {"name": "cpu", "borrowed": "5"}]
    cq = {
        "status": {
            "flavorsReservation": [
                {"name": "a100", "resources": a100},
                {"name": "h100", "resources": h100},
            ]
        }
    }
    assert borrowed_gpus(cq) == 3.0
