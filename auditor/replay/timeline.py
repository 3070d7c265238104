"""A replay's day as data: per LocalQueue and side, what ran, waited, was admitted and preempted.

The one function that turns a replay's Workloads into series over the trace's time (`build`):
`plan replay --timeline FILE` writes it as CSV or JSON Lines, the report carries it in its
`replay.timeline` section, and the HTML report and the pull-request comment draw their charts
from that section. Samples are taken every `step` trace seconds (at most MAX_SAMPLES over the
day): `running`, `pending` and `gpus` are the state at the sample's instant, `admitted` and
`preempted` count what happened from it to the next.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import typing as t
from dataclasses import dataclass
from pathlib import Path

from auditor.errors import ConfigError
from auditor.replay.run import SideRun
from auditor.replay.sim import SimRun
from auditor.repo.outfile import write_whole

MAX_SAMPLES = 288  # a day in five-minute steps
STEPS = (60.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 21600.0, 86400.0)
# How long admitted Workloads waited, as a distribution (upper bounds in seconds), then "never".
WAIT_BINS = (60.0, 300.0, 900.0, 3600.0, 14400.0)
WAIT_LABELS = ("< 1m", "1-5m", "5-15m", "15-60m", "1-4h", "> 4h", "never")
COLUMNS = ("time", "side", "queue", "tenant", "running", "pending", "admitted", "preempted", "gpus")
FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


@dataclass(frozen=True)
class Series:
    """One LocalQueue (namespace/name) on one side, sampled every step."""

    side: str
    queue: str
    tenant: str
    running: list[int]
    pending: list[int]
    admitted: list[int]
    preempted: list[int]
    gpus: list[float]
    cluster_queue: str | None = None  # where its Workloads were admitted (None: none was)

    def to_json(self) -> dict[str, t.Any]:
        return {
            "side": self.side,
            "queue": self.queue,
            "tenant": self.tenant,
            "clusterQueue": self.cluster_queue,
            "running": self.running,
            "pending": self.pending,
            "admitted": self.admitted,
            "preempted": self.preempted,
            "gpus": [round(g, 3) for g in self.gpus],
        }


@dataclass(frozen=True)
class Timeline:
    step: float
    times: list[float]
    series: list[Series]
    # side -> tenant -> admitted Workloads per WAIT_BINS bin, then the never admitted
    waits: dict[str, dict[str, list[int]]]
    # (side, step start, preemptor tenant, victim tenant) -> preemptions; "?" where unknown
    preemptions: dict[tuple[str, float, str, str], int]

    def rows(self) -> t.Iterator[dict[str, t.Any]]:
        """One row per sample, queue and side: COLUMNS."""
        for s in self.series:
            for i, at in enumerate(self.times):
                yield {
                    "time": at,
                    "side": s.side,
                    "queue": s.queue,
                    "tenant": s.tenant,
                    "running": s.running[i],
                    "pending": s.pending[i],
                    "admitted": s.admitted[i],
                    "preempted": s.preempted[i],
                    "gpus": round(s.gpus[i], 3),
                }

    def gpus_by_tenant(self, side: str) -> dict[str, list[float]]:
        """GPUs in use per tenant at each sample, its queues added up."""
        out: dict[str, list[float]] = {}
        for s in self.series:
            if s.side == side:
                total = out.setdefault(s.tenant, [0.0] * len(self.times))
                for i, g in enumerate(s.gpus):
                    total[i] += g
        return {k: [round(v, 3) for v in vs] for k, vs in sorted(out.items())}

    def to_json(self) -> dict[str, t.Any]:
        return {
            "stepSeconds": self.step,
            "times": self.times,
            "series": [s.to_json() for s in self.series],
            "waitBins": list(WAIT_LABELS),
            "waits": [
                {"side": side, "tenant": tenant, "counts": counts}
                for side, tenants in self.waits.items()
                for tenant, counts in sorted(tenants.items())
            ],
            "preemptions": [
                {"side": side, "at": at, "preemptor": by, "victim": victim, "count": n}
                for (side, at, by, victim), n in sorted(self.preemptions.items())
            ],
        }


def step_for(seconds: float) -> float:
    """The shortest of STEPS that samples `seconds` at most MAX_SAMPLES times."""
    return next((s for s in STEPS if seconds / s <= MAX_SAMPLES), STEPS[-1])


def _first_at_or_after(at: float, step: float) -> int:
    return math.ceil(at / step - 1e-9)


def build(
    runs: t.Mapping[str, SideRun], tenant_of: t.Mapping[str, str], seconds: float
) -> Timeline:
    """The sides' (label -> what it saw) timelines on one time axis covering `seconds` of trace
    and whatever ran past it (`tenant_of`: namespace -> tenant)."""
    end = seconds
    for run in runs.values():
        for s in run.workloads:
            for a, b in s.held:
                end = max(end, (b if b is not None else a) * run.speed)
    step = step_for(end)
    n = _first_at_or_after(end, step) + 1
    times = [i * step for i in range(n)]

    def span(diff: list[t.Any], lo: float, hi: float | None, value: float) -> None:
        """Add `value` to the samples within [lo, hi), as differences (summed up once at the
        end: a day of thousands of Workloads costs one pass, not one per sample)."""
        first = min(n, _first_at_or_after(lo, step))
        last = n if hi is None else min(n, _first_at_or_after(hi, step))
        if first < last:
            diff[first] += value
            diff[last] -= value

    def bucket(at: float) -> int:
        return min(n - 1, int(at // step))

    series: list[Series] = []
    waits: dict[str, dict[str, list[int]]] = {}
    marks: dict[tuple[str, float, str, str], int] = {}
    for label, run in runs.items():
        speed = run.speed
        by_queue: dict[str, tuple[str, list[int], list[int], list[int], list[int], list[float]]]
        by_queue = {}
        admitted_to: dict[str, str] = {}
        side_waits = waits.setdefault(label, {})

        def tenant(namespace: str) -> str:
            return tenant_of.get(namespace, namespace)

        for s in run.workloads:
            w = s.traced
            if s.rejected is not None or s.submitted is None:
                continue
            name = tenant(w.namespace)
            q = by_queue.setdefault(
                f"{w.namespace}/{w.local_queue}",
                (name, [0] * (n + 1), [0] * (n + 1), [0] * n, [0] * n, [0.0] * (n + 1)),
            )
            _, alive, running, admitted, preempted, gpus = q
            if s.cluster_queue:
                admitted_to.setdefault(f"{w.namespace}/{w.local_queue}", s.cluster_queue)
            life_end = None if s.finished is None else s.finished * speed
            span(alive, s.submitted * speed, life_end, 1)
            for a, b in s.held:
                admitted[bucket(a * speed)] += 1
                span(running, a * speed, None if b is None else b * speed, 1)
                span(gpus, a * speed, None if b is None else b * speed, s.gpus)
            for at in s.preempted_at:
                preempted[bucket(at * speed)] += 1
            counts = side_waits.setdefault(name, [0] * len(WAIT_LABELS))
            if s.held_at_start:
                pass  # admitted before a live start: no wait to count
            elif s.admitted is None:
                counts[-1] += 1
            else:
                wait = (s.admitted - s.submitted) * speed
                counts[next((i for i, b in enumerate(WAIT_BINS) if wait < b), len(WAIT_BINS))] += 1
        for queue, (name, alive_d, running_d, admitted, preempted, gpus_d) in sorted(
            by_queue.items()
        ):
            alive = list(itertools.accumulate(alive_d[:n]))
            running = list(itertools.accumulate(running_d[:n]))
            gpus = [round(g, 6) for g in itertools.accumulate(gpus_d[:n])]
            pending = [max(0, a - r) for a, r in zip(alive, running, strict=True)]
            series.append(
                Series(
                    label,
                    queue,
                    name,
                    running,
                    pending,
                    admitted,
                    preempted,
                    gpus,
                    admitted_to.get(queue),
                )
            )
        if isinstance(run, SimRun):
            for p in run.preemption_log:
                by = "?" if p.by is None else tenant(run.workloads[p.by].traced.namespace)
                victim = tenant(run.workloads[p.victim].traced.namespace)
                key = (label, bucket(p.at) * step, by, victim)
                marks[key] = marks.get(key, 0) + 1
        else:
            for s in run.workloads:
                for at in s.preempted_at:
                    key = (label, bucket(at * speed) * step, "?", tenant(s.traced.namespace))
                    marks[key] = marks.get(key, 0) + 1
    return Timeline(step, times, series, waits, marks)


def format_of(path: Path) -> str:
    """csv or jsonl, by the file's extension; anything else is a usage error (exit 2)."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(
            f"--timeline {path}: name a .csv or .jsonl (JSON Lines) file, not {path.suffix or '?'}"
        )
    return fmt


def write(timeline: Timeline, path: Path) -> None:
    """The timeline's rows (COLUMNS) as CSV or JSON Lines, by `path`'s extension."""
    fmt = format_of(path)
    out = io.StringIO(newline="")
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(timeline.rows())
    else:
        for row in timeline.rows():
            out.write(json.dumps(row) + "\n")
    write_whole(path, out.getvalue(), what="the timeline")
