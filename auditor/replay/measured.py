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

from auditor.model import Finding
from auditor.replay import sim
from auditor.replay.run import TICK, Observed, SideRun
from auditor.replay.sim import Loop, SimRun, loops, peak_hour
from auditor.replay.timeline import Timeline
from auditor.rules import declarations
from auditor.rules.rule import Rule

RULES = declarations.of(__name__)  # auditor/replay/rules.yaml
WAIT_RISES = RULES["replay-wait-rises"]
NEVER_ADMITTED = RULES["replay-never-admitted"]
PREEMPTION_LOOP = RULES["replay-preemption-loop"]

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
    # What only the simulation knows (--engine sim): whose Workloads preempted its own, how many
    # of others' its own preempted, the hour of the day its wait peaks, Kueue's last word on work
    # never admitted.
    preempted_by: dict[str, int] = field(default_factory=dict)
    preempted_others: int = 0
    wait_peak: tuple[int, float] | None = None
    pending_reason: str | None = None

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
            "preemptedBy": dict(sorted(self.preempted_by.items())),
            "preemptedOthers": self.preempted_others,
            "waitPeak": (
                {"hour": self.wait_peak[0], "meanSeconds": r(self.wait_peak[1])}
                if self.wait_peak
                else None
            ),
            "pendingReason": self.pending_reason,
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
    engine: str = "kueue"
    loops: list[Loop] = field(default_factory=list)
    cycles: int = 0  # the simulation's scheduling cycles
    stalled: list[float] = field(default_factory=list)  # instants it gave up on (too many cycles)
    # instants where Kueue preempted and readmitted the same Workloads without end (a livelock)
    livelocks: list[float] = field(default_factory=list)

    def tenant(self, name: str) -> Group:
        return next((g for g in self.tenants if g.name == name), Group(name))

    def cluster_queue(self, name: str) -> Group:
        return next((g for g in self.cluster_queues if g.name == name), Group(name))

    @property
    def preemptions(self) -> int:
        return sum(g.preemptions for g in self.tenants)

    def to_json(self) -> dict[str, t.Any]:
        # The simulation's timings go to stderr, not into the report: the same trace and
        # revisions give the same bytes.
        timed = self.engine != "sim"
        return (
            {
                "label": self.label,
                "revision": self.revision,
            }
            | (
                {
                    "replaySeconds": round(self.replay_seconds, 1),
                    "sandboxSeconds": round(self.sandbox_seconds, 1),
                }
                if timed
                else {}
            )
            | {
                "deadlinePassed": self.deadline_passed,
                "distortion": None if self.distortion is None else round(self.distortion, 3),
                "replays": max(1, len(self.runs)),
                "engine": self.engine,
                "loops": [loop.to_json() for loop in self.loops],
                "cycles": self.cycles,
                "stalledAt": self.stalled,
                "livelockAt": self.livelocks,
                "preemptions": self.preemptions,
                "tenants": [g.to_json() for g in self.tenants],
                "clusterQueues": [g.to_json() for g in self.cluster_queues],
            }
            | ({"runs": [r.to_json() for r in self.runs]} if self.runs else {})
        )


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
    if isinstance(run, SimRun):
        return _simulated(run, tenant_of, tenants, queues, by_tenant)
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


@dataclass(frozen=True)
class Flag:
    """A tenant's number the head makes worse: `kind` is wait-p95-rises (seconds),
    never-admitted (Workloads) or preemption-loop (a loop of the head's the base lacks: base 0,
    head the preemptions in it)."""

    tenant: str
    kind: t.Literal["wait-p95-rises", "never-admitted", "preemption-loop"]
    base: float
    head: float
    cycle: tuple[str, ...] = ()  # a preemption loop's events

    @property
    def rule(self) -> Rule:
        return {
            "wait-p95-rises": WAIT_RISES,
            "never-admitted": NEVER_ADMITTED,
            "preemption-loop": PREEMPTION_LOOP,
        }[self.kind]

    def to_json(self) -> dict[str, t.Any]:
        out: dict[str, t.Any] = {
            "tenant": self.tenant,
            "kind": self.kind,
            "rule": self.rule.id,
            "base": self.base,
            "head": self.head,
        }
        return out | ({"cycle": list(self.cycle)} if self.cycle else {})


