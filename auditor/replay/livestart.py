"""A simulation started from a live cluster as it is now, through Kueue's own scheduler (the
simulation, testenv/kueuesim): `plan job FILE`, this Job submitted now — admitted when,
on which flavor, whom it would preempt, or why never (docs/replay.md, "This Job, now") — and
`plan replay --live`, a change merged now (auditor/replay/revisions.py, `plan_from_live`).

The start is the cluster's Workloads, read once: those admitted, holding the quota Kueue gave
them since their own admission time, each running for what remains of `run_for` (the expected run
time, given); those pending, in queue order (their creation times); then what arrives after (the
Job, or a trace's Workloads). For the Job, the objects are the live cluster's ClusterQueues,
Cohorts, ResourceFlavors, LocalQueues, priority classes and Namespaces as the API serves them;
for a change, each revision's. The Configuration is the repository's for the cluster (Kueue reads
it only at start; the live one is not on the API).
"""

from __future__ import annotations

import datetime as dt
import typing as t
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path

import yaml

from auditor.errors import ConfigError
from auditor.k8s import conditions
from auditor.k8s.objects import SCHEDULING_API
from auditor.k8s.quantity import QuantityError, parse, shown
from auditor.kueue import workloads as kueue_workloads
from auditor.kueue.workloads import PRIORITY_LABEL, QUEUE_LABEL
from auditor.model import Finding
from auditor.replay.stamp import Stamp
from auditor.replay.trace import RESOURCES, TracedWorkload
from auditor.rules import declarations

if t.TYPE_CHECKING:
    from auditor.k8s.objects import Json
    from auditor.replay.sim import SimRun

RULES = declarations.of(__name__)  # auditor/replay/rules.yaml
NOT_ADMITTED = RULES["replay-job-not-admitted"]

# What a live start reads, by API group: Kueue's kinds, then the core and scheduling ones.
KUEUE_KINDS = ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass")
OTHER_KINDS = ((SCHEDULING_API, "PriorityClass"), ("v1", "Namespace"))
KEPT_FIELDS = ("spec", "value", "description", "globalDefault", "preemptionPolicy")
JOB_NAME = "the Job"


def job_workload(path: Path, run_seconds: float) -> TracedWorkload:
    """The Workload Kueue's Job integration would make of a batch/v1 Job file."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "Job":
        raise ConfigError(f"{path}: --job takes one batch/v1 Job")
    meta = doc.get("metadata") or {}
    labels = meta.get("labels") or {}
    queue = labels.get(QUEUE_LABEL)
    if not meta.get("namespace") or not queue:
        raise ConfigError(f"{path}: the Job needs metadata.namespace and the {QUEUE_LABEL} label")
    spec = doc.get("spec") or {}
    per_pod: dict[str, Decimal] = {}
    for c in ((spec.get("template") or {}).get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        # a request, else its limit (an extended resource such as a GPU is given as a limit)
        for name, value in {**(res.get("limits") or {}), **(res.get("requests") or {})}.items():
            if name in RESOURCES:
                try:
                    amount = parse(str(value)).value
                except QuantityError as exc:
                    raise ConfigError(f"{path}: {name}: {exc}") from None
                per_pod[name] = per_pod.get(name, Decimal(0)) + amount
    requests = {r: shown(v, binary=r == "memory") for r, v in per_pod.items()}
    return TracedWorkload(
        namespace=str(meta["namespace"]),
        local_queue=str(queue),
        priority_class=labels.get(PRIORITY_LABEL),
        requests=requests,
        pod_count=int(spec.get("parallelism") or 1),
        submitted_at=0.0,
        run_seconds=run_seconds,
    )


def _time(raw: str) -> dt.datetime | None:
    return dt.datetime.fromisoformat(raw.replace("Z", "+00:00")) if raw else None


def _clean(obj: Json) -> Json:
    """An object as the simulation takes it: identity, labels and spec (no status or server
    fields, which its in-memory API would refuse on create)."""
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in ("name", "namespace", "labels") if meta.get(k)}
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": kept} | {
        k: obj[k] for k in KEPT_FIELDS if k in obj
    }


def read_objects(client: t.Any, api: str) -> list[Json]:
    """The live cluster's queueing objects, cleaned (see `_clean`)."""
    out: list[Json] = []
    for kind in KUEUE_KINDS:
        out += [_clean(o | {"apiVersion": api, "kind": kind}) for o in client.list(api, kind)]
    for api_version, kind in OTHER_KINDS:
        out += [
            _clean(o | {"apiVersion": api_version, "kind": kind})
            for o in client.list(api_version, kind)
        ]
    return out


