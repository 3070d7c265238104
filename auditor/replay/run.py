"""Replay a trace on a fresh sandbox: the real Kueue admits, kwok's simulated nodes run the pods.

One side (a git revision) at a time: a new sandbox with the Kueue release and Configuration the
revision's cluster profile and kueue/ folder name, kwok node pools from its profile's capacity,
the cluster's and its tenants' objects applied in Argo CD's order. Each traced Workload becomes a
suspended Job with the LocalQueue and priority-class labels, submitted at submittedAt / speed,
whose pods kwok completes after runSeconds / speed. The Workloads are read every TICK seconds
(one LIST), with our own clock: condition times have one-second resolution, too coarse once
time is compressed. ClusterQueues are read as often, for what each borrows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
import typing as t
from dataclasses import dataclass, field

from auditor.errors import ClusterAccessError, ConfigError
from auditor.k8s import conditions
from auditor.k8s.objects import Json
from auditor.k8s.quantity import parse
from auditor.kueue import capacity, quota
from auditor.kueue import workloads as kueue_workloads
from auditor.kueue.workloads import PRIORITY_LABEL, QUEUE_LABEL
from auditor.live.apply import apply_all
from auditor.replay.trace import GPU, Trace, TracedWorkload
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain, nodes, releases

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

TICK = 0.25  # seconds between two reads of the Workloads
JOB_PREFIX = "replay-"
ACTIVE_TIMEOUT = 60.0
UNSEEN = "unseen"  # preempted and re-admitted between two reads: Kueue's cause was gone
SLACK = 30.0  # real seconds past the computed deadline, for Kueue's and kwok's own latencies


@dataclass
class Observed:
    """One traced Workload's life in the sandbox, in real seconds since the replay began."""

    index: int
    traced: TracedWorkload
    submitted: float | None = None
    rejected: str | None = None  # the API server refused the Job
    cluster_queue: str | None = None
    admitted: float | None = None  # quota first reserved
    finished: float | None = None
    finished_reason: str | None = None
    gpu_seconds: float = 0.0  # GPUs held, times real seconds
    preemptions: int = 0
    preemption_reasons: dict[str, int] = field(default_factory=dict)
    # When it held quota ([start, end), end None while it still did) and when it was preempted:
    # what the replay's timeline (auditor/replay/timeline.py) is drawn from.
    held: list[tuple[float, float | None]] = field(default_factory=list)
    preempted_at: list[float] = field(default_factory=list)
    # A live start's Workload that already held quota (auditor/replay/livestart.py): its wait
    # was before the start, so none is measured.
    held_at_start: bool = False
    _was_preempted: bool = False

    @property
    def gpus(self) -> float:
        return float(parse(self.traced.requests.get(GPU, "0")).value) * self.traced.pod_count


@dataclass
class SideRun:
    """What one side of the replay saw."""

    label: str  # base or head
    revision: str
    speed: float
    workloads: list[Observed]
    borrowed: dict[str, list[tuple[float, float]]]  # ClusterQueue -> (seconds, GPUs borrowed)
    seconds: float = 0.0  # real seconds the replay took (after the sandbox was ready)
    sandbox_seconds: float = 0.0
    deadline_passed: bool = False
    kueue_version: str = ""


def deadline(trace: Trace, speed: float, gpus: float) -> float:
    """Real seconds to wait at most: the trace's window, twice the work the nodes' GPUs could
    do back to back, and the longest run, compressed; then SLACK."""
    work = sum(
        float(parse(w.requests.get(GPU, "0")).value) * w.pod_count * w.run_seconds
        for w in trace.workloads
    )
    serial = 2 * work / gpus if gpus else 0.0
    return (trace.seconds + serial + trace.longest_run) / speed + SLACK


def job_name(index: int) -> str:
    return f"{JOB_PREFIX}{index:05d}"


def job(w: TracedWorkload, index: int, speed: float) -> Json:
    """A suspended Job for one traced Workload; its pods end after runSeconds / speed."""
    labels = {QUEUE_LABEL: w.local_queue}
    if w.priority_class:
        labels[PRIORITY_LABEL] = w.priority_class
    limits = {k: v for k, v in w.requests.items() if k == GPU}  # extended resources need limits
    run_for = f"{w.run_seconds / speed:.3f}s"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{JOB_PREFIX}{index:05d}",
            "namespace": w.namespace,
            "labels": labels,
        },
        "spec": {
            "suspend": True,
            "parallelism": w.pod_count,
            "completions": w.pod_count,
            "backoffLimit": 0,
            "template": {
                "metadata": {"annotations": {capacity.RUN_FOR: run_for}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.k8s.io/pause:3.10",  # kwok runs nothing
                            "resources": {"requests": dict(w.requests), "limits": limits},
                        }
                    ],
                },
            },
        },
    }


def _index(wl: Json) -> int | None:
    name = kueue_workloads.owner_job(wl) or ""
    if not name.startswith(JOB_PREFIX):
        return None
    with contextlib.suppress(ValueError):
        return int(name[len(JOB_PREFIX) :])
    return None


