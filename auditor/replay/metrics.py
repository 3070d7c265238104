"""What a replay measured, per tenant and per ClusterQueue, in trace time; base against head.

Waits are from a Job's creation to the first time its Workload held quota, times the speed (so
in the trace's seconds); percentiles are nearest-rank over the Workloads that were admitted.
GPU-hours: GPUs held times the time held, evictions and all. Borrowing is what Kueue reports in
the ClusterQueue status (flavorsReservation[].resources[nvidia.com/gpu].borrowed), sampled with
each read: the peak, and the mean over the replay. Preemptions are counted on the victims, with
Kueue's reason (its Preempted condition: InClusterQueue, InCohortReclamation, ...).

Replayed more than once (`--repeat`), a side reports each number's median over its replays and
the range of the p95 waits; a rise is flagged only when the ranges do not overlap.
"""

from __future__ import annotations

import itertools
import math
import statistics
import typing as t
from dataclasses import dataclass, field

from auditor.replay.run import TICK, Observed, SideRun

# A tenant's p95 wait is flagged when the head's exceeds the base's by all three: 25 %, five
# trace minutes, and four reads' worth of time (what two runs of one configuration may differ by).
WAIT_RISE_RATIO = 1.25
WAIT_RISE_SECONDS = 300.0
WAIT_RISE_TICKS = 4
# Two replays of one configuration agreed on the p95 wait of a tenant queueing behind its own
# work within 12 % (docs/replay.md, measured); a wait is held to 20 %, or to four reads at the
# speed, whichever is larger. A tenant whose wait hangs on reclaiming what it lent (preempting
# others) varied by up to 44 %: RECLAIMER_AGREEMENT, and the reason for --repeat.
AGREEMENT = 0.20
RECLAIMER_AGREEMENT = 0.50
# Past this share of the median run, the latencies the speed multiplies (the job controller,
# kwok, Kueue's requeue) dominate the trace's own run times: the replay says so.
MAX_DISTORTION = 0.10


def percentile(values: t.Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def tolerance(speed: float) -> float:
    """Trace seconds two replays of one configuration may differ by in a wait: reads are TICK
    apart, so each measured wait is late by up to one read, on both sides."""
    return WAIT_RISE_TICKS * TICK * speed


def agree(one: float | None, two: float | None, speed: float) -> bool:
    """Whether two replays' waits are the same number within the stated tolerance."""
    if one is None or two is None:
        return one is two
    return abs(one - two) <= max(tolerance(speed), AGREEMENT * max(one, two))


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


@dataclass
class Group:
    """The numbers of one tenant or one ClusterQueue."""

    name: str
    workloads: int = 0
    admitted: int = 0
    wait_p50: float | None = None
    wait_p95: float | None = None
    wait_max: float | None = None
    gpu_hours: float = 0.0
    borrowing_peak: float = 0.0
    borrowing_mean: float = 0.0
    preemptions: int = 0  # its Workloads preempted (as victims)
    preemption_reasons: dict[str, int] = field(default_factory=dict)
    never_admitted: int = 0
    p95_range: tuple[float, float] | None = None  # over a side's replays, when more than one

    def to_json(self) -> dict[str, t.Any]:
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 1)

        return {
            "name": self.name,
            "workloads": self.workloads,
            "admitted": self.admitted,
            "waitSeconds": {
                "p50": r(self.wait_p50),
                "p95": r(self.wait_p95),
                "max": r(self.wait_max),
            }
            | ({"p95Range": [r(v) for v in self.p95_range]} if self.p95_range else {}),
            "gpuHours": round(self.gpu_hours, 2),
            "borrowedGpus": {
                "peak": round(self.borrowing_peak, 2),
                "mean": round(self.borrowing_mean, 2),
            },
            "preemptions": self.preemptions,
            "preemptionReasons": dict(sorted(self.preemption_reasons.items())),
            "neverAdmitted": self.never_admitted,
        }