@dataclass
class LiveStart:
    """A cluster's Workloads as a simulation's start: those holding quota first, then those
    pending, then whatever arrives after the start (`then`)."""

    names: list[str]  # the simulation's index -> namespace/name (arrivals: their own names)
    workloads: list[dict[str, t.Any]]  # as the simulator reads them
    held: int = 0  # the first `held` hold quota at the start
    pending: int = 0  # the next `pending` wait for it at the start
    read_at: str = ""  # when the cluster was read (RFC 3339)
    run_for: float = 0.0  # the run time assumed of the cluster's Workloads

    def then(self, arrivals: t.Sequence[TracedWorkload], names: t.Sequence[str]) -> LiveStart:
        """This start with Workloads arriving after it (the Job now; a trace's from now on,
        submittedAt counted from the start), indexed after the cluster's own."""
        return replace(
            self,
            names=[*self.names, *names],
            workloads=[*self.workloads, *(w.to_json() for w in arrivals)],
        )

    def summary(self) -> dict[str, t.Any]:
        """What a report says of the start (auditor/replay/stamp.py)."""
        return {
            "readAt": self.read_at,
            "admitted": self.held,
            "pending": self.pending,
            "arriving": len(self.names) - self.held - self.pending,
            "runForSeconds": self.run_for,
        }

    def at_start(self, run: SimRun) -> dict[str, list[str]]:
        """What a side did at the start's instant (0 s), by name: the Workloads it admitted
        that did not hold quota, and those it preempted (with their preemptor): the moment a
        change merged now is applied, what the real Kueue can be watched doing."""
        admitted = [
            self.names[s.index]
            for s in run.workloads
            if not s.held_at_start and any(a == 0 for a, _ in s.held)
        ]
        preempted = sorted(
            self.names[p.victim] + (f" by {self.names[p.by]}" if p.by is not None else "")
            for p in run.preemption_log
            if p.at == 0
        )
        return {"admitted": sorted(admitted), "preempted": preempted}

    def traced(self) -> list[TracedWorkload]:
        """Every Workload as a trace's, in the simulation's order: what a side's numbers are
        measured on (auditor/replay/sim.py, from_output)."""
        return [TracedWorkload.from_json(w) for w in self.workloads]


def read_start(client: t.Any, api: str, *, now: dt.datetime, run_for: float) -> LiveStart:
    """The cluster's Workloads now (one LIST) as a simulation's start (`from_live`)."""
    return from_live(client.list(api, "Workload"), now=now, run_for=run_for)


