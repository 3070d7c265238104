"""What a replay measured, per tenant and per ClusterQueue, in trace time (what base against
head makes of it: auditor/replay/comparison.py).

Waits are from a Job's creation to the first time its Workload held quota, times the speed (so
in the trace's seconds); percentiles are nearest-rank over the Workloads that were admitted.
GPU-hours: GPUs held times the time held, evictions and all. Borrowing is what Kueue reports in
the ClusterQueue status (flavorsReservation[].resources[nvidia.com/gpu].borrowed), sampled with
each read: the peak, and the mean over the replay. Preemptions are counted on the victims, with
Kueue's reason (its Preempted condition: InClusterQueue, InCohortReclamation, ...).

Replayed more than once (`--repeat`), a side reports each number's median over its replays and
the range of the p95 waits (a rise is flagged only when the ranges do not overlap).
"""

from __future__ import annotations

import itertools
import math
import statistics
import typing as t

from auditor.replay.run import Observed, SideRun
from auditor.replay.sides import Backlog, Group, Side
from auditor.replay.sim import SimRun, loops, peak_hour


def percentile(values: t.Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def hold_overhead(seen: t.Iterable[Observed], speed: float) -> float | None:
    """Median real seconds a Workload held its quota beyond its compressed run time (never
    preempted ones): the unsuspend, scheduling, kwok and job-completion latencies, which the
    speed turns into trace time."""
    extra = [
        s.finished - s.admitted - s.traced.run_seconds / speed
        for s in seen
        if s.finished is not None and s.admitted is not None and not s.preemptions
    ]
    return percentile(extra, 50)


def _series_stats(series: list[tuple[float, float]]) -> tuple[float, float]:
    """Peak, and time-weighted mean, of (seconds, value) samples."""
    if not series:
        return 0.0, 0.0
    peak = max(v for _, v in series)
    span = series[-1][0] - series[0][0]
    if span <= 0:
        return peak, series[-1][1]
    area = sum(v * (t1 - t0) for (t0, v), (t1, _) in itertools.pairwise(series))
    return peak, area / span


def _summed(series: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """Several queues' series read at the same moments, added up."""
    if not series:
        return []
    return [(at, sum(s[i][1] for s in series)) for i, (at, _) in enumerate(series[0])]


def _group(
    name: str, seen: list[Observed], speed: float, borrowed: list[tuple[float, float]]
) -> Group:
    waits = [
        (s.admitted - s.submitted) * speed
        for s in seen
        if s.admitted is not None and s.submitted is not None and not s.held_at_start
    ]
    peak, mean = _series_stats(borrowed)
    reasons: dict[str, int] = {}
    for s in seen:
        for why, n in s.preemption_reasons.items():
            reasons[why] = reasons.get(why, 0) + n
    return Group(
        name=name,
        workloads=len(seen),
        admitted=len(waits),
        wait_p50=percentile(waits, 50),
        wait_p95=percentile(waits, 95),
        wait_max=max(waits, default=None),
        gpu_hours=sum(s.gpu_seconds for s in seen) * speed / 3600,
        borrowing_peak=peak,
        borrowing_mean=mean,
        preemptions=sum(s.preemptions for s in seen),
        preemption_reasons=reasons,
        never_admitted=sum(s.admitted is None for s in seen),
    )


def backlog(seen: t.Sequence[Observed], span: float, stopped: float | None = None) -> Backlog:
    """How many of `seen` waited for quota over [0, span] (trace seconds), and at `stopped`
    (the simulation's end): each waits from its submission to its first admission, and again
    from each eviction to its readmission."""
    changes: dict[float, int] = {}
    for s in seen:
        if s.submitted is None or s.rejected:  # never reached Kueue's queues
            continue
        changes[s.submitted] = changes.get(s.submitted, 0) + 1
        for start, end in s.held:
            changes[start] = changes.get(start, 0) - 1
            if end is not None and end != s.finished:  # evicted: waiting again
                changes[end] = changes.get(end, 0) + 1
    waiting, peak, peak_at, area, last = 0, 0, 0.0, 0.0, 0.0
    for at in sorted(a for a in changes if a <= span):
        area += waiting * (at - last)
        waiting += changes[at]
        last = at
        if waiting > peak:
            peak, peak_at = waiting, at
    area += waiting * (span - last)
    end = span if stopped is None else stopped
    later = sum(changes[at] for at in changes if span < at <= end)
    mean = area / span if span > 0 else float(waiting)
    return Backlog(waiting, peak, peak_at, mean, end, waiting + later)


def summarize(run: SideRun, tenant_of: t.Mapping[str, str], *, span: float | None = None) -> Side:
    """Per tenant (`tenant_of`: namespace -> tenant; a namespace without one stands for itself)
    and per ClusterQueue; a simulated side also its backlog over the trace's `span` seconds."""
    by_tenant: dict[str, list[Observed]] = {}
    by_cq: dict[str, list[Observed]] = {}
    queues_of: dict[str, set[str]] = {}
    for s in run.workloads:
        tenant = tenant_of.get(s.traced.namespace, s.traced.namespace)
        by_tenant.setdefault(tenant, []).append(s)
        if s.cluster_queue:
            by_cq.setdefault(s.cluster_queue, []).append(s)
            queues_of.setdefault(tenant, set()).add(s.cluster_queue)
    for cq in run.borrowed:
        by_cq.setdefault(cq, [])
    tenants = [
        _group(
            name,
            seen,
            run.speed,
            _summed(
                [run.borrowed[q] for q in sorted(queues_of.get(name, ())) if q in run.borrowed]
            ),
        )
        for name, seen in sorted(by_tenant.items())
    ]
    queues = [
        _group(name, seen, run.speed, run.borrowed.get(name, []))
        for name, seen in sorted(by_cq.items())
    ]
    if isinstance(run, SimRun):
        side = _simulated(run, tenant_of, tenants, queues, by_tenant)
        if span is not None:
            side.backlog = backlog(run.workloads, span, run.end_seconds)
        return side
    overhead = hold_overhead(run.workloads, run.speed)
    median_run = percentile([s.traced.run_seconds for s in run.workloads], 50)
    return Side(
        run.label,
        run.revision,
        tenants,
        queues,
        run.seconds,
        run.sandbox_seconds,
        run.deadline_passed,
        None if overhead is None or not median_run else overhead * run.speed / median_run,
    )


def _simulated(
    run: SimRun,
    tenant_of: t.Mapping[str, str],
    tenants: list[Group],
    queues: list[Group],
    by_tenant: dict[str, list[Observed]],
) -> Side:
    """A simulated side: exact preemptions by preemptor, wait peaks, loops."""

    def tenant(i: int) -> str:
        ns = run.workloads[i].traced.namespace
        return tenant_of.get(ns, ns)

    groups = {g.name: g for g in tenants}
    for p in run.preemption_log:
        victim = groups[tenant(p.victim)]
        by = tenant(p.by) if p.by is not None else "?"
        victim.preempted_by[by] = victim.preempted_by.get(by, 0) + 1
        if p.by is not None:
            groups[by].preempted_others += 1
    for name, seen in by_tenant.items():
        groups[name].wait_peak = peak_hour(seen)
        reasons = sorted(
            {run.pending_reasons[s.index] for s in seen if s.index in run.pending_reasons}
        )
        groups[name].pending_reason = reasons[0] if reasons else None
    return Side(
        run.label,
        run.revision,
        tenants,
        queues,
        run.seconds,
        0.0,
        False,
        None,
        engine="sim",
        loops=loops(run, tenant_of),
        cycles=run.cycles,
        stalled=run.stalled,
        livelocks=run.livelocks,
    )


def _median(values: t.Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _combined(name: str, groups: list[Group]) -> Group:
    """One group's medians over a side's replays, with the range of its p95 waits."""
    p95s = [g.wait_p95 for g in groups if g.wait_p95 is not None]
    reasons = sorted({why for g in groups for why in g.preemption_reasons})
    return Group(
        name=name,
        workloads=max(g.workloads for g in groups),
        admitted=round(statistics.median(g.admitted for g in groups)),
        wait_p50=_median(g.wait_p50 for g in groups),
        wait_p95=_median(p95s),
        wait_max=_median(g.wait_max for g in groups),
        gpu_hours=statistics.median(g.gpu_hours for g in groups),
        borrowing_peak=statistics.median(g.borrowing_peak for g in groups),
        borrowing_mean=statistics.median(g.borrowing_mean for g in groups),
        preemptions=round(statistics.median(g.preemptions for g in groups)),
        preemption_reasons={
            why: round(statistics.median(g.preemption_reasons.get(why, 0) for g in groups))
            for why in reasons
        },
        never_admitted=round(statistics.median(g.never_admitted for g in groups)),
        p95_range=(min(p95s), max(p95s)) if p95s else None,
    )


def combine(runs: list[Side]) -> Side:
    """Several replays of one side as one: medians, p95 ranges, and the runs themselves."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    tenants = sorted({g.name for r in runs for g in r.tenants})
    queues = sorted({g.name for r in runs for g in r.cluster_queues})
    return Side(
        first.label,
        first.revision,
        [_combined(n, [r.tenant(n) for r in runs]) for n in tenants],
        [_combined(n, [r.cluster_queue(n) for r in runs]) for n in queues],
        sum(r.replay_seconds for r in runs),
        sum(r.sandbox_seconds for r in runs),
        any(r.deadline_passed for r in runs),
        max((r.distortion for r in runs if r.distortion is not None), default=None),
        runs,
    )