def observe(seen: Observed, wl: Json, now: float, dt: float) -> None:
    """Fold one read of its Workload into what was seen of it."""
    holding = kueue_workloads.quota_state(wl) != "pending" and not kueue_workloads.finished(wl)
    if holding and not (seen.held and seen.held[-1][1] is None):
        seen.held.append((now, None))
    elif not holding and seen.held and seen.held[-1][1] is None:
        seen.held[-1] = (seen.held[-1][0], now)
    if kueue_workloads.quota_state(wl) != "pending":
        if seen.admitted is None:
            seen.admitted = now
        seen.cluster_queue = kueue_workloads.cluster_queue(wl) or seen.cluster_queue
        held = sum(v for (_, r), v in kueue_workloads.usage(wl).items() if r == GPU)
        if not kueue_workloads.finished(wl):
            seen.gpu_seconds += float(held) * dt
    preempted = kueue_workloads.evicted_by_preemption(wl)
    counted = kueue_workloads.preemptions(wl)  # Kueue's own count, where it keeps one
    new = counted - seen.preemptions if counted else int(preempted and not seen._was_preempted)
    if new > 0:
        reason = kueue_workloads.preemption_reason(wl) or UNSEEN
        seen.preemption_reasons[reason] = seen.preemption_reasons.get(reason, 0) + new
        seen.preemptions += new
        seen.preempted_at.extend([now] * new)
    seen._was_preempted = preempted
    if kueue_workloads.finished(wl) and seen.finished is None:
        seen.finished = now
        seen.finished_reason = conditions.reason(wl, kueue_workloads.FINISHED)


def borrowed_gpus(cq: Json) -> float:
    """GPUs a ClusterQueue borrows now, over its flavors (status.flavorsReservation)."""
    return float(
        sum(
            (c.quantity("borrowed").value for c in quota.usage_cells(cq) if c.resource == GPU),
            start=parse("0").value,
        )
    )


def replay(
    toolchain: Toolchain,
    repo: Repository,
    cluster: str,
    trace: Trace,
    *,
    speed: float,
    label: str,
    log: t.Callable[[str], None] | None = None,
) -> SideRun:
    """Replay `trace` on a fresh sandbox of `repo`'s `cluster`; the sandbox is gone after."""
    say = log or (lambda _m: None)
    profile = repo.cluster(cluster)
    pools = nodes.pools_for(repo, cluster)
    release = releases.release(toolchain, profile.kueue_version, log=say)
    box = Sandbox(f"replay-{label}-{os.getpid()}")
    started = time.monotonic()
    try:
        box.up(
            toolchain,
            with_kueue=True,
            kueue_config=boundaries.kueue_configuration(repo, cluster),
            node_pools=pools,
            kueue_release=release,
            log=say,
        )
        admin = box.connect()
        refused = [
            f"{r.resource.key}: {r.error}"
            for r in apply_all(admin, repo.load([cluster]).for_cluster(cluster))
            if r.error
        ]
        if refused:
            raise ConfigError(
                f"{label} ({repo.label}): the API server refused " + "; ".join(refused[:3])
            )
        _wait_active(box, admin, profile.kueue_api)
        ready = time.monotonic() - started
        say(f"replay {label}: sandbox ready after {ready:.1f}s; {len(trace.workloads)} Workloads")
        gpus = float(capacity.allocatable(pools, GPU).value)
        run = _drive(admin, profile.kueue_api, trace, speed, gpus, say, label)
        run.revision, run.sandbox_seconds, run.kueue_version = repo.label, ready, release.version
    finally:
        box.down()
    shutil.rmtree(box.dir, ignore_errors=True)  # kept, with its logs, only when the replay failed
    return run


def _wait_active(box: Sandbox, admin: KubeCluster, api: str) -> None:
    """Until Kueue has every ClusterQueue Active (work submitted before would wait for it)."""

    def active() -> bool:
        try:
            cqs = admin.list(api, "ClusterQueue")
        except ClusterAccessError:
            return False
        return bool(cqs) and all(conditions.is_true(cq, "Active") for cq in cqs)

    box.wait_until(
        "every ClusterQueue Active", time.monotonic() + ACTIVE_TIMEOUT, active, ("kueue",)
    )


def _drive(
    admin: KubeCluster,
    api: str,
    trace: Trace,
    speed: float,
    gpus: float,
    say: t.Callable[[str], None],
    label: str,
) -> SideRun:
    seen = [Observed(i, w) for i, w in enumerate(trace.workloads)]
    run = SideRun(label, "", speed, seen, {})
    start = time.monotonic()
    last = 0.0
    limit = deadline(trace, speed, gpus)
    due = 0
    while True:
        now = time.monotonic() - start
        while due < len(seen) and seen[due].traced.submitted_at / speed <= now:
            _submit(admin, seen[due], speed, time.monotonic() - start)
            due += 1
        now = time.monotonic() - start
        dt, last = now - last, now
        for wl in admin.list(api, "Workload"):
            i = _index(wl)
            if i is not None and i < len(seen):
                observe(seen[i], wl, now, dt)
        for cq in admin.list(api, "ClusterQueue"):
            run.borrowed.setdefault(cq["metadata"]["name"], []).append((now, borrowed_gpus(cq)))
        if due == len(seen) and all(s.finished is not None or s.rejected for s in seen):
            break
        if now > limit:
            run.deadline_passed = True
            say(f"replay {label}: deadline of {limit:.0f}s passed; the rest never finished")
            break
        time.sleep(max(0.0, TICK - (time.monotonic() - start - now)))
    run.seconds = time.monotonic() - start
    say(f"replay {label}: done in {run.seconds:.1f}s")
    return run


def _submit(admin: KubeCluster, seen: Observed, speed: float, at: float) -> None:
    seen.submitted = at
    try:
        admin.create(job(seen.traced, seen.index, speed))
    except ClusterAccessError as exc:
        seen.rejected = str(exc)