def from_live(items: t.Iterable[Json], *, now: dt.datetime, run_for: float) -> LiveStart:
    """Workloads holding quota, by their admission time (Kueue orders preemption candidates by
    it), each running for what remains of `run_for`; then those pending, by creation (their
    queue order), each for `run_for`. Finished ones and those in no LocalQueue are left out."""
    admitted: list[tuple[dt.datetime, str, dict[str, t.Any]]] = []
    pending: list[tuple[dt.datetime, str, dict[str, t.Any]]] = []
    for wl in items:
        meta = wl.get("metadata") or {}
        created = _time(str(meta.get("creationTimestamp") or ""))
        if created is None or conditions.is_true(wl, kueue_workloads.FINISHED):
            continue
        if not kueue_workloads.local_queue(wl):
            continue
        count, per_pod, _ = kueue_workloads.pod_requests(wl)
        one: dict[str, t.Any] = {
            "namespace": str(meta.get("namespace")),
            "localQueue": str(kueue_workloads.local_queue(wl)),
            "priorityClass": kueue_workloads.workload_priority_class(wl),
            "requests": {
                r: shown(v, binary=r == "memory") for r, v in per_pod.items() if r in RESOURCES
            },
            "podCount": max(count, 1),
            "submittedAt": 0.0,
            "createdAt": round((created - now).total_seconds(), 3),
        }
        name = f"{meta.get('namespace')}/{meta.get('name')}"
        reserved = _time(kueue_workloads.reserved_at(wl))
        admission = (wl.get("status") or {}).get("admission")
        if (
            reserved is not None
            and admission
            and conditions.is_true(wl, kueue_workloads.QUOTA_RESERVED)
        ):
            ran = (now - reserved).total_seconds()
            one |= {
                "admittedAt": round(-ran, 3),
                "admission": admission,
                "runSeconds": max(1.0, run_for - ran),
            }
            admitted.append((reserved, name, one))
        else:
            one["runSeconds"] = run_for
            pending.append((created, name, one))
    ordered = sorted(admitted, key=lambda x: (x[0], x[1])) + sorted(
        pending, key=lambda x: (x[0], x[1])
    )
    return LiveStart(
        [n for _, n, _ in ordered],
        [w for _, _, w in ordered],
        len(admitted),
        len(pending),
        now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        run_for,
    )


@dataclass
class Forecast:
    """What the simulation says of the Job, and what changed until it was admitted."""

    cluster: str
    release: str
    job: TracedWorkload
    admitted_at: float | None
    cluster_queue: str | None
    flavors: str | None
    victims: list[str]
    pending_reason: str | None
    changes: list[dict[str, t.Any]] = field(default_factory=list)
    stamp: Stamp | None = None  # what the simulation ran with
    section_kind: t.ClassVar[str] = "job"

    def findings(self) -> list[Finding]:
        if self.admitted_at is not None:
            return []
        why = f": {self.pending_reason}" if self.pending_reason else ""
        return [
            Finding(
                NOT_ADMITTED,
                f"the Job ({self.job.namespace}/{self.job.local_queue}) is never admitted{why}",
                cluster=self.cluster,
            )
        ]

    def to_json(self) -> dict[str, t.Any]:
        return {
            "job": {
                "cluster": self.cluster,
                "kueueVersion": self.release,
                "namespace": self.job.namespace,
                "localQueue": self.job.local_queue,
                "admittedAfterSeconds": self.admitted_at,
                "clusterQueue": self.cluster_queue,
                "flavors": self.flavors,
                "preempts": self.victims,
                "pendingReason": self.pending_reason,
                "changes": self.changes,
            }
            | ({"simulated": self.stamp.to_json()} if self.stamp else {})
        }


def forecast(
    out: dict[str, t.Any], start: LiveStart, job: TracedWorkload, *, cluster: str, release: str
) -> Forecast:
    """The simulator's output read for the Job (the last Workload)."""
    mine = len(start.names) - 1
    records = {r["index"]: r for r in out["workloads"]}
    own = records.get(mine, {"events": []})
    first = next((e for e in own["events"] if e["kind"] == "admitted"), None)
    until = first["at"] if first else None
    victims, changes = [], []
    for index in sorted(records):
        for e in records[index]["events"]:
            if until is not None and e["at"] > until:
                continue
            if until is None and e["kind"] != "preempted":
                continue
            if e["kind"] == "preempted" and e.get("by") == mine:
                victims.append(start.names[index])
            if index != mine and e["kind"] == "admitted" and e["at"] <= 0:
                continue  # what it already held at the start
            changes.append(
                {"at": e["at"], "workload": start.names[index], "kind": e["kind"]}
                | ({"by": start.names[e["by"]]} if e.get("by") is not None else {})
                | ({"flavors": e["flavors"]} if e.get("flavors") else {})
            )
    changes.sort(key=lambda c: (c["at"], c["workload"]))
    return Forecast(
        cluster=cluster,
        release=release,
        job=job,
        admitted_at=until,
        cluster_queue=first.get("clusterQueue") if first else None,
        flavors=first.get("flavors") if first else None,
        victims=sorted(victims),
        pending_reason=own.get("pendingReason"),
        changes=changes,
    )
