"""Plan by replay: the same trace through the base and then the head revision, side by side."""

from __future__ import annotations

import typing as t
from pathlib import Path

from auditor.errors import ConfigError
from auditor.kueue import cohorts, quota
from auditor.replay import timeline
from auditor.replay.comparison import Comparison
from auditor.replay.livestart import LiveStart
from auditor.replay.measured import combine, summarize
from auditor.replay.run import SideRun, replay
from auditor.replay.sim import SimSide, prepare, simulate
from auditor.replay.stamp import SimulatedComparison, Stamp, assumed, stamp
from auditor.replay.trace import GPU, Trace
from auditor.repo import boundaries
from auditor.repo.gitsource import revision
from auditor.repo.layout import Repository
from auditor.sandbox import releases
from auditor.speed import threads

if t.TYPE_CHECKING:
    from auditor.sandbox import Toolchain

ENGINES = ("sim", "kueue")  # sim: Kueue's code on a logical clock; kueue: the real one, sandboxed

# The Workloads are read every 0.25 s: 15 trace seconds at 60x. Below it, what bounds the speed
# is the trace's run times; each replay measures that distortion and reports it (measured.py).
MAX_SPEED = 60.0
# Each replay is a fresh sandbox of a few minutes; five per side already shows the spread.
MAX_REPEAT = 5


def check_speed(speed: float) -> None:
    if not 0 < speed <= MAX_SPEED:
        raise ConfigError(
            f"--speed {speed:g} is outside (0, {MAX_SPEED:g}]: beyond {MAX_SPEED:g}x Kueue's own "
            "cycle times distort the waits (docs/replay.md, Compression)"
        )


def check_repeat(repeat: int) -> None:
    if not 1 <= repeat <= MAX_REPEAT:
        raise ConfigError(f"--repeat {repeat} is outside [1, {MAX_REPEAT}]")


def tenants_of(repo: Repository, cluster: str) -> dict[str, str]:
    """namespace -> tenant on `cluster`, from the tenant profiles."""
    return {
        ns: name
        for name, profile in repo.tenants.items()
        if cluster in profile.clusters
        for ns in profile.clusters[cluster].namespaces
    }


def gpu_quota(repo: Repository, cluster: str) -> list[dict[str, str | None]]:
    """Each ClusterQueue's GPU quota cells on `cluster` at this revision, with its cohort: the
    cohort tree the replay's report draws (nominal beside what was used and borrowed)."""
    return [
        {
            "clusterQueue": r.name,
            "cohort": cohorts.cohort_of(r.body),
            "flavor": c.flavor,
            "nominal": str(c.fields.get(quota.NOMINAL, "0")),
        }
        for r in repo.load([cluster]).for_cluster(cluster)
        if r.kind == "ClusterQueue"
        for c in quota.cells(r.body)
        if c.resource == GPU
    ]


def plan_by_replay(
    root: Path,
    base: str,
    head: str,
    cluster: str,
    trace: Trace,
    *,
    speed: float,
    toolchain: Toolchain,
    repeat: int = 1,
    log: t.Callable[[str], None] | None = None,
) -> Comparison:
    """Each side replayed `repeat` times, each time on a fresh sandbox; base and head at once
    (each side's replays one after another). A side spends nearly all its time waiting on the
    trace's clock, so two at once take the time of one; the latency they add to each other is
    measured with the rest (`distortion`)."""
    check_speed(speed)
    check_repeat(repeat)
    revs = {"base": base, "head": head}
    for rev in revs.values():  # refused, and each Kueue release built, before a sandbox starts
        with revision(root, rev) as repo:
            if cluster not in repo.clusters:
                raise ConfigError(f"cluster {cluster} does not exist at {rev}")
            releases.release(toolchain, repo.cluster(cluster).kueue_version, log=log)

    def side(label: str) -> tuple[list[SideRun], dict[str, str], list[dict[str, str | None]]]:
        with revision(root, revs[label]) as repo:
            runs = [
                replay(toolchain, repo, cluster, trace, speed=speed, label=label, log=log)
                for _ in range(repeat)
            ]
            return runs, tenants_of(repo, cluster), gpu_quota(repo, cluster)

    done = dict(zip(revs, threads.each(side, list(revs), caught=()), strict=True))
    runs = {label: r for label, (r, _, _) in done.items()}
    tenant_of = done["head"][1] | done["base"][1]  # the base's name where both have one
    return Comparison(
        cluster=cluster,
        speed=speed,
        workloads=len(trace.workloads),
        trace_seconds=trace.seconds,
        base=combine([summarize(r, tenant_of) for r in runs["base"]]),
        head=combine([summarize(r, tenant_of) for r in runs["head"]]),
        kueue_version=runs["base"][0].kueue_version,
        # the first replay of each side: a timeline is one day as it happened, not a median
        timeline=timeline.build(
            {label: side[0] for label, side in runs.items()}, tenant_of, trace.seconds
        ),
        quota={label: q for label, (_, _, q) in done.items()},
    )


