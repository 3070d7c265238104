"""The numbers of one side of a replay (base or head), per tenant and per ClusterQueue, in trace
time, as the report shows them (auditor/replay/measured.py computes them)."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

from auditor.replay.sim import Loop


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


@dataclass(frozen=True)
class Backlog:
    """The simulated Workloads waiting for quota (submitted and not yet admitted, or evicted
    and not yet readmitted) over the trace's span, in trace seconds: how many still waited at
    its end (a standing backlog when any), the most at once and when, and the time-weighted
    mean; and when the simulation stopped (a day after the trace's end at the latest), how many
    still waited then (counted never admitted)."""

    at_end: int
    peak: int
    peak_at: float
    mean: float
    stopped_at: float = 0.0
    at_stop: int = 0

    def to_json(self) -> dict[str, t.Any]:
        return {
            "pendingAtEnd": self.at_end,
            "peak": self.peak,
            "peakAtSeconds": round(self.peak_at, 1),
            "meanPending": round(self.mean, 1),
            "stoppedAtSeconds": round(self.stopped_at, 1),
            "pendingAtStop": self.at_stop,
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
    backlog: Backlog | None = None  # the simulation's, over the trace's span

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
            | ({"backlog": self.backlog.to_json()} if self.backlog else {})
        )