@dataclass
class Comparison:
    cluster: str
    speed: float
    workloads: int
    trace_seconds: float
    base: Side
    head: Side
    kueue_version: str = ""
    engine: str = "kueue"
    timeline: Timeline | None = None  # the day sampled (auditor/replay/timeline.py)
    # side -> each ClusterQueue's GPU quota cells and cohort (revisions.gpu_quota)
    quota: dict[str, list[dict[str, str | None]]] = field(default_factory=dict)
    agreement: t.ClassVar[float] = AGREEMENT
    reclaimer_agreement: t.ClassVar[float] = RECLAIMER_AGREEMENT
    max_distortion: t.ClassVar[float] = MAX_DISTORTION

    @property
    def tolerance_seconds(self) -> float:
        return tolerance(self.speed)

    def flags(self) -> list[Flag]:
        """What a reviewer should look at: a tenant's p95 wait rising past the threshold (and,
        replayed more than once, above every base replay's), or Workloads the head never
        admits: a finding about the head even when the base leaves them waiting too (a queue
        that admits nothing on either side is no reason for a green verdict)."""
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
            if head.never_admitted:
                out.append(
                    Flag(head.name, "never-admitted", base.never_admitted, head.never_admitted)
                )
        known = {loop.key for loop in self.base.loops}
        for loop in self.head.loops:
            if loop.key not in known:
                out.append(
                    Flag(loop.tenant, "preemption-loop", 0, len(loop.cycle), tuple(loop.cycle))
                )
        return out

    def findings(self) -> list[Finding]:
        """The flags as findings of their catalogued rules: what decides the exit status
        (Report.exit_code)."""
        return [
            Finding(
                f.rule,
                _message(f),
                cluster=self.cluster,
                extra={"tenant": f.tenant, "base": f.base, "head": f.head}
                | ({"cycle": list(f.cycle)} if f.cycle else {}),
            )
            for f in self.flags()
        ]

    section_kind: t.ClassVar[str] = "replay"  # how the report's views tell it from a Plan

    def to_json(self) -> dict[str, t.Any]:
        """The report's section (report.schema.json): the revisions, and the replay."""
        return {
            "base": self.base.revision,
            "head": self.head.revision,
            "replay": self.replay_json(),
        }

    def replay_json(self) -> dict[str, t.Any]:
        return (
            {
                "engine": self.engine,
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
                "loopPreemptions": sim.LOOP_PREEMPTIONS,
                "loopSwitches": sim.TRADE_SWITCHES,
                "loopWindowSeconds": sim.LOOP_WINDOW,
                "base": self.base.to_json(),
                "head": self.head.to_json(),
            }
            | ({"timeline": self.timeline.to_json()} if self.timeline else {})
            | ({"quota": self.quota} if self.quota else {})
        )


def _message(f: Flag) -> str:
    def d(seconds: float) -> str:
        return f"{seconds / 60:.1f} min"

    if f.kind == "wait-p95-rises":
        return f"{f.tenant}: p95 admission wait rises from {d(f.base)} to {d(f.head)}"
    if f.kind == "never-admitted":
        same = " either" if f.base >= f.head else ""
        return (
            f"{f.tenant}: {f.head:g} Workload(s) never admitted "
            f"(base: {f.base:g}{' never admitted' + same if f.base else ''})"
        )
    shown = "; ".join(f.cycle[:6]) + ("; ..." if len(f.cycle) > 6 else "")
    return f"{f.tenant}: preemption loop on the head: {shown}"
