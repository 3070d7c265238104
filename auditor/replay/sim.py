"""Replay a trace through Kueue's own scheduling code on a logical clock (`--engine sim`).

Each side (a git revision; base and head at once, a process each): the revision's ClusterQueues,
Cohorts, ResourceFlavors, LocalQueues, priority classes and Namespaces for the cluster, with the
fair sharing and feature gates of its Kueue Configuration, and the trace's Workloads, go to
testenv/kueuesim built against the Kueue release the cluster profile names
(auditor/sandbox/kueuesim.py). Kueue's scheduler decides; the program says what happened to each
Workload and when, in trace seconds, and this module turns that into the SideRun the real
engine's metrics read (run.py), at speed 1. What the simulation adds beyond those metrics: who
preempted whom, preemption loops, time-weighted borrowing and the hour each tenant's wait peaks
(docs/replay.md).
"""

from __future__ import annotations

import bisect
import itertools
import json
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from auditor.errors import ConfigError, SandboxError
from auditor.k8s.authored import filled
from auditor.k8s.quantity import parse
from auditor.replay.run import Observed, SideRun
from auditor.replay.trace import GPU, Trace
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.schemas import catalog
from auditor.speed import parallel, threads

# How long after the trace's end the simulation goes on while Workloads still wait.
DRAIN_SECONDS = 86400.0
KINDS = frozenset(
    {
        "ClusterQueue",
        "Cohort",
        "ResourceFlavor",
        "LocalQueue",
        "WorkloadPriorityClass",
        "PriorityClass",
        "Namespace",
    }
)
# A Workload preempted and readmitted more than this many times is in a loop.
LOOP_PREEMPTIONS = 3
# Two ClusterQueues taking GPUs back and forth: this many changes of direction (A preempts B's,
# B preempts A's, ...) within LOOP_WINDOW trace seconds.
TRADE_SWITCHES = 4
LOOP_WINDOW = 3600.0
LOOP_SHOWN = 20  # steps of a loop's cycle the report lists
HOUR = 3600.0


@dataclass(frozen=True)
class Preemption:
    at: float
    victim: int
    by: int | None
    reason: str
    victim_queue: str
    by_queue: str | None


@dataclass(frozen=True)
class Loop:
    """A preemption loop: `key` identifies it across the two sides (a Workload, or a pair of
    ClusterQueues); `cycle` shows it."""

    key: str
    kind: t.Literal["workload", "queues"]
    tenant: str
    cycle: list[str]

    def to_json(self) -> dict[str, t.Any]:
        return {"key": self.key, "kind": self.kind, "tenant": self.tenant, "cycle": self.cycle}


@dataclass
class SimRun(SideRun):
    """A side replayed by the simulation: the SideRun the metrics read, and what only the
    simulation knows."""

    preemption_log: list[Preemption] = field(default_factory=list)
    cycles: int = 0
    stalled: list[float] = field(default_factory=list)
    livelocks: list[float] = field(default_factory=list)
    pending_reasons: dict[int, str] = field(default_factory=dict)
    end_seconds: float = 0.0
    # what the simulator ran with: every gate's value, fair sharing, waitForPodsReady defaulted
    # by the release, the requeue batch (auditor/replay/stamp.py reads it)
    simulated: dict[str, t.Any] = field(default_factory=dict)


def sim_input(
    repo: Repository,
    cluster: str,
    trace: Trace,
    workloads: t.Sequence[dict[str, t.Any]] | None = None,
) -> dict[str, t.Any]:
    """What kueuesim reads: the revision's objects for `cluster` as the API server stores them
    (every default of the release's CRD schemas filled in: a ClusterQueue without
    queueingStrategy is BestEffortFIFO there, and Kueue's code reads the stored object), and
    the trace (or, from a live start, `workloads` as auditor/replay/livestart.py gives them, in
    the trace's order)."""
    schemas = catalog.find(None, cluster, repo.cluster(cluster).kueue_version)
    objects = [
        _stored(r.body, schemas)
        for r in repo.load([cluster]).for_cluster(cluster)
        if r.kind in KINDS
    ]
    return {
        "objects": objects,
        **configured(repo, cluster),
        "workloads": (
            list(workloads) if workloads is not None else [w.to_json() for w in trace.workloads]
        ),
        # A backlog still standing a day after the trace's end is reported as standing (the
        # report's backlog line), not simulated for the weeks it may take to drain.
        "horizonSeconds": trace.seconds + DRAIN_SECONDS,
    }


