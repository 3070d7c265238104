"""`plan sweep`: traces through Kueue's own scheduler (the simulation) on every point of a
grid of alternatives to a revision, toward a target; the frontier, and the smallest change that
meets the target (docs/replay.md, "Sweeps toward a target").

A grid is a list of axes, each one field of one ClusterQueue or Cohort with the values to try: a
quota cell (`flavor`, `resource`, `field`: nominalQuota, borrowingLimit or lendingLimit), or a
field under `spec` by its dotted path (`preemption.reclaimWithinCohort`, `fairSharing.weight`).
Every combination is simulated, independent of the others, on the engine the caller chose
(the parallel seam's: the local cores by default, a Ray cluster with `--on ray`). A change's
size is the sum over the axes of how far the value moved from the revision's (a quantity's
difference in its unit; 1 for any other changed value): the smallest that meets the target
wins; of equal sizes the shortest p95 wait, then the fewest preemptions, then the grid's first
(CHOICE), which is always a point of the frontier. The same revision, traces and grid give
the same bytes.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from auditor.errors import ConfigError
from auditor.k8s.objects import Json
from auditor.k8s.quantity import parse
from auditor.kueue.quota import QUOTA_FIELDS
from auditor.model import Finding
from auditor.replay.capacity import node_capacity, profile_capacity
from auditor.replay.measured import summarize
from auditor.replay.sides import Side
from auditor.replay.sim import SimRun, SimSide, from_output, outcome, program, sim_input
from auditor.replay.stamp import Stamp, assumed, stamp
from auditor.replay.trace import Trace
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.rules import declarations
from auditor.speed import parallel

RULES = declarations.of(__name__)  # auditor/replay/rules.yaml
UNMET = RULES["replay-sweep-target-unmet"]

MAX_POINTS = 256  # a grid beyond this is a mistake more often than a plan


@dataclass(frozen=True)
class Axis:
    kind: str  # ClusterQueue or Cohort
    name: str
    field: str
    values: tuple[str, ...]
    flavor: str | None = None
    resource: str | None = None

    @property
    def label(self) -> str:
        cell = f" {self.flavor}/{self.resource}" if self.flavor else ""
        return f"{self.name}{cell} {self.field}"


@dataclass(frozen=True)
class Target:
    """What a point must meet: a tenant's p95 wait at most `p95_wait` seconds, at most
    `preemptions` preemptions in all, no livelock unless allowed, nothing never admitted."""

    tenant: str | None = None
    p95_wait: float | None = None
    preemptions: int | None = None
    livelock: bool = False

    def to_json(self) -> dict[str, t.Any]:
        return {
            "tenant": self.tenant,
            "p95WaitSeconds": self.p95_wait,
            "preemptions": self.preemptions,
            "livelockAllowed": self.livelock,
        }

    def said(self, wait: t.Callable[[float], str] = lambda seconds: f"{seconds:g} s") -> str:
        """The target in words (`wait` spells the p95 wait: a finding in seconds, a report as a
        duration)."""
        parts = []
        if self.p95_wait is not None:
            parts.append(f"{self.tenant}'s p95 wait <= {wait(self.p95_wait)}")
        if self.preemptions is not None:
            parts.append(f"preemptions <= {self.preemptions}")
        if not self.livelock:
            parts.append("no livelock")
        return ", ".join([*parts, "nothing never admitted"])


@dataclass(frozen=True)
class Spec:
    axes: list[Axis]
    target: Target
    traces: list[Path] = field(default_factory=list)  # more days, beside --replay's


def read_spec(path: Path) -> Spec:
    """The grid and target of a sweep file; a clear error naming the file and entry."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("grid"), list) or not doc["grid"]:
        raise ConfigError(f"{path}: a sweep needs `grid:`, a list of axes")
    axes = []
    for i, raw in enumerate(doc["grid"]):
        where = f"{path}: grid[{i}]"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: an axis is a mapping")
        kind = "Cohort" if "cohort" in raw else "ClusterQueue"
        name = raw.get("cohort") or raw.get("clusterQueue")
        values = raw.get("values")
        if not isinstance(name, str) or not isinstance(raw.get("field"), str):
            raise ConfigError(f"{where}: name a clusterQueue (or cohort) and a field")
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{where}: values must be a non-empty list")
        quota = raw["field"] in QUOTA_FIELDS
        if quota and not (
            isinstance(raw.get("flavor"), str) and isinstance(raw.get("resource"), str)
        ):
            raise ConfigError(f"{where}: a quota field ({raw['field']}) needs flavor and resource")
        axes.append(
            Axis(
                kind,
                name,
                raw["field"],
                tuple(str(v) for v in values),
                raw.get("flavor") if quota else None,
                raw.get("resource") if quota else None,
            )
        )
    goal = doc.get("target") or {}
    if not isinstance(goal, dict):
        raise ConfigError(f"{path}: target must be a mapping")
    target = Target(
        tenant=goal.get("tenant"),
        p95_wait=None if goal.get("p95WaitSeconds") is None else float(goal["p95WaitSeconds"]),
        preemptions=None if goal.get("preemptions") is None else int(goal["preemptions"]),
        livelock=bool(goal.get("livelockAllowed", False)),
    )
    if target.p95_wait is not None and not target.tenant:
        raise ConfigError(f"{path}: target.p95WaitSeconds needs target.tenant")
    points = 1
    for a in axes:
        points *= len(a.values)
    if points > MAX_POINTS:
        raise ConfigError(f"{path}: {points} points; a sweep runs at most {MAX_POINTS}")
    days = doc.get("traces") or []
    if not isinstance(days, list) or not all(isinstance(d, str) for d in days):
        raise ConfigError(f"{path}: traces must be a list of trace files")
    return Spec(axes, target, [path.parent / d for d in days])