def plan_by_simulation(
    root: Path,
    base: str,
    head: str,
    cluster: str,
    trace: Trace,
    *,
    testenv: Path,
    log: t.Callable[[str], None] | None = None,
    start: LiveStart | None = None,
) -> Comparison:
    """Each side once through the simulator built against the Kueue its cluster profile names,
    both at once (deterministic: a second run gives the same answer). From a live `start`
    (`plan replay --live`), both sides begin with the cluster's Workloads as they are now and
    the trace's arrive after them. Raises SimulationUnavailable for a release the simulator
    cannot link."""
    from auditor.sandbox.kueuesim import ensure_sim  # the Go build, only when simulating

    inputs = assumed([trace], run_for=start.run_for if start is not None else None)
    workloads: list[dict[str, t.Any]] | None = None
    if start is not None:
        merged = start.then(trace.workloads, [f"trace #{i}" for i in range(len(trace.workloads))])
        workloads = merged.workloads
        trace = Trace(trace.cluster, trace.recorded, merged.traced())
    prepared: list[SimSide] = []
    tenant_of: dict[str, str] = {}
    quotas: dict[str, list[dict[str, str | None]]] = {}
    configurations: dict[str, dict[str, t.Any]] = {}
    release = ""
    for label, rev in (("base", base), ("head", head)):
        with revision(root, rev) as repo:
            if cluster not in repo.clusters:
                raise ConfigError(f"cluster {cluster} does not exist at {rev}")
            tenant_of = tenants_of(repo, cluster) | tenant_of
            quotas[label] = gpu_quota(repo, cluster)
            binary, release = ensure_sim(testenv, repo.cluster(cluster).kueue_version, log=log)
            if start is not None:
                _holds_where(repo, cluster, start, rev)
            prepared.append(
                prepare(binary, release, repo, cluster, trace, label=label, workloads=workloads)
            )
            configurations[label] = boundaries.kueue_configuration(repo, cluster) or {}
    sides = simulate(prepared, trace, log=log)
    live: dict[str, t.Any] | None = None
    if start is not None:  # their waits were before the start
        for run in sides.values():
            for held in run.workloads[: start.held]:
                held.held_at_start = True
        live = merged.summary() | {
            "atStart": {label: merged.at_start(run) for label, run in sides.items()}
        }
    stamps: dict[str, Stamp] = {
        side.label: stamp(
            sides[side.label].simulated, side.release, configurations[side.label], inputs=inputs
        )
        for side in prepared
    }
    return SimulatedComparison(
        cluster=cluster,
        speed=1.0,
        workloads=len(trace.workloads),
        trace_seconds=trace.seconds,
        base=summarize(sides["base"], tenant_of, span=trace.seconds),
        head=summarize(sides["head"], tenant_of, span=trace.seconds),
        kueue_version=release,
        engine="sim",
        timeline=timeline.build(sides, tenant_of, trace.seconds),
        quota=quotas,
        stamps=stamps,
        live=live,
    )


def _holds_where(repo: Repository, cluster: str, start: LiveStart, rev: str) -> None:
    """A Workload holding quota in a ClusterQueue the revision removes cannot start there: Kueue
    keeps the queue until it finishes (its finalizer), which the simulation does not model."""
    queues = {r.name for r in repo.load([cluster]).for_cluster(cluster) if r.kind == "ClusterQueue"}
    for name, w in zip(start.names[: start.held], start.workloads, strict=False):
        held = str((w.get("admission") or {}).get("clusterQueue") or "")
        if held not in queues:
            raise ConfigError(
                f"cluster {cluster}: {name} holds quota in ClusterQueue {held}, which {rev} "
                "removes; a live start cannot place it (plan diff --live reports the "
                "removal)"
            )