def _stored(body: dict[str, t.Any], schemas: catalog.SchemaCatalog | None) -> dict[str, t.Any]:
    """`body` with the defaults its kind's schema (the release's CRD) gives filled in."""
    schema = schemas.schema(body.get("apiVersion", ""), body.get("kind", "")) if schemas else None
    return t.cast(dict[str, t.Any], filled(body, schema)) if schema else body


def configured(repo: Repository, cluster: str) -> dict[str, t.Any]:
    """What kueuesim reads of the Configuration the revision gives Kueue on `cluster`."""
    config = boundaries.kueue_configuration(repo, cluster) or {}
    fair = config.get("fairSharing")
    if isinstance(fair, dict) and fair.get("enable", True) is False:
        fair = None  # v1beta1's `enable: false`
    return {
        "fairSharing": (
            {"preemptionStrategies": fair.get("preemptionStrategies") or []}
            if isinstance(fair, dict)
            else None
        ),
        "featureGates": dict(config.get("featureGates") or {}),
        "waitForPodsReady": _pods_ready(config),
    }


def _pods_ready(config: t.Mapping[str, t.Any]) -> dict[str, t.Any] | None:
    """The Configuration's waitForPodsReady for the release's defaults to complete (None: not
    set; v1beta1's `enable: false` is not set either)."""
    given = config.get("waitForPodsReady")
    if not isinstance(given, dict) or given.get("enable", True) is False:
        return None
    return {k: v for k, v in given.items() if k != "enable"}


@dataclass(frozen=True)
class SimSide:
    """One side ready to simulate: the simulator built for its Kueue, and what it reads."""

    label: str
    revision: str
    cluster: str
    binary: Path
    release: str
    document: str


def prepare(
    binary: Path,
    release: str,
    repo: Repository,
    cluster: str,
    trace: Trace,
    *,
    label: str,
    workloads: t.Sequence[dict[str, t.Any]] | None = None,
) -> SimSide:
    """The side of `repo` (a revision, open now) as the simulator will read it."""
    document = json.dumps(sim_input(repo, cluster, trace, workloads))
    return SimSide(label, repo.label, cluster, binary, release, document)


def deadline(trace: Trace) -> float:
    """Real seconds a side may take: far above what a day of work measured (bench/replay: 10,000
    Workloads in about 200 s a side), so only a simulator that no longer advances meets it."""
    return 600.0 + 0.2 * len(trace.workloads)


def simulate(
    sides: t.Sequence[SimSide],
    trace: Trace,
    *,
    log: t.Callable[[str], None] | None = None,
    within: float | None = None,
) -> dict[str, SimRun]:
    """Every side at once, one simulator process each (on two cores base and head take the time
    of one); their timings are said through `log`, in the sides' order. A side still running
    after `within` real seconds (default: `deadline(trace)`) is stopped and raises."""
    say = log or (lambda _m: None)
    limit = deadline(trace) if within is None else within
    outputs = threads.each(lambda side: run_side(side, limit), sides, caught=())
    done = list(zip(sides, outputs, strict=True))
    runs: dict[str, SimRun] = {}
    for side, (out, stderr, took) in done:
        for line in stderr.splitlines():
            say(f"replay {side.label}: {line}")
        runs[side.label] = from_output(
            out, trace, label=side.label, revision=side.revision, took=took
        )
    return runs


def run_side(side: SimSide, limit: float) -> tuple[dict[str, t.Any], str, float]:
    """One simulator process on `side`: its output, its stderr and the real seconds it took."""
    return outcome(side, limit, parallel.execute(program(side, limit)))


