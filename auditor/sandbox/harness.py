"""Kueue's own scheduler performance harness, read from the pinned release's module.

Kueue ships, in its module, `test/performance/scheduler/configs/<name>/generator.yaml` (cohorts of
ClusterQueues, each with sets of Workloads created at an interval) and `rangespec.yaml` (what a
run must stay within: wall time, each queue class's usage, each Workload class's mean time to
admission). Both are read here at run time (releases.source finds the module); the estate is
made of them by auditor/onboard/harness.py, the trace by auditor/replay/harness.py.

What the harness's generator (runner/generator/generator.go) does, and is mirrored here: one
ResourceFlavor `rf`; per queue a ClusterQueue `<class>-<set>-<i>-<cohort>` with quota on cpu
(nominal, borrowingLimit) and two preemption policies, and a Namespace and a LocalQueue of the
same name; each Workload set submits its k-th Workload (from 1) k x its interval after its
queue is made, one pod of `request` cpu running `runtimeMs` once admitted, at an integer
priority. The harness makes its queues concurrently through the API server; here every queue
starts at 0. TAS configurations (a `topology`) are refused: the trace has no topology requests.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass
from pathlib import Path

import yaml

from auditor.errors import ConfigError
from auditor.kueue import quota

CONFIGS = Path("test/performance/scheduler/configs")
FLAVOR = "rf"  # the generator's default ResourceFlavor (defaultResourceFlavorName)
RESOURCE = "cpu"  # what its queues' quota and its Workloads' requests are in


@dataclass(frozen=True)
class WorkloadClass:
    name: str
    priority: int
    request: str
    runtime_ms: int


@dataclass(frozen=True)
class Queue:
    name: str  # ClusterQueue, Namespace and LocalQueue alike
    cohort: str
    nominal: str
    borrowing_limit: str | None
    reclaim_within_cohort: str | None
    within_cluster_queue: str | None


@dataclass(frozen=True)
class Submission:
    queue: str
    klass: WorkloadClass
    at_ms: int


@dataclass(frozen=True)
class Harness:
    name: str
    release: str
    folder: Path
    queues: list[Queue]
    classes: dict[str, WorkloadClass]
    submissions: list[Submission]
    rangespec: dict[str, t.Any]

    def expected_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.submissions:
            counts[s.klass.name] = counts.get(s.klass.name, 0) + 1
        return counts


def available(module: Path) -> list[str]:
    """The harness configurations a Kueue module ships (TAS ones included: `load` refuses them)."""
    folder = module / CONFIGS
    return sorted(p.name for p in folder.iterdir() if (p / "generator.yaml").is_file())


def load(module: Path, name: str, release: str) -> Harness:
    folder = module / CONFIGS / name
    generator = folder / "generator.yaml"
    if not generator.is_file():
        known = ", ".join(available(module)) if (module / CONFIGS).is_dir() else "none"
        raise ConfigError(
            f"Kueue {release} has no performance harness configuration {name!r} (it has: {known})"
        )
    config = _yaml(generator)
    if config.get("topology"):
        raise ConfigError(f"{generator}: a TAS configuration (topology): not imported")
    rangespec = _yaml(folder / "rangespec.yaml") if (folder / "rangespec.yaml").is_file() else {}
    queues: list[Queue] = []
    classes: dict[str, WorkloadClass] = {}
    submissions: list[Submission] = []
    for cohort_set in _list(config, "cohorts", generator):
        for c in range(int(cohort_set.get("count", 0))):
            cohort = f"{cohort_set['className']}-{c}"
            for set_index, queue_set in enumerate(_list(cohort_set, "queuesSets", generator)):
                for q in range(int(queue_set.get("count", 0))):
                    queue = _queue(queue_set, set_index, q, cohort)
                    queues.append(queue)
                    for wl_set in _list(queue_set, "workloadsSets", generator):
                        submissions += _submissions(wl_set, queue.name, classes, generator)
    submissions.sort(key=lambda s: s.at_ms)  # stable: queue order within one instant
    return Harness(name, release, folder, queues, classes, submissions, rangespec)


def _queue(queue_set: dict[str, t.Any], set_index: int, q: int, cohort: str) -> Queue:
    limit = queue_set.get(quota.BORROWING)
    return Queue(
        name=f"{queue_set['className']}-{set_index}-{q}-{cohort}",
        cohort=cohort,
        nominal=str(queue_set[quota.NOMINAL]),
        borrowing_limit=None if limit is None else str(limit),
        reclaim_within_cohort=queue_set.get("reclaimWithinCohort"),
        within_cluster_queue=queue_set.get("withinClusterQueue"),
    )


def _submissions(
    wl_set: dict[str, t.Any], queue: str, classes: dict[str, WorkloadClass], source: Path
) -> list[Submission]:
    interval = int(wl_set.get("creationIntervalMs", 0))
    templates = []
    for w in _list(wl_set, "workloads", source):
        if int(w.get("podCount") or 1) != 1 or w.get("tasLevel"):
            raise ConfigError(f"{source}: class {w['className']}: more than one pod or TAS")
        klass = WorkloadClass(
            w["className"], int(w.get("priority", 0)), str(w["request"]), int(w["runtimeMs"])
        )
        if classes.setdefault(klass.name, klass) != klass:
            raise ConfigError(
                f"{source}: Workload class {klass.name} is given two shapes; a class here is "
                "one priority, request and run time"
            )
        templates.append(klass)
    out, k = [], 0
    for _ in range(int(wl_set.get("count", 0))):
        for klass in templates:  # the generator waits the interval before each one
            k += 1
            out.append(Submission(queue, klass, k * interval))
    return out


def _yaml(path: Path) -> dict[str, t.Any]:
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: not a mapping")
    return doc


def _list(doc: dict[str, t.Any], key: str, source: Path) -> list[dict[str, t.Any]]:
    found = doc.get(key) or []
    if not isinstance(found, list) or not all(isinstance(i, dict) for i in found):
        raise ConfigError(f"{source}: {key} is not a list of mappings")
    return found