def _body(objects: list[dict[str, t.Any]], axis: Axis) -> dict[str, t.Any]:
    for obj in objects:
        if obj.get("kind") == axis.kind and (obj.get("metadata") or {}).get("name") == axis.name:
            return obj
    raise ConfigError(f"the sweep's {axis.kind} {axis.name} is not on the cluster")


def _slot(body: dict[str, t.Any], axis: Axis) -> tuple[dict[str, t.Any], str]:
    """The mapping holding the axis's field in `body`, and the key."""
    spec = body.setdefault("spec", {})
    if axis.flavor is None:
        *path, key = axis.field.split(".")
        here = spec
        for part in path:
            here = here.setdefault(part, {})
        return here, key
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            if flavor.get("name") != axis.flavor:
                continue
            for resource in flavor.get("resources") or []:
                if resource.get("name") == axis.resource:
                    return resource, axis.field
    raise ConfigError(f"{axis.kind} {axis.name} has no quota for {axis.flavor}/{axis.resource}")


def current(objects: list[dict[str, t.Any]], axis: Axis) -> str | None:
    here, key = _slot(copy.deepcopy(_body(objects, axis)), axis)
    value = here.get(key)
    return None if value is None else str(value)


def applied(
    objects: list[dict[str, t.Any]], axes: list[Axis], values: tuple[str, ...]
) -> list[dict[str, t.Any]]:
    out = copy.deepcopy(objects)
    for axis, value in zip(axes, values, strict=True):
        here, key = _slot(_body(out, axis), axis)
        here[key] = _typed(value)
    return out


def _typed(value: str) -> t.Any:
    """A value as YAML would have read it (a weight or threshold is a number; a quota a string)."""
    try:
        return int(value)
    except ValueError:
        return value


def distance(now: str | None, value: str) -> float:
    if now == value:
        return 0.0
    try:
        return abs(float(parse(value).value) - float(parse(now or "0").value))
    except (ValueError, ArithmeticError):
        return 1.0


@dataclass
class Point:
    values: tuple[str, ...]
    change: float
    p95_wait: float | None
    preemptions: int
    livelocks: int
    never_admitted: int
    meets: bool = False
    frontier: bool = False
    over: tuple[str, ...] = ()  # what its quotas promise beyond what the nodes hold

    @property
    def feasible(self) -> bool:
        """Whether the nodes hold every quota the point sets (else it cannot be what it
        simulated: admitted work would wait for nodes)."""
        return not self.over

    def to_json(self, axes: list[Axis]) -> dict[str, t.Any]:
        return {
            "values": {a.label: v for a, v in zip(axes, self.values, strict=True)},
            "change": round(self.change, 3),
            "p95WaitSeconds": None if self.p95_wait is None else round(self.p95_wait, 1),
            "preemptions": self.preemptions,
            "livelocks": self.livelocks,
            "neverAdmitted": self.never_admitted,
            "meets": self.meets,
            "frontier": self.frontier,
            "feasible": self.feasible,
            "overCapacity": list(self.over),
        }


def measure(
    side: Side, livelocks: int, target: Target, never: int
) -> tuple[float | None, int, int, int]:
    """A day of a point: the target tenant's p95 wait (else the worst tenant's), preemptions,
    livelocks, and `never`: its Workloads never admitted but those no point admits."""
    group = side.tenant(target.tenant) if target.tenant else None
    p95 = group.wait_p95 if group else max((g.wait_p95 or 0.0 for g in side.tenants), default=0.0)
    return p95, side.preemptions, livelocks, never