def program(side: SimSide, limit: float) -> parallel.Program:
    """The simulator's run on `side`, as an engine of the parallel seam carries it (the binary,
    its flags and what it reads: nothing of this package's Python)."""
    return parallel.Program(side.binary, ("-kueue-version", side.release), side.document, limit)


def outcome(
    side: SimSide, limit: float, done: parallel.Finished
) -> tuple[dict[str, t.Any], str, float]:
    """What the simulator's run on `side` said, wherever it ran: its output, its stderr and its
    real seconds; an error for a run stopped at `limit`, a refused revision or a failure."""
    if done.returncode is None:  # stopped at its limit
        raise SandboxError(
            f"the replay simulator did not finish {side.label} ({side.revision}) within "
            f"{limit:.0f} s; stopped (a trace this size should take a fraction of that)"
        )
    if done.returncode != 0:
        message = done.stderr.strip()[-2000:]
        if done.returncode == 2:  # the simulator refused the revision's objects
            raise ConfigError(f"{side.label} ({side.revision}), cluster {side.cluster}: {message}")
        raise SandboxError(
            f"the replay simulator failed on {side.label} ({side.revision}): {message}"
        )
    return json.loads(done.stdout), done.stderr, done.seconds


def from_output(
    out: dict[str, t.Any], trace: Trace, *, label: str, revision: str, took: float = 0.0
) -> SimRun:
    """The simulator's output as a SideRun (trace seconds, speed 1)."""
    seen = [Observed(i, w, submitted=w.submitted_at) for i, w in enumerate(trace.workloads)]
    end = float(out["endSeconds"])
    queue_of: dict[int, str] = {}
    log: list[Preemption] = []
    pending: dict[int, str] = {}
    for record in out["workloads"]:
        s = seen[record["index"]]
        held_since: float | None = None
        for event in record["events"]:
            kind, at = event["kind"], float(event["at"])
            if kind == "admitted":
                s.admitted = at if s.admitted is None else s.admitted
                s.cluster_queue = event.get("clusterQueue") or s.cluster_queue
                queue_of[s.index] = s.cluster_queue or ""
                held_since = at
                s.held.append((at, None))
            elif kind in ("preempted", "evicted", "finished"):
                if held_since is not None:
                    s.gpu_seconds += s.gpus * (at - held_since)
                    s.held[-1] = (held_since, at)
                    held_since = None
                if kind == "finished":
                    s.finished, s.finished_reason = at, "Succeeded"
                else:
                    reason = event.get("reason") or "Evicted"
                    s.preemptions += 1
                    s.preemption_reasons[reason] = s.preemption_reasons.get(reason, 0) + 1
                    s.preempted_at.append(at)
                    if kind == "preempted":
                        by = event.get("by")
                        log.append(
                            Preemption(at, s.index, by, reason, queue_of.get(s.index, ""), None)
                        )
            elif kind == "rejected":
                s.rejected = event.get("message") or "rejected"
        if held_since is not None:  # still running when the trace ended
            s.gpu_seconds += s.gpus * (end - held_since)
        if record.get("pendingReason"):
            pending[s.index] = record["pendingReason"]
    log = [
        Preemption(p.at, p.victim, p.by, p.reason, p.victim_queue, queue_of.get(p.by or -1))
        for p in log
    ]
    return SimRun(
        label=label,
        revision=revision,
        speed=1.0,
        workloads=seen,
        borrowed=_aligned(out["borrowedGpus"], end),
        seconds=took,
        kueue_version=str(out.get("kueueVersion") or ""),
        preemption_log=log,
        cycles=int(out.get("cycles", 0)),
        stalled=[float(v) for v in out.get("stalledAt", [])],
        livelocks=[float(v) for v in out.get("livelockAt", [])],
        pending_reasons=pending,
        end_seconds=end,
        simulated=dict(out.get("simulated") or {}),
    )


def _aligned(
    series: dict[str, list[dict[str, float]]], end: float
) -> dict[str, list[tuple[float, float]]]:
    """Each ClusterQueue's change points on one shared timeline (every queue's changes and the
    end), so that tenants' series add up point by point and means are weighted by time."""
    times = sorted({float(p["at"]) for s in series.values() for p in s} | {end})
    out: dict[str, list[tuple[float, float]]] = {}
    for name, points in sorted(series.items()):
        values, i, current = [], 0, 0.0
        for at in times:
            while i < len(points) and float(points[i]["at"]) <= at:
                current = float(points[i]["gpus"])
                i += 1
            values.append((at, current))
        out[name] = values
    return out


