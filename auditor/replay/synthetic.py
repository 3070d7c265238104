"""Synthetic traces for tests, the demo and CI: the same seed gives the same trace.

Submissions follow a diurnal curve (busiest mid-afternoon, quietest before dawn, over the trace's
hours of a day starting at midnight) plus short bursts, each burst one tenant's; each tenant
gets its share of the work and a mix of its priority classes. Jobs ask for GPUs (1 or 2 per pod,
with cpu and memory in proportion) and run for a log-normal time around `median_run`.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass, field, replace

from auditor.errors import ConfigError
from auditor.replay.trace import GPU, Trace, TracedWorkload
from auditor.repo.layout import Repository

BURST_SHARE = 0.25  # of the work arrives in bursts
BURST_LENGTH = 0.03  # of the window, each
CPU_PER_GPU = 4
MEMORY_PER_GPU_GI = 32
STEPS = 1000  # the arrival curve's resolution over the window


@dataclass(frozen=True)
class TenantMix:
    """One LocalQueue's part of the work."""

    namespace: str
    local_queue: str  # "": the namespace's own, as the repository has them (`placed`)
    share: float = 1.0
    priorities: dict[str, float] = field(default_factory=dict)  # class -> weight; {}: none
    gpus: tuple[int, ...] = (1, 1, 2)  # per pod, drawn uniformly
    pods: tuple[int, ...] = (1,)


def diurnal(hour_of_day: float) -> float:
    """Relative submission rate at an hour of the day: 1.6 at 15:00, 0.4 at 03:00."""
    return 1.0 + 0.6 * math.sin((hour_of_day - 9.0) / 24.0 * 2 * math.pi)


def local_queues(repo: Repository, cluster: str) -> dict[str, list[str]]:
    """Every tenant LocalQueue of `cluster` in the repository, by namespace (names sorted)."""
    out: dict[str, list[str]] = {}
    for r in repo.load([cluster]).for_cluster(cluster):
        if r.kind == "LocalQueue" and r.tenant and r.namespace:
            out.setdefault(r.namespace, []).append(r.name)
    return {ns: sorted(names) for ns, names in sorted(out.items())}


def mixes_from(repo: Repository, cluster: str) -> list[TenantMix]:
    """Every tenant LocalQueue of `cluster` in the repository, equal shares, each with the
    workload priority classes its tenant's profile approves, equally weighted."""
    tenants = repo.tenants
    out = []
    for r in repo.load([cluster]).for_cluster(cluster):
        if r.kind != "LocalQueue" or not r.tenant or not r.namespace:
            continue
        profile = tenants.get(r.tenant)
        classes = profile.workload_priority_classes if profile else ()
        out.append(TenantMix(r.namespace, r.name, 1.0, dict.fromkeys(classes, 1.0)))
    if not out:
        raise ConfigError(f"cluster {cluster} has no tenant LocalQueue to make work for")
    return sorted(out, key=lambda m: (m.namespace, m.local_queue))


def placed(mixes: list[TenantMix], queues: dict[str, list[str]], cluster: str) -> list[TenantMix]:
    """Each mix on its namespace's own LocalQueue(s) as the repository has them (`queues`, from
    `local_queues`): a mix naming no queue goes to every one of its namespace's, its share split
    equally; a namespace or queue the cluster lacks is refused, naming what there is (work
    sent to a queue that does not exist is never admitted, which would read as a finding)."""
    out = []
    for mix in mixes:
        known = queues.get(mix.namespace)
        if not known:
            raise ConfigError(
                f"--tenant {mix.namespace}: no tenant LocalQueue in namespace {mix.namespace} on "
                f"cluster {cluster} (namespaces with one: {', '.join(queues) or 'none'})"
            )
        if mix.local_queue and mix.local_queue not in known:
            raise ConfigError(
                f"--tenant {mix.namespace}/{mix.local_queue}: namespace {mix.namespace} has no "
                f"LocalQueue {mix.local_queue} on cluster {cluster} (it has: {', '.join(known)})"
            )
        names = [mix.local_queue] if mix.local_queue else known
        out += [replace(mix, local_queue=q, share=mix.share / len(names)) for q in names]
    return out


def generate(
    cluster: str,
    mixes: list[TenantMix],
    *,
    workloads: int,
    hours: float,
    seed: int,
    bursts: int = 2,
    median_run: float = 600.0,
) -> Trace:
    if workloads < 1 or hours <= 0 or not mixes:
        raise ConfigError("a synthetic trace needs at least one workload, hours > 0 and a tenant")
    rng = random.Random(seed)
    window = hours * 3600.0
    in_bursts = round(workloads * BURST_SHARE) if bursts else 0
    times = _curve_times(rng, workloads - in_bursts, window)
    owners: list[TenantMix | None] = [None] * len(times)
    for b in range(bursts):
        start = rng.uniform(0, window * (1 - BURST_LENGTH))
        tenant = _pick(rng, mixes, [m.share for m in mixes])
        count = in_bursts // bursts + (1 if b < in_bursts % bursts else 0)
        for _ in range(count):
            times.append(start + rng.uniform(0, window * BURST_LENGTH))
            owners.append(tenant)
    out = []
    for at, owner in sorted(zip(times, owners, strict=True), key=lambda p: p[0]):
        mix = owner or _pick(rng, mixes, [m.share for m in mixes])
        out.append(_workload(rng, mix, at, median_run))
    recorded = {
        "source": "synthetic",
        "seconds": window,
        "seed": seed,
        "medianRunSeconds": median_run,
    }
    return Trace(cluster, recorded, out)


def _curve_times(rng: random.Random, count: int, window: float) -> list[float]:
    """`count` times in [0, window) drawn from the diurnal curve (inverse transform sampling)."""
    step = window / STEPS
    cumulative, total = [], 0.0
    for i in range(STEPS):
        total += diurnal(((i + 0.5) * step / 3600.0) % 24)
        cumulative.append(total)
    times = []
    for _ in range(count):
        i = bisect.bisect_left(cumulative, rng.uniform(0, total))
        times.append((min(i, STEPS - 1) + rng.random()) * step)
    return times


def _pick(rng: random.Random, items: list[TenantMix], weights: list[float]) -> TenantMix:
    return rng.choices(items, weights=weights)[0]


def _workload(rng: random.Random, mix: TenantMix, at: float, median_run: float) -> TracedWorkload:
    gpus = rng.choice(mix.gpus)
    priority = (
        rng.choices(list(mix.priorities), weights=list(mix.priorities.values()))[0]
        if mix.priorities
        else None
    )
    run = median_run * math.exp(rng.gauss(0, 0.5))
    return TracedWorkload(
        namespace=mix.namespace,
        local_queue=mix.local_queue,
        priority_class=priority,
        requests={
            "cpu": str(gpus * CPU_PER_GPU),
            "memory": f"{gpus * MEMORY_PER_GPU_GI}Gi",
            GPU: str(gpus),
        },
        pod_count=rng.choice(mix.pods),
        submitted_at=round(at, 3),
        run_seconds=round(max(60.0, min(run, 6 * median_run)), 3),
    )