@dataclass(frozen=True)
class Apart:
    """Workloads of one LocalQueue that no point of the sweep admits, on any day, with Kueue's
    last word on why (of the grid's first point): no value of the grid changes them, so they
    are reported apart and not counted against the target."""

    namespace: str
    local_queue: str
    workloads: int
    reason: str

    def to_json(self) -> dict[str, t.Any]:
        return {
            "namespace": self.namespace,
            "localQueue": self.local_queue,
            "workloads": self.workloads,
            "reason": self.reason,
        }


def never_anywhere(runs: list[list[SimRun]]) -> list[set[int]]:
    """Per day, the Workloads (trace indices) that no point admits (`runs[point][day]`)."""
    days = len(runs[0]) if runs else 0
    out = []
    for d in range(days):
        never = [{s.index for s in point[d].workloads if s.admitted is None} for point in runs]
        out.append(set.intersection(*never))
    return out


def apart(runs: list[list[SimRun]], never: list[set[int]]) -> list[Apart]:
    """The Workloads no point admits, counted by LocalQueue and reason over the days."""
    counts: dict[tuple[str, str, str], int] = {}
    for d, indices in enumerate(never):
        first = runs[0][d]
        for i in sorted(indices):
            s = first.workloads[i]
            why = first.pending_reasons.get(i) or s.rejected or "no reason given"
            key = (s.traced.namespace, s.traced.local_queue, why)
            counts[key] = counts.get(key, 0) + 1
    return [Apart(ns, q, n, why) for (ns, q, why), n in sorted(counts.items())]


def meets(p: Point, target: Target) -> bool:
    return (
        p.feasible
        and p.never_admitted == 0
        and (target.p95_wait is None or (p.p95_wait is not None and p.p95_wait <= target.p95_wait))
        and (target.preemptions is None or p.preemptions <= target.preemptions)
        and (target.livelock or p.livelocks == 0)
    )


def merit(p: Point) -> tuple[float, float, int, int, int]:
    """What makes a point better, smaller first: its change, its p95 wait, its preemptions, its
    livelocks and its Workloads never admitted."""
    wait = float("inf") if p.p95_wait is None else p.p95_wait
    return (p.change, wait, p.preemptions, p.livelocks, p.never_admitted)


def mark_frontier(points: list[Point]) -> None:
    """A point is on the frontier when the nodes hold its quotas and no other such point is at
    least as good in every `merit` and better in one. (Livelocks and never-admitted count too, so
    that a point meeting the target is never beaten by one that fails it.)"""
    feasible = [p for p in points if p.feasible]
    for p in feasible:
        k = merit(p)
        p.frontier = not any(
            all(a <= b for a, b in zip(merit(q), k, strict=True)) and merit(q) != k
            for q in feasible
        )


# How the recommendation is chosen, as the report states it.
CHOICE = (
    "of the points meeting the target, the smallest change; among changes of the same size the "
    "shortest p95 wait, then the fewest preemptions, then the grid's first"
)


def recommended(points: list[Point]) -> Point | None:
    """The point CHOICE names. Being the least by `merit` among those meeting the target (and
    meeting is kept by any point at least as good), it is on the frontier."""
    meeting = [p for p in points if p.meets]
    return min(meeting, key=merit) if meeting else None  # min keeps the grid's first of equals


@dataclass
class Sweep:
    cluster: str
    revision: str
    release: str
    axes: list[Axis]
    now: list[str | None]
    target: Target
    workloads: int
    points: list[Point] = field(default_factory=list)
    stamp: Stamp | None = None  # what the simulation ran with (the grid changes no setting)
    days: int = 1  # traces simulated per point
    apart: list[Apart] = field(default_factory=list)  # never admitted at any point
    capacity: str = ""  # where what the nodes hold was read
    section_kind: t.ClassVar[str] = "sweep"
    chosen_as: t.ClassVar[str] = CHOICE  # how `best` is chosen, for the report to state

    @property
    def best(self) -> Point | None:
        return recommended(self.points)

    def findings(self) -> list[Finding]:
        if self.best is not None:
            return []
        return [
            Finding(
                UNMET,
                f"no point of the {len(self.points)}-point grid meets the target "
                f"({self.target.said()})" + self.beyond_nodes(),
                cluster=self.cluster,
            )
        ]

    def beyond_nodes(self) -> str:
        """When no point meets the target: how many would on more nodes than there are."""
        would = sum(
            not p.feasible and meets(dataclasses.replace(p, over=()), self.target)
            for p in self.points
        )
        return f"; {would} would on more nodes than {self.capacity} holds" if would else ""

    def to_json(self) -> dict[str, t.Any]:
        best = self.best
        return {
            "sweep": {
                "cluster": self.cluster,
                "revision": self.revision,
                "kueueVersion": self.release,
                "workloads": self.workloads,
                "days": self.days,
                "axes": [_axis(a, now) for a, now in zip(self.axes, self.now, strict=True)],
                "target": self.target.to_json(),
                "points": [p.to_json(self.axes) for p in self.points],
                "best": None if best is None else best.to_json(self.axes),
                "bestChosenAs": self.chosen_as,
                "neverAdmittedAnywhere": [a.to_json() for a in self.apart],
                "capacity": self.capacity,
            }
            | ({"simulated": self.stamp.to_json()} if self.stamp else {})
        }