@dataclass
class Side:
    label: str
    revision: str
    tenants: list[Group]
    cluster_queues: list[Group]
    replay_seconds: float
    sandbox_seconds: float
    deadline_passed: bool
    distortion: float | None = None  # hold overhead times speed, over the median traced run
    runs: list[Side] = field(default_factory=list)  # each replay, when there was more than one

    def tenant(self, name: str) -> Group:
        return next((g for g in self.tenants if g.name == name), Group(name))

    def cluster_queue(self, name: str) -> Group:
        return next((g for g in self.cluster_queues if g.name == name), Group(name))

    @property
    def preemptions(self) -> int:
        return sum(g.preemptions for g in self.tenants)

    def to_json(self) -> dict[str, t.Any]:
        return {
            "label": self.label,
            "revision": self.revision,
            "replaySeconds": round(self.replay_seconds, 1),
            "sandboxSeconds": round(self.sandbox_seconds, 1),
            "deadlinePassed": self.deadline_passed,
            "distortion": None if self.distortion is None else round(self.distortion, 3),
            "replays": max(1, len(self.runs)),
            "preemptions": self.preemptions,
            "tenants": [g.to_json() for g in self.tenants],
            "clusterQueues": [g.to_json() for g in self.cluster_queues],
        } | ({"runs": [r.to_json() for r in self.runs]} if self.runs else {})


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
        if s.admitted is not None and s.submitted is not None
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


def summarize(run: SideRun, tenant_of: t.Mapping[str, str]) -> Side:
    """Per tenant (`tenant_of`: namespace -> tenant; a namespace without one stands for itself)
    and per ClusterQueue."""
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


@dataclass(frozen=True)
class Flag:
    """A tenant's number the head makes worse: `kind` is wait-p95-rises (seconds) or
    never-admitted (Workloads)."""

    tenant: str
    kind: t.Literal["wait-p95-rises", "never-admitted"]
    base: float
    head: float

    def to_json(self) -> dict[str, t.Any]:
        return {"tenant": self.tenant, "kind": self.kind, "base": self.base, "head": self.head}


@dataclass
class Comparison:
    cluster: str
    speed: float
    workloads: int
    trace_seconds: float
    base: Side
    head: Side
    kueue_version: str = ""
    agreement: t.ClassVar[float] = AGREEMENT
    reclaimer_agreement: t.ClassVar[float] = RECLAIMER_AGREEMENT
    max_distortion: t.ClassVar[float] = MAX_DISTORTION

    @property
    def tolerance_seconds(self) -> float:
        return tolerance(self.speed)

    def flags(self) -> list[Flag]:
        """What a reviewer should look at: a tenant's p95 wait rising past the threshold (and,
        replayed more than once, above every base replay's), or Workloads the head never admits
        that the base did."""
        out = []
        margin = max(WAIT_RISE_SECONDS, tolerance(self.speed))
        for head in self.head.tenants:
            base = self.base.tenant(head.name)
            before, after = base.wait_p95 or 0.0, head.wait_p95 or 0.0
            apart = not (base.p95_range and head.p95_range) or (
                head.p95_range[0] > base.p95_range[1]
            )
            if after > before * WAIT_RISE_RATIO and after - before > margin and apart:
                out.append(Flag(head.name, "wait-p95-rises", before, after))
            if head.never_admitted > base.never_admitted:
                out.append(
                    Flag(head.name, "never-admitted", base.never_admitted, head.never_admitted)
                )
        return out

    @property
    def exit_code(self) -> int:
        return 1 if self.flags() else 0

    def to_json(self) -> dict[str, t.Any]:
        return {
            "command": "plan --replay",
            "cluster": self.cluster,
            "speed": self.speed,
            "workloads": self.workloads,
            "traceSeconds": round(self.trace_seconds, 1),
            "kueueVersion": self.kueue_version,
            "toleranceSeconds": round(tolerance(self.speed), 1),
            "agreement": AGREEMENT,
            "reclaimerAgreement": RECLAIMER_AGREEMENT,
            "maxDistortion": MAX_DISTORTION,
            "flags": [f.to_json() for f in self.flags()],
            "base": self.base.to_json(),
            "head": self.head.to_json(),
        }