def gpus_of(requests: t.Mapping[str, str], pods: int) -> float:
    return float(parse(requests.get(GPU, "0")).value) * pods


def loops(run: SimRun, tenant_of: t.Mapping[str, str]) -> list[Loop]:
    """Preemption loops on one side: Workloads preempted more than LOOP_PREEMPTIONS times, and
    pairs of ClusterQueues trading preemptions TRADE_SWITCHES times within LOOP_WINDOW."""

    def name(i: int | None) -> str:
        if i is None:
            return "?"
        w = run.workloads[i].traced
        return f"#{i} ({tenant_of.get(w.namespace, w.namespace)})"

    found: list[Loop] = []
    by_victim: dict[int, list[Preemption]] = {}
    for p in run.preemption_log:
        by_victim.setdefault(p.victim, []).append(p)
    for victim, preempted in sorted(by_victim.items()):
        if len(preempted) > LOOP_PREEMPTIONS:
            w = run.workloads[victim].traced
            found.append(
                Loop(
                    f"workload:{victim}",
                    "workload",
                    tenant_of.get(w.namespace, w.namespace),
                    _shown(
                        [f"{p.at:.0f}s preempted by {name(p.by)} ({p.reason})" for p in preempted]
                    ),
                )
            )
    pairs: dict[tuple[str, str], list[Preemption]] = {}
    for p in run.preemption_log:
        if p.by_queue and p.victim_queue and p.by_queue != p.victim_queue:
            key = t.cast(tuple[str, str], tuple(sorted((p.by_queue, p.victim_queue))))
            pairs.setdefault(key, []).append(p)
    for (a, b), events in sorted(pairs.items()):
        events.sort(key=lambda p: (p.at, p.victim))
        times = [e.at for e in events]
        # turns[i]: changes of direction among events[0..i]; a window's count is a difference,
        # so a day with thousands of preemptions is not judged window by window
        turns = [
            0,
            *itertools.accumulate(x.by_queue != y.by_queue for x, y in itertools.pairwise(events)),
        ]
        for start in range(len(events)):
            end = bisect.bisect_right(times, events[start].at + LOOP_WINDOW)
            if turns[end - 1] - turns[start] >= TRADE_SWITCHES:
                window = events[start:end]
                taker = tenant_of.get(run.workloads[window[0].by or 0].traced.namespace, a)
                found.append(
                    Loop(
                        f"queues:{a}<->{b}",
                        "queues",
                        taker,
                        _shown(
                            [
                                f"{e.at:.0f}s {e.by_queue} preempts {name(e.victim)} of "
                                f"{e.victim_queue} ({e.reason})"
                                for e in window
                            ]
                        ),
                    )
                )
                break
    return found


def _shown(cycle: list[str]) -> list[str]:
    """A loop's cycle as the report shows it: its first LOOP_SHOWN steps and how many follow (a
    livelock repeats one step hundreds of times)."""
    if len(cycle) <= LOOP_SHOWN:
        return cycle
    return [*cycle[:LOOP_SHOWN], f"... and {len(cycle) - LOOP_SHOWN} more ({len(cycle)} in all)"]


def peak_hour(seen: t.Sequence[Observed]) -> tuple[int, float] | None:
    """The hour of the day (of submission, from the trace's start) whose admitted Workloads
    waited longest on average, with that mean wait."""
    waits: dict[int, list[float]] = {}
    for s in seen:
        if s.admitted is not None and s.submitted is not None and not s.held_at_start:
            hour = int(s.submitted // HOUR) % 24
            waits.setdefault(hour, []).append(s.admitted - s.submitted)
    if not waits:
        return None
    hour, values = max(sorted(waits.items()), key=lambda kv: sum(kv[1]) / len(kv[1]))
    return hour, sum(values) / len(values)