def _axis(a: Axis, now: str | None) -> dict[str, t.Any]:
    cell = {"flavor": a.flavor, "resource": a.resource} if a.flavor else {}
    return (
        {"label": a.label, "kind": a.kind, "name": a.name, "field": a.field}
        | cell
        | {
            "now": now,
            "values": list(a.values),
        }
    )


def each(sides: list[SimSide], within: float, engine: parallel.Engine) -> list[dict[str, t.Any]]:
    """Every point's simulation on `engine`, in the points' order; wherever a run went, its
    output is read here alike."""
    done = engine.programs([program(side, within) for side in sides])
    return [outcome(side, within, end)[0] for side, end in zip(sides, done, strict=True)]


def sweep(
    repo: Repository,
    cluster: str,
    traces: list[Trace],
    spec: Spec,
    *,
    binary: Path,
    release: str,
    tenant_of: t.Mapping[str, str],
    within: float,
    engine: parallel.Engine | None = None,
    nodes: list[Json] | None = None,
) -> Sweep:
    """Every point of the grid on `repo` (a revision, open now), simulated on every trace (a
    day each): a point's p95 wait is its worst day's, its preemptions, livelocks and Workloads
    never admitted the days' sum. Workloads no point admits are reported apart, not counted. A
    point whose quotas the nodes cannot hold (the profile's capacity, or the live `nodes` when
    given) is infeasible. The simulations run on `engine` (default: the local cores)."""
    docs = [sim_input(repo, cluster, trace) for trace in traces]
    objects: list[dict[str, t.Any]] = docs[0]["objects"]
    now = [current(objects, a) for a in spec.axes]
    grid = list(itertools.product(*(a.values for a in spec.axes)))
    sides = [
        SimSide(
            f"point {i} day {d}",
            repo.label,
            cluster,
            binary,
            release,
            json.dumps(doc | {"objects": applied(objects, spec.axes, values)}),
        )
        for i, values in enumerate(grid)
        for d, doc in enumerate(docs)
    ]
    workloads = sum(len(trace.workloads) for trace in traces)
    result = Sweep(cluster, repo.label, release, spec.axes, now, spec.target, workloads)
    result.days = len(traces)
    held = profile_capacity(repo.cluster(cluster)) if nodes is None else node_capacity(
        cluster, objects, nodes
    )  # fmt: skip
    result.capacity = held.source
    config = boundaries.kueue_configuration(repo, cluster) or {}
    outs = each(sides, within, engine or parallel.Local())
    inputs = assumed(traces, capacity=f"what the nodes hold: {held.source}")
    result.stamp = stamp(outs[0].get("simulated"), release, config, inputs=inputs) if outs else None
    runs = [
        [from_output(outs[i * len(traces) + d], day, label="point", revision=repo.label)
         for d, day in enumerate(traces)]
        for i in range(len(grid))
    ]  # fmt: skip
    never = never_anywhere(runs)
    result.apart = apart(runs, never)
    for values, days in zip(grid, runs, strict=True):
        change = sum(distance(n, v) for n, v in zip(now, values, strict=True))
        over = held.over(applied(objects, spec.axes, values))
        result.points.append(_point(values, change, days, never, tenant_of, spec.target, over))
    mark_frontier(result.points)
    return result


def _point(
    values: tuple[str, ...],
    change: float,
    days: list[SimRun],
    never: list[set[int]],
    tenant_of: t.Mapping[str, str],
    target: Target,
    over: tuple[str, ...] = (),
) -> Point:
    """One point's numbers over its days, judged against the target."""
    measured = [
        measure(
            summarize(run, tenant_of),
            len(run.livelocks),
            target,
            sum(s.admitted is None and s.index not in never[d] for s in run.workloads),
        )
        for d, run in enumerate(days)
    ]
    waits = [w for w, _, _, _ in measured]
    point = Point(
        values,
        change,
        None if None in waits else max(t.cast(list[float], waits)),
        sum(m[1] for m in measured),
        sum(m[2] for m in measured),
        sum(m[3] for m in measured),
        over=over,
    )
    point.meets = meets(point, target)
    return point
